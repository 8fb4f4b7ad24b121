#pragma once
// Sizes computed from input numbers (elements, bytes, rows x columns) in
// checked 64-bit arithmetic: a product or sum that does not fit throws
// std::overflow_error instead of wrapping to a small, plausible number
// (an HLO f32[2^32, 2^32] once costed as 0 bytes). Every front end (the
// YAML kinds through models::, HLO shapes, SCALE-Sim layers, MaxText's
// model sizes) multiplies sizes through this one type; the caller turns
// the overflow into a located error (exit 2) naming the input.
#include <cstdint>
#include <stdexcept>
#include <string>

namespace sim {

class Size {
 public:
  constexpr Size(std::uint64_t v = 0) : v_(v) {}  // NOLINT: a size is a number
  constexpr std::uint64_t value() const { return v_; }

  // `what` names the quantity in the overflow message ("elements").
  Size times(std::uint64_t b, const char* what) const {
    std::uint64_t r = 0;
    if (__builtin_mul_overflow(v_, b, &r))
      throw std::overflow_error(std::string(what) + ": " + std::to_string(v_) + " x " + std::to_string(b) +
                                " does not fit in 64 bits");
    return Size(r);
  }
  Size plus(std::uint64_t b, const char* what) const {
    std::uint64_t r = 0;
    if (__builtin_add_overflow(v_, b, &r))
      throw std::overflow_error(std::string(what) + ": " + std::to_string(v_) + " + " + std::to_string(b) +
                                " does not fit in 64 bits");
    return Size(r);
  }
  Size operator*(Size b) const { return times(b.v_, "size"); }
  Size operator+(Size b) const { return plus(b.v_, "size"); }

 private:
  std::uint64_t v_;
};

inline std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const char* what) {
  return Size(a).times(b, what).value();
}
inline std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, std::uint64_t c, const char* what) {
  return Size(a).times(b, what).times(c, what).value();
}
inline std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, const char* what) {
  return Size(a).plus(b, what).value();
}

}  // namespace sim
