#pragma once
// What each chip must hold after a collective, computed directly from every
// chip's input by the definition of the op (no schedules, no messages), to
// check functional runs.
#include <cstdint>
#include <vector>

#include "interconnect/algorithms.h"
#include "interconnect/collective_spec.h"

namespace interconnect {

// inputs[chip] as given to Collective::set_input.
std::vector<double> expected_output(const CollectivePlan& plan, const CollectiveSpec& spec,
                                    const std::vector<std::vector<double>>& inputs, int chip);

// A deterministic input whose sums over up to 2^20 chips are exact in double.
std::vector<double> test_pattern(int chip, std::uint64_t elements);

}  // namespace interconnect
