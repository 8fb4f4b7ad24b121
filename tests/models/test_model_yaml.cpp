// The `model:` mapping: good files load, and every bad one fails with a
// sim::ConfigError naming file:line:column and the key path.
#include <catch2/catch.hpp>

#include "models/model_config.h"
#include "sim/error.h"

namespace test_model_yaml {

namespace {

models::ModelConfig load(const std::string& text) {
  return models::load_model(sim::YamlNode::load_string(text, "exp.yaml")["model"]);
}

struct Bad {
  const char* yaml;
  int line, column;
  const char* key_path;
  const char* says;
};

}  // namespace

TEST_CASE("model YAML: an MLP and a Transformer load", "[models][yaml]") {
  const auto mlp = load("model:\n  type: mlp\n  widths: [784, 1024, 10]\n  activation: gelu\n");
  CHECK(mlp.type == "mlp");
  CHECK(mlp.mlp.widths == std::vector<std::uint64_t>{784, 1024, 10});
  CHECK(mlp.mlp.activation == "gelu");
  CHECK(load("model: {type: mlp, widths: [4, 2]}").mlp.activation == "relu");  // default

  const auto t = load(
      "model:\n  type: transformer\n  layers: 24\n  d_model: 2048\n  d_ff: 8192\n  heads: 16\n"
      "  head_dim: 128\n  seq_len: 2048\n  vocab: 50257\n  tied_embeddings: true\n");
  CHECK(t.type == "transformer");
  CHECK(t.transformer.layers == 24);
  CHECK(t.transformer.d_model == 2048);
  CHECK(t.transformer.d_ff == 8192);
  CHECK(t.transformer.heads == 16);
  CHECK(t.transformer.head_dim == 128);
  CHECK(t.transformer.seq_len == 2048);
  CHECK(t.transformer.vocab == 50257);
  CHECK(t.transformer.tied_embeddings);
  CHECK(t.transformer.mlp == "gelu");
  const auto spec = models::build_model(t, 2);
  CHECK(spec.type == "transformer");
  CHECK(spec.tokens() == 4096);
  CHECK(models::build_model(mlp, 5).tokens() == 5);
}

TEST_CASE("model YAML: bad input gives located errors", "[models][yaml]") {
  const char* t =
      "model:\n  type: transformer\n  layers: 2\n  d_model: 64\n  d_ff: 256\n"
      "  heads: 4\n  head_dim: 16\n  seq_len: 32\n  vocab: 100\n";
  const std::string base(t);
  auto with = [&](const std::string& key, const std::string& line) {
    // replace the line of `key` in the transformer text
    std::string s = base;
    const auto at = s.find("  " + key + ":");
    const auto end = s.find('\n', at);
    return s.replace(at, end - at, line);
  };
  const std::string heads0 = with("heads", "  heads: 0");
  const std::string layers_word = with("layers", "  layers: many");
  const std::string typo = with("d_model", "  d_modle: 64");
  const std::string negative = with("vocab", "  vocab: -5");
  const std::string tied = base + "  tied_embeddings: maybe\n";
  const std::string mlp_variant = base + "  mlp: silu\n";
  const std::string kv_uneven = base + "  kv_heads: 3\n";
  const std::string attention_typo = base + "  attention: flesh\n";
  const std::string block_typo = base + "  block: paralel\n";
  const Bad cases[] = {
      {heads0.c_str(), 6, 10, "model.heads", "value 0 is out of range"},
      {layers_word.c_str(), 3, 11, "model.layers", "expected a number, got 'many'"},
      {typo.c_str(), 4, 3, "model.d_modle", "did you mean 'd_model'?"},
      {negative.c_str(), 9, 10, "model.vocab", "value -5 is out of range"},
      {tied.c_str(), 10, 20, "model.tied_embeddings", "expected true or false"},
      {mlp_variant.c_str(), 10, 8, "model.mlp", "expected one of: relu, gelu, swiglu"},
      {kv_uneven.c_str(), 10, 13, "model.kv_heads", "3 key/value heads do not divide the 4 query heads"},
      {attention_typo.c_str(), 10, 14, "model.attention", "did you mean 'flash'?"},
      {block_typo.c_str(), 10, 10, "model.block", "did you mean 'parallel'?"},
      {"model:\n  type: transformer\n  layers: 2\n", 2, 3, "model.d_model", "missing required key"},
      {"model:\n  type: transfomer\n", 2, 9, "model.type", "did you mean 'transformer'?"},
      {"model:\n  widths: [4, 2]\n", 2, 3, "model.type", "missing required key"},
      {"model: 7\n", 1, 8, "model", "expected a mapping"},
      {"model:\n  type: mlp\n", 2, 3, "model.widths", "missing required key"},
      {"model:\n  type: mlp\n  widths: 10\n", 3, 11, "model.widths", "expected a list of layer widths"},
      {"model:\n  type: mlp\n  widths: [10]\n", 3, 11, "model.widths", "need at least 2 widths"},
      {"model:\n  type: mlp\n  widths: [10, 0, 2]\n", 3, 16, "model.widths[1]", "value 0 is out of range"},
      {"model:\n  type: mlp\n  widths: [10, wide]\n", 3, 16, "model.widths[1]", "expected a number"},
      {"model:\n  type: mlp\n  widths: [4, 2]\n  activation: tanh\n", 4, 15, "model.activation",
       "expected one of: relu, gelu"},
      {"model:\n  type: mlp\n  widths: [4, 2]\n  heads: 2\n", 4, 3, "model.heads", "unknown key 'heads'"},
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

}  // namespace test_model_yaml
