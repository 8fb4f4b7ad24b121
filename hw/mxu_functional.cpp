#include "hw/mxu_functional.h"

#include <algorithm>

#include "hw/subnormal_flush.h"

namespace hw {

namespace {

// psum[c] = psum[c] + x * w[c], c < n, by the MXU's rule.
void accumulate_row(float* psum, float x, const float* w, std::size_t n) {
  if constexpr (kFpuFlushesSubnormals) {
    for (std::size_t c = 0; c < n; ++c) psum[c] = psum[c] + x * w[c];
  } else {
    const bf16 xb = bf16::from_float(x);  // x is a BF16 value: exact
    for (std::size_t c = 0; c < n; ++c) psum[c] = mxu_add(psum[c], mxu_mul(xb, bf16::from_float(w[c])));
  }
}

float add(float x, float y) {
  if constexpr (kFpuFlushesSubnormals) {
    return x + y;
  } else {
    return mxu_add(x, y);
  }
}

// Output-stationary: every sum runs over the whole k in order from +0.0 in
// its PE (y[i][j] = ((0 + a_i0 b_0j) + a_i1 b_1j) + ...).
std::vector<float> output_stationary(const MxuShape& shape, const bf16* a, const bf16* b) {
  const std::size_t m = shape.m, k = shape.k, n = shape.n;
  std::vector<float> y(m * n, 0.0f), row(n);
  SubnormalFlush flush_mode;
  for (std::size_t q = 0; q < k; ++q) {
    for (std::size_t j = 0; j < n; ++j) row[j] = b[q * n + j].to_float();
    for (std::size_t i = 0; i < m; ++i) accumulate_row(y.data() + i * n, a[i * k + q].to_float(), row.data(), n);
  }
  return y;
}

}  // namespace

std::vector<float> mxu_functional_matmul(const MxuConfig& config, const MxuShape& shape, const bf16* a, const bf16* b) {
  if (config.dataflow == MxuDataflow::os) {
    validate(config);
    validate(shape);
    return output_stationary(shape, a, b);
  }
  // ws and is add the same products in the same order: within a tile of R
  // k-rows, then tile sums in kt order (is tiles A^T by the same R k-rows).
  const MxuTiling tiling = mxu_tiling(config, shape);
  const std::size_t R = config.rows, C = config.cols;
  const std::size_t m = shape.m, k = shape.k, n = shape.n;
  std::vector<float> y(m * n, 0.0f);
  std::vector<float> psum(C), w(R * C);
  SubnormalFlush flush_mode;
  for (std::size_t nt = 0; nt < tiling.n_tiles; ++nt) {
    const std::size_t n0 = nt * C, cols = std::min(C, n - n0);
    for (std::size_t kt = 0; kt < tiling.k_tiles; ++kt) {
      const std::size_t k0 = kt * R, rows = std::min(R, k - k0);
      for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t c = 0; c < cols; ++c) w[r * C + c] = b[(k0 + r) * n + n0 + c].to_float();
      }
      for (std::size_t i = 0; i < m; ++i) {
        std::fill(psum.begin(), psum.begin() + cols, 0.0f);
        for (std::size_t r = 0; r < rows; ++r) {
          accumulate_row(psum.data(), a[i * k + k0 + r].to_float(), w.data() + r * C, cols);
        }
        // A padding row adds 0 * 0 = +0.0, which only turns a -0.0 psum into
        // +0.0; one addition stands for all of them.
        float* out = y.data() + i * n + n0;
        for (std::size_t c = 0; c < cols; ++c) out[c] = add(out[c], rows < R ? add(psum[c], 0.0f) : psum[c]);
      }
    }
  }
  return y;
}

}  // namespace hw
