#pragma once
// A whole model for one (micro)batch: its layers in forward order, and the
// totals a report needs (parameters, FLOPs per step, tokens, model FLOPs per
// token for MFU). The backward pass runs the layers in reverse order.
#include <cstdint>
#include <string>
#include <vector>

#include "models/layer_spec.h"

namespace models {

struct ModelSpec {
  std::string type;           // "mlp" or "transformer"
  std::uint64_t batch = 0;    // samples (MLP) or sequences (Transformer) in this batch
  std::uint64_t seq_len = 1;  // tokens per sequence; 1 for the MLP
  std::vector<LayerSpec> layers;

  std::uint64_t tokens() const { return batch * seq_len; }  // per step (this batch)
  std::uint64_t param_count() const;
  std::uint64_t param_bytes() const;       // BF16
  std::uint64_t activation_bytes() const;  // everything stashed for backward, all layers
  double forward_flops() const;            // matmuls + elementwise
  double backward_flops() const;
  double flops_per_step() const { return forward_flops() + backward_flops(); }
  double matmul_flops_per_step() const;  // forward + backward matmuls only
  // Matmul FLOPs (forward + backward) per token: the "model FLOPs" of MFU
  // (PaLM, Chowdhery et al. 2022, appendix B: 6N + 12 L H Q T per token,
  // where H Q = heads x head_dim; elementwise work and rematerialisation are
  // not counted).
  double model_flops_per_token() const;

  // The layer owning parameter `name`, or nullptr (for tied embeddings: the
  // output layer's unembedding reads "embedding.table", owned by the
  // embedding layer, and its weight gradient accumulates there).
  const LayerSpec* owner_of(const std::string& param_name) const;
};

}  // namespace models
