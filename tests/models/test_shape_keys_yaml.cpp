// The `model:` keys of today's model shapes (docs/models.md): latent
// attention loads without head_dim, and every inconsistent combination
// fails with a sim::ConfigError at the offending key's file:line:column.
#include <catch2/catch.hpp>

#include "models/model_config.h"
#include "sim/error.h"

namespace test_shape_keys_yaml {

namespace {

models::ModelConfig load(const std::string& text) {
  return models::load_model(sim::YamlNode::load_string(text, "exp.yaml")["model"]);
}

const std::string kBase =
    "model:\n  type: transformer\n  layers: 2\n  d_model: 64\n  d_ff: 256\n"
    "  heads: 4\n  seq_len: 32\n  vocab: 100\n";  // lines 1-8; line 9 onward added by each case
const std::string kGqa = kBase + "  head_dim: 16\n";
const std::string kMla = kBase + "  kv_lora_rank: 32\n  qk_nope_head_dim: 8\n  qk_rope_head_dim: 4\n  v_head_dim: 8\n";

struct Bad {
  std::string yaml;
  int line, column;
  const char* key_path;
  const char* says;
};

}  // namespace

TEST_CASE("shape keys: latent attention, windows, experts' layout and tiling load", "[models][yaml]") {
  const auto m = load(kMla + "  q_lora_rank: 48\n  vocab_tiles: 4\n").transformer;
  CHECK(m.mla());
  CHECK(m.qk_head_dim() == 12);
  CHECK(m.v_dim() == 8);
  CHECK(m.vocab_tiles == 4);
  const auto g = load(kGqa +
                      "  mlp: geglu\n  sliding_window: 8\n  sliding_window_pattern: 2\n  qk_norm: true\n"
                      "  experts: 4\n  first_dense_layers: 1\n  moe_layer_step: 1\n"
                      "  expert_matmul: grouped\n")
                     .transformer;
  CHECK(g.gated());
  CHECK(g.local_layer(0));
  CHECK_FALSE(g.local_layer(1));
  CHECK(g.expert_matmul == "grouped");
}

TEST_CASE("shape keys: inconsistent combinations give located errors", "[models][yaml]") {
  const Bad cases[] = {
      {kGqa + "  q_lora_rank: 64\n", 10, 16, "model.q_lora_rank", "needs kv_lora_rank > 0"},
      {kMla + "  head_dim: 16\n", 13, 13, "model.head_dim", "configures grouped-query attention"},
      {kBase + "  kv_lora_rank: 32\n  qk_nope_head_dim: 8\n", 9, 17, "model.kv_lora_rank", "needs v_head_dim"},
      {kBase + "  layers_x: 1\n", 9, 3, "model.layers_x", "unknown key"},
      {kBase, 2, 3, "model.head_dim", "missing required key"},
      {kGqa + "  sliding_window_pattern: 6\n", 10, 27, "model.sliding_window_pattern", "needs a sliding_window"},
      {kGqa + "  vocab_tiles: 0\n", 10, 16, "model.vocab_tiles", "value 0 is out of range"},
      {kGqa + "  experts: 4\n  expert_matmul: groupd\n", 11, 18, "model.expert_matmul", "did you mean 'grouped'?"},
      {kGqa + "  moe_layer_step: 2\n", 10, 19, "model.moe_layer_step", "configures a mixture of experts"},
      {kGqa + "  experts: 4\n  moe_layer_step: 0\n", 11, 19, "model.moe_layer_step", "value 0 is out of range"},
      {kGqa + "  block: parallel\n  post_norms: true\n", 11, 15, "model.post_norms", "serial blocks only"},
      {kGqa + "  mlp: gegl\n", 10, 8, "model.mlp", "did you mean 'geglu'?"},
      {kGqa + "  experts: 4\n  post_norms: true\n", 11, 15, "model.post_norms", "not modelled with a mixture"},
  };
  for (const auto& c : cases) {
    INFO(c.yaml);
    try {
      load(c.yaml);
      FAIL("no error");
    } catch (const sim::ConfigError& e) {
      INFO(e.what());
      CHECK(e.where().file == "exp.yaml");
      CHECK(e.where().line == c.line);
      CHECK(e.where().column == c.column);
      CHECK(e.key_path() == c.key_path);
      CHECK(std::string(e.what()).find(c.says) != std::string::npos);
    }
  }
}

}  // namespace test_shape_keys_yaml
