#pragma once
// Sizes of the stored numbers, and multiplication of sizes that refuses to
// wrap around silently (a huge model or batch must fail loudly, not shrink).
#include <cstdint>
#include <stdexcept>
#include <string>

#include "sim/checked_size.h"
#include "sim/units.h"

namespace models {

using sim::kBf16Bytes;                      // activations, weights and gradients
constexpr std::uint64_t kTokenIdBytes = 4;  // int32 token ids and labels

// Checked size arithmetic, one type for every front end (sim/checked_size.h).
using sim::checked_add;
using sim::checked_mul;

}  // namespace models
