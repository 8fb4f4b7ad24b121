#include "hw/bf16.h"

#include <cfloat>
#include <cmath>
#include <cstring>

namespace hw {

namespace {

std::uint32_t bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float float_of(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Nonzero magnitudes below FLT_MIN become zero of the same sign.
float flush_subnormal(float x) { return (x != 0.0f && std::fabs(x) < FLT_MIN) ? std::copysign(0.0f, x) : x; }

}  // namespace

bf16 bf16::from_float(float f) {
  const std::uint32_t u = bits_of(f);
  if (std::isnan(f)) {
    // 0x0040 is the BF16 quiet bit (top fraction bit); setting it also keeps
    // a NaN whose payload lay only in the dropped low half from becoming inf.
    return from_bits(static_cast<std::uint16_t>((u >> 16) | 0x0040u));
  }
  // Adding 0x7FFF plus the lowest kept bit carries into the kept half exactly
  // when the dropped half is above one half ulp, or equal to it with an odd
  // kept half. FP32 encodings are monotonic in magnitude, so the carry also
  // moves subnormals to normals and the largest finite values to infinity.
  const std::uint32_t lsb = (u >> 16) & 1u;
  return from_bits(static_cast<std::uint16_t>((u + 0x7FFFu + lsb) >> 16));
}

float bf16::to_float() const { return float_of(static_cast<std::uint32_t>(bits) << 16); }

float mxu_mul(bf16 a, bf16 b) { return flush_subnormal(flush_subnormal(a.to_float()) * flush_subnormal(b.to_float())); }

float mxu_add(float x, float y) {
  // A sum of two FP32 values below FLT_MIN is a multiple of 2^-149 and so is
  // exact; flushing after the add therefore equals flushing the exact sum.
  return flush_subnormal(flush_subnormal(x) + flush_subnormal(y));
}

}  // namespace hw
