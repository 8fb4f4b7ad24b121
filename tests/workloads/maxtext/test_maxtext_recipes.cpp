// The 17 published MaxText recipes (validation/recipes/) load as MaxText
// would run them: no unmodelled key or flag, and the model, batch and mesh
// equal the published facts in tests/data/maxtext/recipe-facts.yaml
// (transcribed from docs/reference/maxtext-recipes.md, not from the loader).
#include <catch2/catch.hpp>

#include <filesystem>

#include "sim/yaml_node.h"
#include "workloads/maxtext/axis_rules.h"
#include "workloads/maxtext/config.h"
#include "workloads/maxtext/flops.h"
#include "workloads/maxtext/mesh.h"

namespace test_maxtext_recipes {

namespace fs = std::filesystem;
using workloads::AttentionType;
using workloads::MaxTextAxis;
using workloads::MaxTextConfig;
using workloads::TensorPlace;

namespace {

const std::string kDir = std::string(TPUSIM_SOURCE_DIR) + "/validation/recipes/";

sim::YamlNode facts() {
  return sim::YamlNode::load_file(std::string(TPUSIM_SOURCE_DIR) + "/tests/data/maxtext/recipe-facts.yaml");
}

// Chips and slices of a recipe's pod: {topology, shape} or {slices, slice}.
std::pair<std::uint32_t, std::uint32_t> chips_of(const sim::YamlNode& pod) {
  const std::uint32_t slices = pod["slices"].present() ? static_cast<std::uint32_t>(pod["slices"].as_uint()) : 1;
  const sim::YamlNode slice = pod["slices"].present() ? pod["slice"] : pod;
  std::uint32_t chips = 1;
  for (std::size_t i = 0; i < slice["shape"].size(); ++i)
    chips *= static_cast<std::uint32_t>(slice["shape"][i].as_uint());
  return {chips * slices, slices};
}

MaxTextConfig load_recipe(const std::string& id) {
  const auto doc = sim::YamlNode::load_file(kDir + id + ".yaml");
  const auto [chips, slices] = chips_of(doc["pod"]);
  const auto flags = doc["workload"]["xla_flags"];
  return workloads::load_maxtext_config(doc["workload"]["config"], &flags, chips, slices);
}

std::uint64_t count(const std::vector<workloads::MaxTextModel::Layer>& layers,
                    bool (*pred)(const workloads::MaxTextModel::Layer&)) {
  std::uint64_t n = 0;
  for (const auto& l : layers) n += pred(l) ? 1 : 0;
  return n;
}

void check_model(const workloads::MaxTextModel& m, const sim::YamlNode& f) {
  CHECK(m.num_decoder_layers == f["layers"].as_uint());
  CHECK(m.emb_dim == f["emb"].as_uint());
  CHECK(m.num_query_heads == f["q_heads"].as_uint());
  if (f["kv_heads"].present()) CHECK(m.num_kv_heads == f["kv_heads"].as_uint());
  if (f["head_dim"].present()) CHECK(m.head_dim == f["head_dim"].as_uint());
  if (f["mlp"].present()) CHECK(m.mlp_dim == f["mlp"].as_uint());
  CHECK(m.vocab_size == f["vocab"].as_uint());
  CHECK(m.logits_via_embedding == f["tied"].as_bool());
  CHECK(m.gated_mlp() == f["gated"].as_bool());
  const auto layers = m.layers();
  REQUIRE(layers.size() == m.num_decoder_layers);
  if (f["experts"].present()) {
    CHECK(m.num_experts == f["experts"].as_uint());
    CHECK(m.num_experts_per_tok == f["per_token"].as_uint());
    CHECK(m.shared_experts_in_use() == f["shared"].as_uint());
    CHECK(m.expert_mlp_dim() == f["expert_mlp"].as_uint());
    CHECK(count(layers, [](const auto& l) { return l.moe; }) == f["moe_layers"].as_uint());
  } else {
    CHECK_FALSE(m.moe());
  }
  const std::uint64_t local = f["local_layers"].present() ? f["local_layers"].as_uint() : 0;
  CHECK(count(layers, [](const auto& l) { return l.attention == AttentionType::local_sliding; }) == local);
  const std::uint64_t nope = f["nope_layers"].present() ? f["nope_layers"].as_uint() : 0;
  CHECK(count(layers, [](const auto& l) { return !l.rope; }) == nope);
  if (f["window"].present())
    for (const auto& l : layers)
      if (l.attention == AttentionType::local_sliding || l.attention == AttentionType::chunk)
        CHECK(l.window == f["window"].as_uint());
  if (f["mla"].present()) {
    CHECK(m.attention_type == AttentionType::mla);
    CHECK(m.q_lora_rank == f["mla"]["q_lora_rank"].as_uint());
    CHECK(m.kv_lora_rank == f["mla"]["kv_lora_rank"].as_uint());
    CHECK(m.qk_nope_head_dim == f["mla"]["qk_nope_head_dim"].as_uint());
    CHECK(m.qk_rope_head_dim == f["mla"]["qk_rope_head_dim"].as_uint());
    CHECK(m.v_head_dim == f["mla"]["v_head_dim"].as_uint());
  }
}

}  // namespace

TEST_CASE("maxtext recipes: the logged TFLOP/s/device x step time is MaxText's FLOP count of the config",
          "[maxtext][recipes]") {
  // A published number against the loaded config: batch, sequence, dimensions, vocabulary,
  // experts, MLA ranks and each layer's kind must all be right for MaxText's formula to give the
  // logged TFLOPs (to the 5 or 6 digits the log prints).
  const auto all = facts();
  std::size_t checked = 0;
  for (const auto& id : all["recipes"].keys()) {
    const auto f = all["recipes"][id];
    DYNAMIC_SECTION(id) {
      const double logged = f["tflops_per_device"].as_double() * f["step_s"].as_double();
      const auto version = f["flops_formula"].as_string() == "causal" ? workloads::MaxTextFlopCount::causal
                                                                      : workloads::MaxTextFlopCount::noncausal;
      const double counted = workloads::maxtext_step_tflops(load_recipe(id), version);
      CHECK(counted == Approx(logged).epsilon(1e-4));
    }
    ++checked;
  }
  CHECK(checked == 17);
}

TEST_CASE("maxtext recipes: each loads with no unmodelled key and the published model, batch and mesh",
          "[maxtext][recipes]") {
  const auto all = facts();
  std::size_t n = 0;
  for (const auto& id : all["recipes"].keys()) {
    DYNAMIC_SECTION(id) {
      const auto f = all["recipes"][id];
      const MaxTextConfig cfg = load_recipe(id);
      for (const auto& a : cfg.approximations) INFO(a.key << ": " << a.value);
      CHECK(cfg.approximations.empty());
      CHECK(cfg.model.name == f["model"].as_string());
      check_model(cfg.model, all["models"][f["model"].as_string()]);
      CHECK(cfg.max_target_length == f["seq"].as_uint());
      CHECK(cfg.per_device_batch_size == f["per_device"].as_double());
      CHECK(cfg.global_batch() == f["global"].as_uint());
      for (const MaxTextAxis a : workloads::all_maxtext_axes()) {
        const std::string name = workloads::maxtext_axis_names().name(a);
        INFO(name);
        CHECK(cfg.mesh.size(a) == (f["mesh"][name].present() ? f["mesh"][name].as_uint() : 1));
      }
    }
    ++n;
  }
  CHECK(n == 17);
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(kDir)) files += e.path().extension() == ".yaml" ? 1 : 0;
  CHECK(files == 17);
}

TEST_CASE("maxtext recipes: remat policies as published", "[maxtext][recipes]") {
  using P = TensorPlace;
  // Llama 3.1 70B on v6e: decoder input and Q, K, V offloaded, the rest recomputed.
  const auto l70 = load_recipe("v6e-l70b-256").effective_remat();
  CHECK(l70.decoder_layer_input == P::offload);
  CHECK(l70.query_proj == P::offload);
  CHECK(l70.value_proj == P::offload);
  CHECK(l70.out_proj == P::remat);
  CHECK(l70.mlpwo == P::remat);
  // Llama 2 70B: qkv_proj_offloaded, the decoder input on the device.
  const auto l2 = load_recipe("v6e-l2-70b-256").effective_remat();
  CHECK(l2.decoder_layer_input == P::device);
  CHECK(l2.key_proj == P::offload);
  CHECK(l2.context == P::remat);
  // Llama 3.1 405B on v5p: context and mlpwo offloaded.
  const auto l405 = load_recipe("v5p-l405b-512").effective_remat();
  CHECK(l405.context == P::offload);
  CHECK(l405.mlpwo == P::offload);
  CHECK(l405.decoder_layer_input == P::device);
  // GPT-3: full remat recomputes every named tensor.
  const auto g = load_recipe("v6e-gpt3-175b-q-256");
  CHECK(g.effective_remat().qkv_proj == P::remat);
  CHECK(g.quantization == workloads::Quantization::int8);
  CHECK(g.opt_type == workloads::OptimizerType::adam_pax);  // gpt3-175b.yml sets it
}

TEST_CASE("maxtext recipes: flags, MoE execution and vocabulary tiling as published", "[maxtext][recipes]") {
  const auto mix = load_recipe("v6e-mixtral8x22b-256");
  CHECK_FALSE(mix.moe.megablox);
  CHECK_FALSE(mix.moe.sparse_matmul);
  CHECK(mix.moe.capacity_factor == 1.25);
  CHECK(mix.weight_dtype == workloads::MaxTextDtype::bfloat16);
  CHECK(mix.mesh.custom_mesh == "hybrid_ring_64x4");
  CHECK(mix.xla.scoped_vmem_limit_kib == 81920);
  const auto ds = load_recipe("v5p-dsv3-512");
  CHECK(ds.xla.sparse_core_all_gather);
  CHECK(ds.xla.sparse_core_reduce_scatter);
  CHECK_FALSE(ds.xla.fuse_all_gather);
  CHECK(ds.moe.megablox);
  CHECK(ds.weight_dtype == workloads::MaxTextDtype::float32);
  CHECK_FALSE(ds.splash.use_fused_bwd_kernel);
  const auto l32 = load_recipe("v6e-l70b-32");
  CHECK(l32.xla.windowed_einsum_threshold_mib == 1000000);
  CHECK(l32.splash.kv_dkv_compute == 2048);
  const auto gem = load_recipe("v6e-gemma3-12b-1x256");
  CHECK(gem.num_vocab_tiling == 16);
  CHECK(gem.splash.q_dkv == 512);
  CHECK(gem.splash.kv_dkv == 2048);
  CHECK(gem.xla.flags.size() == 1);
}

}  // namespace test_maxtext_recipes
