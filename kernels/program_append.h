#pragma once
// Splices one program into another, as a compiler concatenates kernels:
// op indices are shifted, ops that had no dependencies wait for `after`.
#include <string>
#include <vector>

#include "hw/program.h"

namespace kernels {

// Returns the indices (in dst) of src's sink ops: its stores to HBM (a
// blocked kernel ends with them), or else the ops no other op of src waits
// for (every core's kernel op): when they are done, all of src is.
std::vector<std::uint32_t> append_program(hw::Program& dst, const hw::Program& src,
                                          const std::vector<std::uint32_t>& after, const std::string& name_suffix);

}  // namespace kernels
