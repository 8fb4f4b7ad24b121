// BF16 storage and MXU arithmetic against references computed differently:
// field decoding with ldexp, nearest-neighbour search over a table of all
// BF16 values, exact products and sums in double.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "hw/bf16.h"
#include "test_mxu_reference.h"

namespace test_bf16 {

using hw::bf16;
using mxu_test::decode_bf16;

namespace {

float float_from_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

std::uint32_t bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

bool is_nan_bits(std::uint16_t b) { return (b & 0x7F80) == 0x7F80 && (b & 0x7F) != 0; }

// Round-to-nearest-even to BF16 by search: every non-negative finite BF16
// value in increasing order (index = bit pattern), then 2^128 standing for
// +inf, which is where IEEE overflow rounding sends magnitudes at or above
// max + half an ulp.
class NearestBf16 {
 public:
  NearestBf16() {
    for (std::uint32_t b = 0; b < 0x7F80; ++b) table_.push_back(decode_bf16(static_cast<std::uint16_t>(b)));
    table_.push_back(std::ldexp(1.0, 128));
  }

  std::uint16_t operator()(float x) const {
    const double v = std::fabs(static_cast<double>(x));
    const std::uint16_t sign = std::signbit(x) ? 0x8000 : 0;
    const std::size_t hi = std::upper_bound(table_.begin(), table_.end(), v) - table_.begin();
    const std::size_t lo = hi - 1;  // table_[lo] <= v < table_[hi]; v < 2^128 always
    std::size_t pick;
    if (table_[lo] == v) {
      pick = lo;
    } else {
      const double below = v - table_[lo], above = table_[hi] - v;  // exact: float vs 8-bit values
      pick = below < above ? lo : above < below ? hi : (lo % 2 == 0 ? lo : hi);
    }
    return static_cast<std::uint16_t>(sign | pick);
  }

 private:
  std::vector<double> table_;
};

}  // namespace

TEST_CASE("bf16 to_float is exact for all 65536 patterns", "[bf16]") {
  for (std::uint32_t b = 0; b <= 0xFFFF; ++b) {
    const bf16 x = bf16::from_bits(static_cast<std::uint16_t>(b));
    const double expected = decode_bf16(x.bits);
    const float got = x.to_float();
    if (std::isnan(expected)) {
      REQUIRE(std::isnan(got));
      REQUIRE(std::signbit(got) == bool(b & 0x8000));
    } else {
      REQUIRE(static_cast<double>(got) == expected);
      REQUIRE(std::signbit(got) == std::signbit(expected));
    }
  }
}

TEST_CASE("bf16 round trip keeps every pattern, NaNs stay NaN", "[bf16]") {
  for (std::uint32_t b = 0; b <= 0xFFFF; ++b) {
    const std::uint16_t bits = static_cast<std::uint16_t>(b);
    const std::uint16_t back = bf16::from_float(bf16::from_bits(bits).to_float()).bits;
    if (!is_nan_bits(bits)) {
      REQUIRE(back == bits);
    } else {
      REQUIRE(is_nan_bits(back));
      REQUIRE((back & 0x8000) == (bits & 0x8000));  // sign kept
      REQUIRE((back & 0x0040) != 0);                // quiet
      REQUIRE((back | 0x0040) == (bits | 0x0040));  // payload kept
    }
  }
}

TEST_CASE("bf16 rounds exact halfway cases to even", "[bf16]") {
  const float one = 1.0f;
  // 1 + 2^-8 lies halfway between 1 (fraction 0, even) and 1 + 2^-7 (odd).
  CHECK(bf16::from_float(std::ldexp(1.0f, -8) + one).to_float() == 1.0f);
  CHECK(bf16::from_float(-(std::ldexp(1.0f, -8) + one)).to_float() == -1.0f);
  // 1 + 3 * 2^-8 lies halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even).
  CHECK(bf16::from_float(one + 3 * std::ldexp(1.0f, -8)).to_float() == one + std::ldexp(1.0f, -6));
  CHECK(bf16::from_float(-(one + 3 * std::ldexp(1.0f, -8))).to_float() == -(one + std::ldexp(1.0f, -6)));
  // One FP32 ulp off the tie decides by distance.
  CHECK(bf16::from_float(std::nextafter(one + std::ldexp(1.0f, -8), 2.0f)).to_float() == one + std::ldexp(1.0f, -7));
  CHECK(bf16::from_float(std::nextafter(one + 3 * std::ldexp(1.0f, -8), 0.0f)).to_float() ==
        one + std::ldexp(1.0f, -7));
  // Subnormal range: BF16 spacing 2^-133. 2^-134 ties to 0; 3 * 2^-134 ties to 2^-132.
  CHECK(bf16::from_float(std::ldexp(1.0f, -134)).bits == 0x0000);
  CHECK(bf16::from_float(-std::ldexp(1.0f, -134)).bits == 0x8000);
  CHECK(bf16::from_float(3 * std::ldexp(1.0f, -134)).to_float() == std::ldexp(1.0f, -132));
  // Between the largest BF16, (2 - 2^-7) * 2^127 (odd), and 2^128 (+inf, even).
  CHECK(bf16::from_float(std::ldexp(2.0f - std::ldexp(1.0f, -8), 127)).bits == 0x7F80);
  CHECK(bf16::from_float(std::nextafter(std::ldexp(2.0f - std::ldexp(1.0f, -8), 127), 0.0f)).bits == 0x7F7F);
  CHECK(bf16::from_float(-FLT_MAX).bits == 0xFF80);

  // Every tie, both signs, against the search reference (which breaks ties
  // by the parity of the neighbours, not by bit arithmetic).
  const NearestBf16 nearest;
  for (std::uint32_t h = 0; h < 0x7F80; ++h) {
    for (std::uint32_t sign : {0u, 0x80000000u}) {
      const float tie = float_from_bits(sign | (h << 16) | 0x8000u);
      REQUIRE(bf16::from_float(tie).bits == nearest(tie));
      REQUIRE((bf16::from_float(tie).bits & 1) == 0);
    }
  }
}

TEST_CASE("bf16 rounding of 2e6 random FP32 patterns matches nearest-value search", "[bf16]") {
  const NearestBf16 nearest;
  std::mt19937 rng(20240601);
  for (int i = 0; i < 2000000; ++i) {
    const std::uint32_t u = static_cast<std::uint32_t>(rng());
    const float f = float_from_bits(u);
    const std::uint16_t got = bf16::from_float(f).bits;
    if (std::isnan(f)) {
      REQUIRE(is_nan_bits(got));
      REQUIRE(bool(got & 0x8000) == bool(u & 0x80000000u));
    } else {
      REQUIRE(got == nearest(f));
    }
  }
}

TEST_CASE("bf16 special values", "[bf16]") {
  CHECK(bf16::from_float(0.0f).bits == 0x0000);
  CHECK(bf16::from_float(-0.0f).bits == 0x8000);
  CHECK(bf16::from_float(INFINITY).bits == 0x7F80);
  CHECK(bf16::from_float(-INFINITY).bits == 0xFF80);
  // A NaN whose payload lies only in the dropped half must not become inf.
  const bf16 low_payload = bf16::from_float(float_from_bits(0xFF800001u));
  CHECK(is_nan_bits(low_payload.bits));
  CHECK((low_payload.bits & 0x8000) != 0);
  // Largest FP32 subnormal rounds up to the smallest normal BF16.
  CHECK(bf16::from_float(float_from_bits(0x007FFFFFu)).bits == 0x0080);
  CHECK(bf16::from_float(float_from_bits(0x00010000u)).bits == 0x0001);
}

TEST_CASE("bf16 mxu_mul equals the exact product, subnormals flushed", "[bf16]") {
  std::mt19937 rng(7);
  for (int i = 0; i < 1000000; ++i) {
    const bf16 a = bf16::from_bits(static_cast<std::uint16_t>(rng()));
    const bf16 b = bf16::from_bits(static_cast<std::uint16_t>(rng()));
    const float got = hw::mxu_mul(a, b), want = mxu_test::ref_mul(a, b);
    if (std::isnan(want)) {
      REQUIRE(std::isnan(got));
    } else {
      REQUIRE(bits_of(got) == bits_of(want));  // including the sign of zero
    }
  }
  // Products of normal operands in range are exact: (1 + 127/128)^2 needs 16 bits.
  const bf16 x = bf16::from_bits(0x3FFF);
  CHECK(static_cast<double>(hw::mxu_mul(x, x)) == decode_bf16(0x3FFF) * decode_bf16(0x3FFF));
}

TEST_CASE("bf16 subnormal rule of the MXU", "[bf16]") {
  const bf16 smallest_subnormal = bf16::from_bits(0x0001);  // 2^-133
  const bf16 big = bf16::from_float(std::ldexp(1.0f, 100));
  // A subnormal operand reads as zero (else 2^-33), keeping the product's sign.
  CHECK(hw::mxu_mul(smallest_subnormal, big) == 0.0f);
  CHECK(std::signbit(hw::mxu_mul(bf16::from_bits(0x8001), big)));
  // 2^-64 * 2^-63 = 2^-127 < FLT_MIN: flushed. 2^-63 * 2^-63 = 2^-126: kept.
  const bf16 e64 = bf16::from_float(std::ldexp(1.0f, -64)), e63 = bf16::from_float(std::ldexp(1.0f, -63));
  CHECK(hw::mxu_mul(e64, e63) == 0.0f);
  CHECK(hw::mxu_mul(e63, e63) == FLT_MIN);
  // 1.5 * 2^-126 - 2^-126 = 2^-127: flushed to +0; the mirror case to -0.
  CHECK(bits_of(hw::mxu_add(1.5f * FLT_MIN, -FLT_MIN)) == 0x00000000u);
  CHECK(bits_of(hw::mxu_add(-1.5f * FLT_MIN, FLT_MIN)) == 0x80000000u);
  // An FP32 subnormal operand of an add reads as zero.
  CHECK(hw::mxu_add(std::ldexp(1.0f, -130), 0.0f) == 0.0f);
  CHECK(hw::mxu_add(std::ldexp(1.0f, -130), 1.0f) == 1.0f);
  // The storage type keeps subnormals.
  CHECK(bf16::from_float(std::ldexp(1.0f, -130)).to_float() == std::ldexp(1.0f, -130));
}

TEST_CASE("bf16 mxu_add is the correctly rounded FP32 sum under the rule", "[bf16]") {
  std::mt19937 rng(11);
  // Exponents near the subnormal boundary and around 1, so that flushes,
  // cancellations and roundings all occur.
  std::uniform_int_distribution<std::uint32_t> exponent_field(0, 40);
  auto operand = [&]() {
    const std::uint32_t e = rng() % 2 ? exponent_field(rng) : 110 + exponent_field(rng);
    return float_from_bits((rng() & 0x80000000u) | (e << 23) | (rng() & 0x7FFFFFu));
  };
  for (int i = 0; i < 1000000; ++i) {
    const float x = operand(), y = operand();
    REQUIRE(bits_of(hw::mxu_add(x, y)) == bits_of(mxu_test::ref_add(x, y)));
  }
}

}  // namespace test_bf16
