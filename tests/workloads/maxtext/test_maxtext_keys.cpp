// Every MaxText key classified once (workloads/maxtext/keys.h), and what the
// loader does with each class: unknown and unmodelled keys are located
// errors with the nearest known key, ignored ones are listed, base.yml's
// defaults fill what the config and the model file leave out.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "maxtext_fixture.h"
#include "workloads/maxtext/keys.h"

namespace test_maxtext_keys {

using maxtext_fixture::error_of;
using maxtext_fixture::load;
using workloads::KeyClass;

namespace {

const workloads::ListedKey* listed(const std::vector<workloads::ListedKey>& list, const std::string& key) {
  for (const auto& k : list)
    if (k.key == key) return &k;
  return nullptr;
}

}  // namespace

TEST_CASE("maxtext keys: every key of MaxText's base.yml at the recipe commits is classified", "[maxtext][keys]") {
  // tests/data/maxtext/base-keys.txt: the keys as MaxText's files list them.
  std::ifstream in(std::string(TPUSIM_SOURCE_DIR) + "/tests/data/maxtext/base-keys.txt");
  REQUIRE(in);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    INFO(line);
    CHECK(workloads::maxtext_keys().find(line) != nullptr);
    ++n;
  }
  CHECK(n == 405);
  // Every modelled key reads its value; the others have a reason.
  for (const auto& k : workloads::maxtext_keys().keys()) {
    INFO(k.name);
    CHECK(!k.meaning.empty());
    CHECK((k.cls == KeyClass::modelled) == static_cast<bool>(k.read));
  }
}

TEST_CASE("maxtext keys: configs/maxtext/base.yml gives every modelled key a default", "[maxtext][keys]") {
  // The keys tpusim reads all come from base.yml unless the model file or the config sets them;
  // model_name (MaxText's "default") and tpusim's own allow_unmodelled are the two left out.
  const auto base = sim::YamlNode::load_file(std::string(TPUSIM_SOURCE_DIR) + "/configs/maxtext/base.yml");
  const auto keys = base.keys();
  for (const auto& k : workloads::maxtext_keys().names(KeyClass::modelled)) {
    INFO(k);
    const bool given = std::find(keys.begin(), keys.end(), k) != keys.end();
    CHECK(given == (k != "model_name" && k != "allow_unmodelled"));
  }
}

TEST_CASE("maxtext keys: every shipped model file loads with no unmodelled key", "[maxtext][keys]") {
  std::size_t n = 0;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(TPUSIM_SOURCE_DIR) + "/configs/maxtext/models")) {
    const std::string name = e.path().stem().string();
    DYNAMIC_SECTION(name) {
      const auto cfg = load("{model_name: " + name + ", per_device_batch_size: 1}", 8);
      CHECK(cfg.approximations.empty());
      CHECK(cfg.model.num_decoder_layers > 0);
    }
    ++n;
  }
  CHECK(n == 40);
}

TEST_CASE("maxtext keys: describe() documents every key with its class", "[maxtext][keys]") {
  // What `tpusim explain maxtext` will print: one entry per key, in the table's order.
  const auto d = workloads::maxtext_keys().describe();
  REQUIRE(d["params"].size() == workloads::maxtext_keys().keys().size());
  std::size_t modelled = 0, unmodelled = 0;
  for (const auto& p : d["params"]) {
    modelled += p["class"] == "modelled" ? 1 : 0;
    unmodelled += p["class"] == "unmodelled" ? 1 : 0;
    if (p["class"] != "unmodelled") CHECK_FALSE(p.contains("neutral"));
  }
  CHECK(modelled == workloads::maxtext_keys().names(KeyClass::modelled).size());
  CHECK(unmodelled == workloads::maxtext_keys().names(KeyClass::unmodelled).size());
  CHECK(d["params"][0]["name"] == "model_name");
}

TEST_CASE("maxtext keys: an unknown key is located at the key with the near miss", "[maxtext][keys]") {
  const auto e = error_of("{model_name: mistral-7b, per_device_batch_sise: 6}", 8);
  CHECK(e.key_path() == "config.per_device_batch_sise");
  CHECK(e.where().file == "maxtext-test.yaml");
  CHECK(e.where().line == 1);
  CHECK(e.where().column == 34);
  CHECK(e.detail().rfind("unknown MaxText key 'per_device_batch_sise'; did you mean 'per_device_batch_size'?", 0) == 0);
}

TEST_CASE("maxtext keys: an unmodelled key is an error naming it, unless allow_unmodelled", "[maxtext][keys]") {
  const auto e = error_of("{model_name: mistral-7b, matmul_precision: highest}", 8);
  CHECK(e.key_path() == "config.matmul_precision");
  CHECK(e.where().column == 34);
  CHECK(e.detail().find("'matmul_precision' changes performance in a way tpusim does not model") == 0);
  CHECK(e.detail().find("allow_unmodelled: true") != std::string::npos);
  // The nearest modelled key is named when there is one.
  const auto tiles = error_of("{tile_weight_dim: 512}", 8);
  CHECK(tiles.detail().find("the nearest modelled key: did you mean 'tile_embed_dim'?") != std::string::npos);

  const auto cfg = load("{model_name: mistral-7b, matmul_precision: highest, allow_unmodelled: true}", 8);
  const auto* a = listed(cfg.approximations, "matmul_precision");
  REQUIRE(a);
  CHECK(a->value == "highest");
  CHECK(a->where == "maxtext-test.yaml:1:52");
}

TEST_CASE("maxtext keys: an unmodelled key at base.yml's value changes nothing and is listed as ignored",
          "[maxtext][keys]") {
  const auto cfg = load("{scan_layers: True, matmul_precision: default, dropout_rate: 0, subslice_shape: ''}", 8);
  CHECK(cfg.approximations.empty());
  for (const char* k : {"scan_layers", "matmul_precision", "dropout_rate", "subslice_shape"})
    CHECK(listed(cfg.ignored_keys, k));
  // A list-valued unmodelled key has no neutral value.
  CHECK(error_of("{mesh_axes: [data, fsdp]}", 8).key_path() == "config.mesh_axes");
}

TEST_CASE("maxtext keys: ignored keys are listed with their reason", "[maxtext][keys]") {
  const auto cfg = load("{run_name: x, steps: 20, learning_rate: 1.e-4, enable_checkpointing: false}", 8);
  for (const char* k : {"run_name", "steps", "learning_rate", "enable_checkpointing"}) {
    const auto* l = listed(cfg.ignored_keys, k);
    REQUIRE(l);
    CHECK(!l->why.empty());
  }
  CHECK(listed(cfg.ignored_keys, "steps")->value == "20");
}

TEST_CASE("maxtext keys: a model file's ignored keys are listed by the file's name", "[maxtext][keys]") {
  // gemma3-12b.yml line 27:
  // normalization_layer_epsilon: 1e-6.
  const auto cfg = load("{model_name: gemma3-12b, per_device_batch_size: 1}", 8);
  const auto* eps = listed(cfg.ignored_keys, "normalization_layer_epsilon");
  REQUIRE(eps);
  CHECK(eps->value == "1e-6");
  CHECK(eps->where == "gemma3-12b.yml:27:30");
}

TEST_CASE("maxtext keys: base.yml's defaults fill what is not given", "[maxtext][keys]") {
  // base.yml at 50bafeb: per_device_batch_size 12.0, max_target_length 2048, weight_dtype float32,
  // dtype bfloat16, mu_dtype "" (= weight_dtype), remat_policy full, megablox and sparse_matmul true,
  // capacity_factor -1, sa_block_* 512, 2048 x 16 heads of 128 x 16 layers, vocab 32000.
  const auto cfg = load("{}", 8);
  CHECK(cfg.per_device_batch_size == 12.0);
  CHECK(cfg.max_target_length == 2048);
  CHECK(cfg.weight_dtype == workloads::MaxTextDtype::float32);
  CHECK(cfg.dtype == workloads::MaxTextDtype::bfloat16);
  CHECK(cfg.mu_dtype == workloads::MaxTextDtype::float32);
  CHECK(cfg.remat_policy == workloads::RematPolicy::full);
  CHECK(cfg.moe.megablox);
  CHECK(cfg.moe.sparse_matmul);
  CHECK(cfg.moe.capacity_factor == -1.0);
  CHECK(cfg.splash.q == 512);
  CHECK(cfg.splash.kv_dq == 512);
  CHECK(cfg.model.emb_dim == 2048);
  CHECK(cfg.model.num_query_heads == 16);
  CHECK(cfg.model.num_decoder_layers == 16);
  CHECK(cfg.model.vocab_size == 32000);
  CHECK(cfg.global_batch() == 96);  // 12 x 8
  // mu_dtype follows weight_dtype when not given.
  CHECK(load("{weight_dtype: bfloat16}", 8).mu_dtype == workloads::MaxTextDtype::bfloat16);
  CHECK(load("{weight_dtype: bfloat16, mu_dtype: float32}", 8).mu_dtype == workloads::MaxTextDtype::float32);
}

TEST_CASE("maxtext keys: global_parameter_scale doubles heads and MLP, then embedding, then layers",
          "[maxtext][keys]") {
  // pyconfig.py get_individual_scales: scale 8 = 2^3 doubles each once; scale 4 = 2^2 doubles heads,
  // MLP and embedding; scale 2 heads and MLP only.
  const auto s8 = load("{global_parameter_scale: 8}", 8).model;
  CHECK(s8.emb_dim == 4096);
  CHECK(s8.num_query_heads == 32);
  CHECK(s8.mlp_dim == 14336);
  CHECK(s8.num_decoder_layers == 32);
  const auto s2 = load("{global_parameter_scale: 2}", 8).model;
  CHECK(s2.emb_dim == 2048);
  CHECK(s2.num_query_heads == 32);
  CHECK(s2.num_decoder_layers == 16);
  CHECK(error_of("{global_parameter_scale: 3}", 8).detail() == "global_parameter_scale must be a power of 2, got 3");
}

TEST_CASE("maxtext keys: a key the model file sets too is refused unless override_model_config", "[maxtext][keys]") {
  const auto e = error_of("{model_name: mistral-7b, base_num_decoder_layers: 4}", 8);
  CHECK(e.key_path() == "config.base_num_decoder_layers");
  CHECK(e.detail().find("is set by the model file too") != std::string::npos);
  CHECK(e.detail().find("mistral-7b.yml:") != std::string::npos);
  const auto cfg = load("{model_name: mistral-7b, base_num_decoder_layers: 4, override_model_config: true}", 8);
  CHECK(cfg.model.num_decoder_layers == 4);
  CHECK(cfg.model.emb_dim == 4096);  // the rest from the model file
}

TEST_CASE("maxtext keys: an unknown model names the nearest one", "[maxtext][keys]") {
  const auto e = error_of("{model_name: gemma3-12}", 8);
  CHECK(e.key_path() == "config.model_name");
  CHECK(e.detail().find("unknown MaxText model 'gemma3-12'; did you mean 'gemma3-12b'?") == 0);
}

TEST_CASE("maxtext keys: bad values are located type errors", "[maxtext][keys]") {
  CHECK(error_of("{remat_policy: fulll}", 8).detail().find("did you mean 'full'?") != std::string::npos);
  CHECK(error_of("{decoder_layer_input: remat}", 8).detail().find("cannot be rematerialized") != std::string::npos);
  CHECK(error_of("{per_device_batch_size: 0}", 8).key_path() == "config.per_device_batch_size");
  CHECK(error_of("{max_target_length: 1000, num_vocab_tiling: 3, per_device_batch_size: 1}", 8).key_path() ==
        "config.num_vocab_tiling");
  CHECK(error_of("{custom_mesh: hybrid_ring_64x8}", 8).detail().find("did you mean 'hybrid_ring_64x4'") !=
        std::string::npos);
}

TEST_CASE("maxtext keys: the bad-input files fail where they say", "[maxtext][keys]") {
  struct Bad {
    const char* file;
    int line, column;
    const char* key_path;
    const char* says;
  };
  const Bad cases[] = {
      {"unknown_key", 9, 5, "workload.config.per_device_batch_sise", "did you mean 'per_device_batch_size'?"},
      {"unmodelled_key", 11, 5, "workload.config.matmul_precision", "changes performance in a way tpusim"},
      {"mesh_not_dividing", 9, 27, "workload.config.ici_fsdp_parallelism", "multiply to 6, not the 8 chips"},
      {"model_key_twice", 10, 5, "workload.config.base_num_decoder_layers", "is set by the model file too"},
      {"unknown_xla_flag", 8, 53, "workload.xla_flags",
       "unknown XLA flag '--xla_tpu_enable_async_colective_fusion'; did you mean "
       "'xla_tpu_enable_async_collective_fusion'?"},
  };
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.file) {
      const std::string path = std::string("tests/data/maxtext/bad/") + c.file + ".yaml";
      const auto doc = sim::YamlNode::load_file(std::string(TPUSIM_SOURCE_DIR) + "/" + path);
      const auto flags = doc["workload"]["xla_flags"];
      try {
        workloads::load_maxtext_config(doc["workload"]["config"], flags.present() ? &flags : nullptr, 8, 1);
        FAIL("no error");
      } catch (const sim::ConfigError& e) {
        INFO(e.what());
        CHECK(e.where().line == c.line);
        CHECK(e.where().column == c.column);
        CHECK(e.key_path() == c.key_path);
        CHECK(e.detail().find(c.says) != std::string::npos);
      }
    }
  }
}

}  // namespace test_maxtext_keys
