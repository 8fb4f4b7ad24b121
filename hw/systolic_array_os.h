#pragma once
// The output-stationary array of the PE engine (docs/mxu.md, "Dataflows"):
// every PE holds one sum of Y while rows of A stream in from the left edge
// and columns of B from the top edge. Used by hw::SystolicArray::run.
#include <cstdint>
#include <vector>

#include "hw/bf16.h"
#include "hw/mxu_config.h"

namespace hw {

// a: m x k row-major, b: k x n row-major; config.dataflow == os. Returns
// the cycle of the last useful sum leaving the array, plus one; y gets Y
// (m x n, row-major).
std::uint64_t run_output_stationary(const MxuConfig& config, const MxuShape& shape, const bf16* a, const bf16* b,
                                    std::vector<float>& y);

}  // namespace hw
