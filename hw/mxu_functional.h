#pragma once
// The values an MXU op produces, without stepping the array: the same tiles,
// the same order of FP32 additions and the same subnormal rule as the PE
// engine, so the results are bit-identical to it. Lets tile-fidelity runs
// carry real values (functional mode) at host-GEMM speed.
#include <vector>

#include "hw/bf16.h"
#include "hw/mxu_config.h"

namespace hw {

// a: m x k row-major, b: k x n row-major; returns Y, m x n row-major.
// ws and is (the same additions): for each weight tile, column c's psum runs down the array from +0.0 over
// the tile's R rows (padding rows add +0.0); Y accumulates tile psums in kt
// order from +0.0. os: each sum runs over all of k in order from +0.0.
std::vector<float> mxu_functional_matmul(const MxuConfig& config, const MxuShape& shape, const bf16* a, const bf16* b);

}  // namespace hw
