#pragma once
// Sizes of the stored numbers, and multiplication of sizes that refuses to
// wrap around silently (a huge model or batch must fail loudly, not shrink).
#include <cstdint>
#include <stdexcept>
#include <string>

#include "sim/units.h"

namespace models {

using sim::kBf16Bytes;                      // activations, weights and gradients
constexpr std::uint64_t kTokenIdBytes = 4;  // int32 token ids and labels

inline std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const char* what) {
  std::uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    throw std::overflow_error(std::string(what) + ": " + std::to_string(a) + " x " + std::to_string(b) +
                              " does not fit in 64 bits");
  return r;
}

inline std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, std::uint64_t c, const char* what) {
  return checked_mul(checked_mul(a, b, what), c, what);
}

}  // namespace models
