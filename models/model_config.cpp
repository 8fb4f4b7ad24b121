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

const sim::ParamTable<RoutingConfig>& routing_params() {
  static const sim::ParamTable<RoutingConfig> t = [] {
    sim::ParamTable<RoutingConfig> p("model.routing",
                                     "how the router spreads tokens over the experts, per layer and step "
                                     "(models/routing.h)");
    p.choice("distribution", &RoutingConfig::distribution, {"uniform", "zipf", "measured"}, std::string("uniform"),
             "uniform: every expert exactly its share; zipf: expert popularity ~ 1/rank^skew, ranks shuffled per "
             "layer and tokens drawn from the seed; measured: each expert's share from loads")
        .real("skew", &RoutingConfig::skew, "", 1.0, sim::between(0, 8), "zipf: the exponent (0: uniform odds)")
        .integer<std::uint64_t>("seed", &RoutingConfig::seed, "", 1, sim::at_least(0),
                                "zipf: the draws (SplitMix64); the same seed gives the same report")
        .list<double>("loads", &RoutingConfig::loads, sim::real_item("", sim::positive()), {1, 1 << 16, false}, "none",
                      "measured: each expert's relative share of the routed tokens, one per expert")
        .then([](const sim::YamlNode& node, RoutingConfig& c) {
          if (c.distribution == "measured" && c.loads.empty())
            node["distribution"].fail("measured routing needs loads: one share per expert");
          if (c.distribution != "measured" && !c.loads.empty())
            node["loads"].fail("loads are read with distribution: measured only (it is " + c.distribution + ")");
        });
    return p;
  }();
  return t;
}

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
        .integer<std::uint64_t>("head_dim", &TransformerConfig::head_dim, "elements", 0, dim,
                                "width of one head H (heads x head_dim need not equal d_model); required unless "
                                "kv_lora_rank > 0")
        .integer<std::uint64_t>("seq_len", &TransformerConfig::seq_len, "tokens", std::nullopt,
                                sim::between(1, kMaxWidth), "tokens per sequence T")
        .integer<std::uint64_t>("vocab", &TransformerConfig::vocab, "tokens", std::nullopt, sim::between(1, kMaxWidth),
                                "vocabulary size V")
        .flag("tied_embeddings", &TransformerConfig::tied_embeddings, false,
              "the output layer reuses the embedding table (V x D parameters once, not twice)")
        .choice("embedding_shard", &TransformerConfig::embedding_shard, {"vocab", "d_model"}, std::string("vocab"),
                "how tensor parallelism splits a tied embedding table: vocab (each rank a slice of the vocabulary; "
                "its logits are the vocabulary's slice) or d_model (each rank a slice of every token's vector; its "
                "logits are partial sums of the whole vocabulary, all-reduced over the tensor ranks)")
        .choice("mlp", &TransformerConfig::mlp, {"relu", "gelu", "swiglu", "geglu"}, std::string("gelu"),
                "relu, gelu: 2 matrices, 2DF params; swiglu, geglu: gated by SiLU or GELU, 3 matrices, 3DF params")
        .integer<std::uint64_t>("kv_heads", &TransformerConfig::kv_heads, "heads", 0, sim::between(0, 1 << 20),
                                "key/value heads K (grouped-query attention; 1: multi-query); 0: as many as heads")
        .choice("attention", &TransformerConfig::attention, {"materialized", "flash"}, std::string("materialized"),
                "materialized: scores and probabilities go through HBM; flash: one fused kernel keeps them in VMEM, "
                "skips causally masked blocks and recomputes the scores in backward")
        .choice("block", &TransformerConfig::block, {"serial", "parallel"}, std::string("serial"),
                "serial: x + Attn(LN1(x)), then h + MLP(LN2(h)); parallel: x + Attn(LN(x)) + MLP(LN(x)) (PaLM)")
        .integer<std::uint64_t>("experts", &TransformerConfig::experts, "experts", 0, sim::between(0, 1 << 16),
                                "mixture of experts: expert MLPs per block, a router sending each token to top_k of "
                                "them; 0: a dense MLP")
        .integer<std::uint64_t>("top_k", &TransformerConfig::top_k, "experts", 2, sim::between(1, 1 << 16),
                                "experts each token goes to")
        .real("capacity_factor", &TransformerConfig::capacity_factor, "", 0.0, sim::between(0, 64),
              "an expert takes at most ceil(factor x tokens x top_k / experts) of each chip's tokens, the rest are "
              "dropped; 0: no capacity (dropless)")
        .integer<std::uint64_t>("shared_experts", &TransformerConfig::shared_experts, "experts", 0,
                                sim::between(0, 1 << 10),
                                "expert MLPs every token goes through, beside the routed ones")
        .integer<std::uint64_t>("expert_d_ff", &TransformerConfig::expert_d_ff, "elements", 0, sim::between(0, 1 << 20),
                                "hidden width of one expert's MLP; 0: d_ff")
        .group("routing", &TransformerConfig::routing, routing_params())
        .integer<std::uint64_t>("first_dense_layers", &TransformerConfig::first_dense_layers, "blocks", 0,
                                sim::between(0, 1 << 16),
                                "the first blocks keep a dense MLP of d_ff (DeepSeek-V3: 3); the rest follow "
                                "moe_layer_step")
        .integer<std::uint64_t>("moe_layer_step", &TransformerConfig::moe_layer_step, "blocks", 1,
                                sim::between(1, 1 << 16),
                                "after first_dense_layers, block i has experts when (i + 1) % step == 0, the others a "
                                "dense MLP of d_ff (Llama 4 Maverick: 2)")
        .choice("expert_matmul", &TransformerConfig::expert_matmul, {"batched", "grouped", "einsum"},
                std::string("batched"),
                "batched: one matmul per expert on its tokens; grouped: one grouped matmul over the chip's experts "
                "(megablox); einsum: GShard's one-hot dispatch and combine einsums into capacity-padded buffers "
                "(MaxText without megablox/sparse_matmul; needs a capacity_factor)")
        .integer<std::uint64_t>("grouped_tile", &TransformerConfig::grouped_tile, "rows", 512, sim::between(0, 1 << 20),
                                "expert_matmul grouped: rows of the kernel's tile along the tokens (megablox's tm, "
                                "MaxText's tile_batch_seq); a group starting inside a tile costs that tile again; "
                                "0: an exact kernel")
        .integer<std::uint64_t>("q_lora_rank", &TransformerConfig::q_lora_rank, "elements", 0, sim::between(0, 1 << 20),
                                "multi-head latent attention: width of the query latent (0: queries projected "
                                "straight from d_model)")
        .integer<std::uint64_t>("kv_lora_rank", &TransformerConfig::kv_lora_rank, "elements", 0,
                                sim::between(0, 1 << 20),
                                "multi-head latent attention (DeepSeek-V2/V3): width of the key/value latent; 0: "
                                "grouped-query attention")
        .integer<std::uint64_t>("qk_nope_head_dim", &TransformerConfig::qk_nope_head_dim, "elements", 0,
                                sim::between(0, 1 << 20),
                                "latent attention: the part of a query/key head without rotary embedding")
        .integer<std::uint64_t>("qk_rope_head_dim", &TransformerConfig::qk_rope_head_dim, "elements", 0,
                                sim::between(0, 1 << 20),
                                "latent attention: the rotary part of a query/key head (one key part shared by "
                                "the heads)")
        .integer<std::uint64_t>("v_head_dim", &TransformerConfig::v_head_dim, "elements", 0, sim::between(0, 1 << 20),
                                "latent attention: width of a value head")
        .integer<std::uint64_t>("sliding_window", &TransformerConfig::sliding_window, "tokens", 0,
                                sim::between(0, kMaxWidth),
                                "a local block's query attends to its W most recent keys (itself included); 0: no "
                                "window, every block attends to all earlier keys")
        .integer<std::uint64_t>("sliding_window_pattern", &TransformerConfig::sliding_window_pattern, "blocks", 0,
                                sim::between(0, 1 << 16),
                                "every k-th block ((i + 1) % k == 0) is global, the others local (Gemma 3: 6; Gemma "
                                "2, gpt-oss: 2); 0: every block is local")
        .flag("qk_norm", &TransformerConfig::qk_norm, false,
              "a norm over each query and key head before the scores (Qwen3, Llama 4 Scout)")
        .flag("post_norms", &TransformerConfig::post_norms, false,
              "norms on the attention and MLP outputs before their residual adds (Gemma 2/3)")
        .integer<std::uint64_t>("vocab_tiles", &TransformerConfig::vocab_tiles, "chunks", 1, sim::between(1, 1 << 16),
                                "logits and loss computed in this many chunks of tokens, the backward recomputing "
                                "each chunk's logits (MaxText's num_vocab_tiling); 1: all at once")
        .then([](const sim::YamlNode& node, TransformerConfig& c) {
          if (!c.moe()) {
            for (const char* k : {"top_k", "capacity_factor", "shared_experts", "expert_d_ff", "routing",
                                  "first_dense_layers", "moe_layer_step", "expert_matmul", "grouped_tile"})
              if (node[k].present())
                node[k].fail(std::string(k) + " configures a mixture of experts, and the model has none (experts: 0)");
            return;
          }
          if (c.top_k > c.experts)
            node["top_k"].fail("top_k " + std::to_string(c.top_k) + " is more than the " + std::to_string(c.experts) +
                               " experts");
          if (c.block != "serial")
            node["experts"].fail("experts replace the MLP of serial blocks only (block: serial)");
          const auto& loads = c.routing.loads;
          if (c.routing.distribution == "measured") {
            const sim::YamlNode at = node["routing"]["loads"];
            if (loads.size() != c.experts)
              at.fail("expected one load per expert (" + std::to_string(c.experts) + "), got " +
                      std::to_string(loads.size()));
            double sum = 0;
            for (double l : loads) sum += l;
            for (std::size_t e = 0; e < loads.size(); ++e)
              if (loads[e] / sum > 1.0 / double(c.top_k) + 1e-12)
                at[e].fail("expert " + std::to_string(e) + "'s share " + std::to_string(loads[e] / sum) +
                           " is above 1 / top_k: a token goes to an expert at most once");
          }
        })
        .then([](const sim::YamlNode& node, TransformerConfig& c) {
          if (c.mla()) {
            for (const char* k : {"head_dim", "kv_heads", "qk_norm"})
              if (node[k].present())
                node[k].fail(std::string(k) +
                             " configures grouped-query attention; with kv_lora_rank > 0 the heads are "
                             "qk_nope_head_dim + qk_rope_head_dim wide (values v_head_dim)");
            if (c.qk_nope_head_dim + c.qk_rope_head_dim == 0)
              node["kv_lora_rank"].fail("latent attention needs qk_nope_head_dim and/or qk_rope_head_dim");
            if (c.v_head_dim == 0) node["kv_lora_rank"].fail("latent attention needs v_head_dim");
          } else {
            for (const char* k : {"q_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"})
              if (node[k].present())
                node[k].fail(std::string(k) + " configures multi-head latent attention, which needs kv_lora_rank > 0");
            if (!node["head_dim"].present())
              node["head_dim"].fail("missing required key (width of one head H; not needed with kv_lora_rank > 0)");
          }
          if (c.sliding_window_pattern && !c.sliding_window)
            node["sliding_window_pattern"].fail("a pattern of local and global blocks needs a sliding_window");
          if (c.post_norms && c.block != "serial")
            node["post_norms"].fail("post_norms are modelled for serial blocks only (block: serial)");
          if (c.post_norms && c.moe())
            node["post_norms"].fail("post_norms are not modelled with a mixture of experts (experts > 0)");
        })
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
