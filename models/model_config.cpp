#include "models/model_config.h"

#include <stdexcept>

namespace models {

namespace {

constexpr double kMaxWidth = 1 << 24;  // keeps every product of sizes well inside 64 bits

void load_widths(const sim::YamlNode& w, MlpConfig& out) {
  if (!w.is_sequence())
    w.fail("expected a list of layer widths, e.g. [784, 1024, 10], got " + sim::describe_yaml(w.raw()));
  if (w.size() < 2) w.fail("need at least 2 widths (input and output), got " + std::to_string(w.size()));
  out.widths.clear();
  for (std::size_t i = 0; i < w.size(); ++i) {
    const sim::YamlNode e = w[i];
    out.widths.push_back(sim::read_integer_as<std::uint64_t>(e, sim::between(1, kMaxWidth), "elements"));
  }
}

}  // namespace

const sim::ParamTable<MlpConfig>& mlp_params() {
  static const sim::ParamTable<MlpConfig> t = [] {
    sim::ParamTable<MlpConfig> p("model.mlp", "multilayer perceptron: dense layers + softmax cross-entropy");
    p.custom("widths", {"list of integer", "elements", "", sim::between(1, kMaxWidth).str() + " each, at least 2"},
             "layer widths: input, hidden..., output", load_widths, true)
        .choice("activation", &MlpConfig::activation, {"relu", "gelu"}, std::string("relu"),
                "activation after every layer but the last")
        .allow("type");
    return p;
  }();
  return t;
}

const sim::ParamTable<TransformerConfig>& transformer_params() {
  static const sim::ParamTable<TransformerConfig> t = [] {
    sim::ParamTable<TransformerConfig> p("model.transformer", "decoder-only Transformer language model");
    const sim::Range dim = sim::between(1, 1 << 20);
    p.integer<std::uint64_t>("layers", &TransformerConfig::layers, "blocks", std::nullopt, sim::between(1, 1 << 16),
                             "Transformer blocks (attention + MLP)")
        .integer<std::uint64_t>("d_model", &TransformerConfig::d_model, "elements", std::nullopt, dim,
                                "residual stream width D")
        .integer<std::uint64_t>("d_ff", &TransformerConfig::d_ff, "elements", std::nullopt, dim, "MLP hidden width F")
        .integer<std::uint64_t>("heads", &TransformerConfig::heads, "heads", std::nullopt, dim, "attention heads N")
        .integer<std::uint64_t>("head_dim", &TransformerConfig::head_dim, "elements", std::nullopt, dim,
                                "width of one head H (heads x head_dim need not equal d_model)")
        .integer<std::uint64_t>("seq_len", &TransformerConfig::seq_len, "tokens", std::nullopt,
                                sim::between(1, kMaxWidth), "tokens per sequence T")
        .integer<std::uint64_t>("vocab", &TransformerConfig::vocab, "tokens", std::nullopt, sim::between(1, kMaxWidth),
                                "vocabulary size V")
        .flag("tied_embeddings", &TransformerConfig::tied_embeddings, false,
              "the output layer reuses the embedding table (V x D parameters once, not twice)")
        .choice("mlp", &TransformerConfig::mlp, {"relu", "gelu", "swiglu"}, std::string("gelu"),
                "relu, gelu: 2 matrices, 2DF params; swiglu: gated, 3 matrices, 3DF params")
        .integer<std::uint64_t>("kv_heads", &TransformerConfig::kv_heads, "heads", 0, sim::between(0, 1 << 20),
                                "key/value heads K (grouped-query attention; 1: multi-query); 0: as many as heads")
        .choice("attention", &TransformerConfig::attention, {"materialized", "flash"}, std::string("materialized"),
                "materialized: scores and probabilities go through HBM; flash: one fused kernel keeps them in VMEM, "
                "skips causally masked blocks and recomputes the scores in backward")
        .choice("block", &TransformerConfig::block, {"serial", "parallel"}, std::string("serial"),
                "serial: x + Attn(LN1(x)), then h + MLP(LN2(h)); parallel: x + Attn(LN(x)) + MLP(LN(x)) (PaLM)")
        .then([](const sim::YamlNode& node, TransformerConfig& c) {
          if (c.kv_heads != 0 && c.heads % c.kv_heads != 0)
            node["kv_heads"].fail(std::to_string(c.kv_heads) + " key/value heads do not divide the " +
                                  std::to_string(c.heads) +
                                  " query heads (each key/value head serves an equal group of query heads)");
        })
        .allow("type");
    return p;
  }();
  return t;
}

ModelConfig load_model(const sim::YamlNode& node) {
  if (!node.present()) node.fail("missing the model mapping (type: mlp or transformer, and its sizes)");
  if (!node.is_map()) node.fail("expected a mapping, got " + sim::describe_yaml(node.raw()));
  const sim::YamlNode type = node["type"];
  if (!type.present()) type.fail("missing required key (mlp or transformer)");
  ModelConfig c;
  c.type = type.as_string();
  if (c.type == "mlp") {
    mlp_params().load(node, c.mlp);
  } else if (c.type == "transformer") {
    transformer_params().load(node, c.transformer);
  } else {
    std::string msg = "'" + c.type + "' is not a model type; expected one of: mlp transformer";
    const std::string hint = sim::did_you_mean(c.type, {"mlp", "transformer"});
    if (!hint.empty()) msg += " (" + hint + ")";
    type.fail(msg);
  }
  return c;
}

ModelSpec build_model(const ModelConfig& cfg, std::uint64_t batch) {
  if (cfg.type == "mlp") return build_mlp(cfg.mlp, batch);
  if (cfg.type == "transformer") return build_transformer(cfg.transformer, batch);
  throw std::invalid_argument("build_model: unknown model type '" + cfg.type + "'");
}

}  // namespace models
