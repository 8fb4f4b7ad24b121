#pragma once
// Host references for the BF16 and MXU tests, written independently of
// hw/: BF16 values are decoded from their fields with ldexp, and arithmetic
// is done exactly in double with the subnormal rule applied by hand.
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "hw/bf16.h"
#include "hw/mxu_config.h"

namespace mxu_test {

// Value of a BF16 bit pattern from its sign, exponent and fraction fields.
inline double decode_bf16(std::uint16_t bits) {
  const int sign = bits >> 15, exponent = (bits >> 7) & 0xFF, fraction = bits & 0x7F;
  double magnitude;
  if (exponent == 0xFF) {
    magnitude = fraction == 0 ? INFINITY : NAN;
  } else if (exponent == 0) {
    magnitude = std::ldexp(fraction, -126 - 7);
  } else {
    magnitude = std::ldexp(128 + fraction, exponent - 127 - 7);
  }
  return sign ? -magnitude : magnitude;
}

// The MXU's rule on an exact value: nonzero magnitudes below 2^-126 become
// zero of the same sign.
inline double flush(double x) { return (x != 0.0 && std::fabs(x) < std::ldexp(1.0, -126)) ? std::copysign(0.0, x) : x; }

// Exact product of two BF16 operands as the MXU computes it, as an FP32.
inline float ref_mul(hw::bf16 a, hw::bf16 b) {
  const double exact = flush(decode_bf16(a.bits)) * flush(decode_bf16(b.bits));  // <= 16 bits: exact
  return static_cast<float>(flush(exact));                                       // exact, or infinity on overflow
}

// FP32 sum under the rule. A sum of two floats computed in double and then
// rounded to float is correctly rounded (double has more than 2 * 24 + 2
// bits, Figueroa 1995), and a sum below 2^-126 is exact in double.
inline float ref_add(float x, float y) { return static_cast<float>(flush(flush(x) + flush(y))); }

// Y = A x B in the MXU's order.
// ws and is: per weight tile (nt outer, kt inner) each column's psum runs
// down all R rows from +0.0 (padding rows add 0 * 0); Y accumulates tile
// psums in kt order from +0.0. (An is array holds A^T's tiles of R k-rows
// and adds the same products in the same order.)
// os: every sum stays in its PE and runs over all of k in order from +0.0.
inline std::vector<float> reference_matmul(const hw::MxuConfig& cfg, const hw::MxuShape& s,
                                           const std::vector<hw::bf16>& a, const std::vector<hw::bf16>& b) {
  // Operands as read by the MXU (subnormals as zero), decoded once.
  auto read = [](const std::vector<hw::bf16>& v) {
    std::vector<double> out(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) out[i] = flush(decode_bf16(v[i].bits));
    return out;
  };
  const std::vector<double> da = read(a), db = read(b);
  const std::size_t R = cfg.rows, C = cfg.cols;
  std::vector<float> y(s.m * s.n, 0.0f);
  if (cfg.dataflow == hw::MxuDataflow::os) {
    for (std::size_t i = 0; i < s.m; ++i) {
      for (std::size_t j = 0; j < s.n; ++j) {
        float sum = 0.0f;
        for (std::size_t q = 0; q < s.k; ++q)
          sum = ref_add(sum, static_cast<float>(flush(da[i * s.k + q] * db[q * s.n + j])));
        y[i * s.n + j] = sum;
      }
    }
    return y;
  }
  for (std::size_t n0 = 0; n0 < s.n; n0 += C) {
    for (std::size_t k0 = 0; k0 < s.k; k0 += R) {
      for (std::size_t i = 0; i < s.m; ++i) {
        for (std::size_t c = n0; c < n0 + C && c < s.n; ++c) {
          float psum = 0.0f;
          for (std::size_t r = 0; r < R; ++r) {
            const std::size_t kk = k0 + r;
            // Exact (<= 16 bits), or infinity on overflow.
            const float product = kk < s.k ? static_cast<float>(flush(da[i * s.k + kk] * db[kk * s.n + c])) : 0.0f;
            psum = ref_add(psum, product);
          }
          y[i * s.n + c] = ref_add(y[i * s.n + c], psum);
        }
      }
    }
  }
  return y;
}

// Equal as the tests compare results: +0 == -0, NaN == NaN.
inline bool same_value(float x, float y) { return x == y || (std::isnan(x) && std::isnan(y)); }

// BF16 operands that exercise rounding (random fractions), the subnormal
// rule (tiny products and sums near 2^-126, subnormal operands) and exact
// small integers; always finite.
inline hw::bf16 random_operand(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> kind(0, 99), fraction(0, 127), sign(0, 1);
  const std::uint16_t s = static_cast<std::uint16_t>(sign(rng) << 15);
  const int k = kind(rng);
  auto pattern = [&](int exponent_field) {
    return hw::bf16::from_bits(static_cast<std::uint16_t>(s | (exponent_field << 7) | fraction(rng)));
  };
  if (k < 40) return hw::bf16::from_float(static_cast<float>(std::uniform_int_distribution<int>(-8, 8)(rng)));
  if (k < 70) return pattern(127 + std::uniform_int_distribution<int>(-20, 20)(rng));
  if (k < 85) return pattern(127 + std::uniform_int_distribution<int>(-64, -61)(rng));  // products near 2^-126
  if (k < 95) return hw::bf16::from_bits(static_cast<std::uint16_t>(s | (1 + fraction(rng) % 127)));  // subnormal
  return hw::bf16::from_bits(s);                                                                      // +-0
}

}  // namespace mxu_test
