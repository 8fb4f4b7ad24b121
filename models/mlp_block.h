#pragma once
// The dense MLP of a Transformer block, y = W_down act(x W_up [, x W_gate]):
//   relu, gelu:    act(x W_up)                     2 d_model d_ff params
//   swiglu:        SiLU(x W_gate) * x W_up          3 d_model d_ff params (Shazeer 2020, arXiv:2002.05202)
//   geglu:         GELU(x W_gate) * x W_up          3 d_model d_ff params (same paper; Gemma)
// W_up and W_gate column-parallel, W_down row-parallel (Megatron-LM), with
// an optional post-MLP norm on its output before the residual add
// (post_norms, Gemma 2/3). docs/models.md.
#include <string>

#include "models/block_parts.h"

namespace models {

void add_mlp_params(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n);
// Forward: the matmuls (with their backward ones) and the activation, on
// the output of op `in` (its gradient `in_grad`), writing `out`; then the
// post-MLP norm. Returns the op the residual add reads.
std::string add_mlp_forward(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n,
                            const std::string& in, const std::string& in_grad, const std::string& out);
// The backward elementwise ops of the MLP (post norm, activation).
void add_mlp_backward(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n);
// The ops whose backward produces the gradient of the MLP's input.
Names mlp_input_grads(const BlockShape& shape, const BlockNames& n);
void add_mlp_stash(LayerSpec& l, const Dims& d, const BlockShape& shape, const BlockNames& n);

}  // namespace models
