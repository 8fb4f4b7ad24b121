#pragma once
// The `model:` mapping of an experiment:
//   model: {type: mlp, widths: [784, 1024, 10], activation: relu}
//   model: {type: transformer, layers: 24, d_model: 2048, d_ff: 8192, heads: 16,
//           head_dim: 128, seq_len: 2048, vocab: 50257, tied_embeddings: true}
// loaded with located errors (sim::ConfigError: file:line:column, key path).
#include <cstdint>
#include <string>

#include "models/mlp.h"
#include "models/model_spec.h"
#include "models/transformer.h"
#include "sim/params.h"
#include "sim/yaml_node.h"

namespace models {

struct ModelConfig {
  std::string type;  // "mlp" or "transformer": which of the two below is used
  MlpConfig mlp;
  TransformerConfig transformer;
  // A Transformer whose MLPs are a mixture of experts.
  bool moe() const { return type == "transformer" && transformer.moe(); }
};

// Parameter tables (name, type, unit, default, range, description), also
// used to document the keys.
const sim::ParamTable<MlpConfig>& mlp_params();
const sim::ParamTable<TransformerConfig>& transformer_params();
const sim::ParamTable<RoutingConfig>& routing_params();

// Validates and loads a `model:` mapping; throws sim::ConfigError.
ModelConfig load_model(const sim::YamlNode& node);

// build_mlp or build_transformer for `batch` samples or sequences.
ModelSpec build_model(const ModelConfig& cfg, std::uint64_t batch);

}  // namespace models
