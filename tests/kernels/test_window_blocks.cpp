// A flash-attention kernel with a sliding window (models::MatmulSpec::window,
// docs/models.md#sliding-window-attention) computes only the blocks that
// hold a query-key pair of the band (key <= query, query - key < W): each
// block row's blocks and depth against a brute-force scan of the pairs, and
// the kernel's steps falling with the window.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>

#include "kernels/matmul_kernel.h"

namespace test_window_blocks {

namespace {

// Blocks of `edge` along the other sequence axis that hold a pair of the
// band for rows r0 .. r0 + rows - 1; rows_are_queries false: the rows are
// keys (dV = P^T dO, dK = dS^T Q).
std::uint64_t band_blocks(std::uint64_t t, std::uint64_t w, std::uint64_t r0, std::uint64_t rows, std::uint64_t edge,
                          bool rows_are_queries) {
  std::uint64_t blocks = 0;
  for (std::uint64_t c0 = 0; c0 < t; c0 += edge) {
    bool any = false;
    for (std::uint64_t r = r0; r < r0 + rows && !any; ++r)
      for (std::uint64_t c = c0; c < std::min(t, c0 + edge) && !any; ++c) {
        const std::uint64_t q = rows_are_queries ? r : c, k = rows_are_queries ? c : r;
        any = k <= q && q - k < w;
      }
    blocks += any ? 1 : 0;
  }
  return blocks;
}

}  // namespace

TEST_CASE("windowed flash kernel: the blocks of each row are those of the band", "[kernels][window]") {
  const std::uint64_t t = 1024, e = 128;
  kernels::MatmulBlocking b;
  b.bm = b.bk = b.bn = e;
  for (std::uint64_t w : {0u, 100u, 128u, 300u, 1024u}) {
    const std::uint64_t band = w == 0 ? t : w;
    for (std::uint64_t bi = 0; bi < t / e; ++bi) {
      INFO("window " << w << ", block row " << bi);
      using models::Causal;
      const kernels::BlockRow s = kernels::block_row(t, 64, t, b, {false, true, Causal::out_lower, t, w}, bi);
      CHECK(s.blocks == band_blocks(t, band, bi * e, e, e, true));
      const kernels::BlockRow o = kernels::block_row(t, t, 64, b, {true, false, Causal::depth_upto_row, t, w}, bi);
      CHECK(o.depth == e * band_blocks(t, band, bi * e, e, e, true));
      const kernels::BlockRow k = kernels::block_row(t, t, 64, b, {true, false, Causal::depth_from_row, t, w}, bi);
      CHECK(k.depth == e * band_blocks(t, band, bi * e, e, e, false));
    }
  }
}

}  // namespace test_window_blocks
