#pragma once
// The three matmuls of one linear (dense) layer Y = X W, X[m x k], W[k x n]:
//   forward  Y  = X  W      (m, k, n)
//   data     dX = dY W^T    (m, n, k)   skipped when X needs no gradient
//   weight   dW = X^T dY    (k, m, n)
// Backward is 2x forward FLOPs (each backward matmul has the forward's
// m*k*n). With the weight's Megatron role each gets the dimension tensor
// parallelism splits: a column-parallel W (split n) splits n of Y and dW and
// the contraction of dX (an all-reduce of dX); a row-parallel W (split k)
// splits the contraction of Y (an all-reduce of Y), n of dX and m of dW.
#include <cstdint>
#include <string>
#include <vector>

#include "models/layer_spec.h"

namespace models {

struct Linear {
  std::string name;  // op name, e.g. "block3.mlp.up"; backward ops add ".dX", ".dW"
  std::uint64_t m = 0, k = 0, n = 0;
  std::string weight;                       // ParamSpec name of W
  TpRole tp = TpRole::replicated;           // column, row or replicated
  std::string output;                       // tensor Y
  std::string input_grad;                   // tensor dX; empty: no dX matmul (the input is data)
  std::vector<std::string> after_forward;   // ops producing X (same layer)
  std::vector<std::string> after_backward;  // ops producing dY (same layer)
  std::uint64_t tp_units = 0;               // MatmulSpec::tp_units of all three matmuls
};

// Appends the forward matmul to layer.forward and dX (if wanted), dW to
// layer.backward.
void add_linear(LayerSpec& layer, const Linear& lin);

}  // namespace models
