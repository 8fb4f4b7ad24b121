#pragma once
// A 2-D convolution layer as SCALE-Sim describes one (a row of its topology
// CSV: IFMAP height and width, filter height and width, channels, filters,
// strides; no padding, no dilation) and the GEMM it becomes under im2col.
//
// Output size, SCALE-Sim's convention (docs/scalesim.md#convolution-layers):
//   Ho = ceil((H - Fh + Sh) / Sh) = ceil((H - Fh) / Sh) + 1, likewise Wo:
// when the stride does not divide H - Fh, a last, partial window counts
// (224 x 224 with 11 x 11 filters at stride 4 gives 55 x 55, not 54 x 54).
// im2col: each output pixel is one row of the streamed operand, its receptive
// field (Fh x Fw x C) one row's contraction, each filter one output column:
//   M = Ho * Wo (per image), K = Fh * Fw * C, N = filters,
// so the layer is M * K * N = Ho Wo Fh Fw C N multiply-accumulates.
#include <cstdint>
#include <string>

namespace models {

struct ConvLayer {
  std::string name;
  std::uint64_t ifmap_h = 0, ifmap_w = 0;
  std::uint64_t filter_h = 0, filter_w = 0;
  std::uint64_t channels = 0, filters = 0;
  std::uint64_t stride_h = 1, stride_w = 1;

  std::uint64_t ofmap_h() const;
  std::uint64_t ofmap_w() const;
};

// The GEMM of a layer: Y (m x n) = A (m x k) x B (k x n).
struct GemmShape {
  std::uint64_t m = 0, k = 0, n = 0;
  std::uint64_t macs() const { return m * k * n; }
};

// im2col of `batch` images: M = batch * Ho * Wo, K = Fh * Fw * C, N = filters.
// Throws std::invalid_argument when a size is zero or a filter is larger
// than its input (the callers check these first, located).
GemmShape im2col(const ConvLayer& layer, std::uint64_t batch = 1);

// A GEMM row of a SCALE-Sim topology (M, N, K) as the convolution SCALE-Sim
// runs for it: an M x K input, a 1 x K filter, one channel, N filters,
// stride 1; its im2col is exactly M x K x N.
ConvLayer gemm_as_conv(const std::string& name, std::uint64_t m, std::uint64_t n, std::uint64_t k);

}  // namespace models
