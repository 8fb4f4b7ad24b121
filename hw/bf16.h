#pragma once
// BF16 storage type and the MXU's scalar arithmetic rule.
//
// Values are stored as BF16 (1 sign, 8 exponent, 7 fraction bits: the top
// half of an IEEE FP32), products are exact in FP32 and accumulation is FP32
// (docs/reference/tpu-specs.md#common.mxu_macs_per_cycle: "All multiplies take bfloat16
// inputs, but all accumulations are performed in FP32").
#include <cstdint>

#include "sim/units.h"

namespace hw {

struct bf16 {
  std::uint16_t bits = 0;

  static constexpr bf16 from_bits(std::uint16_t b) { return bf16{b}; }
  // Round to nearest, ties to even. NaN stays NaN (made quiet, sign and the
  // top payload bits kept); overflow rounds to infinity; FP32 subnormals round
  // into BF16 subnormals (the storage type keeps subnormals).
  static bf16 from_float(float f);
  // Exact: every BF16 value is an FP32 value.
  float to_float() const;
};

// Bytes of one stored BF16 value (sim::kBf16Bytes, which layers that cannot
// see hw use too).
using sim::kBf16Bytes;
static_assert(sizeof(bf16) == kBf16Bytes, "bf16 is stored in 2 bytes");

// The MXU's arithmetic, scalar form (the PE engine does the same with the
// SSE flush-to-zero / denormals-are-zero modes).
//
// Subnormal rule (documented in docs/mxu.md): the MXU flushes subnormals to
// zero of the same sign. A subnormal operand is read as zero, and a product or
// sum whose magnitude is below FLT_MIN (2^-126) becomes zero. Both operations
// are then correctly rounded: a BF16 x BF16 product has at most 16 significant
// bits, so it is exact in FP32 unless it overflows (-> infinity).
float mxu_mul(bf16 a, bf16 b);
float mxu_add(float x, float y);

}  // namespace hw
