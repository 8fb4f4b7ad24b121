#pragma once
// A multilayer perceptron: dense layers Y = act(X W + b) between the given
// widths, no activation after the last layer, then a softmax cross-entropy
// loss over the last width (a classifier). Layer i is column-parallel when i
// is even and row-parallel when odd: the Megatron pairing, so that a pair of
// layers needs one all-reduce forward and one backward (arXiv:1909.08053).
#include <cstdint>
#include <string>
#include <vector>

#include "models/model_spec.h"

namespace models {

struct MlpConfig {
  std::vector<std::uint64_t> widths;  // input, hidden..., output (at least 2)
  std::string activation = "relu";    // relu | gelu
};

// The MLP for `batch` samples. Layers: "dense0" .. "dense<L-1>", "loss".
// The first layer's input is data: it has no dX matmul, so its backward is
// 1x (dW only) rather than 2x its forward.
// Throws std::invalid_argument on an invalid config or batch 0.
ModelSpec build_mlp(const MlpConfig& cfg, std::uint64_t batch);

}  // namespace models
