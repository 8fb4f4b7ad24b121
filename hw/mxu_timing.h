#pragma once
// Tile-fidelity timing of one MXU op, in closed form (docs/mxu.md derives it
// from the hardware rules that the PE engine in systolic_array.h obeys).
//
// Cycle 0 is the first weight-load cycle of the op's first tile (os: the
// cycle the feeder injects the first step, as nothing is loaded); the op ends
// with the cycle in which its last useful result leaves the array's bottom
// edge, so an op of `cycles` cycles occupies cycles 0 .. cycles-1.
#include <cstdint>
#include <vector>

#include "hw/mxu_config.h"

namespace hw {

// When one weight tile j is loaded, streamed and drained (all in cycles).
struct MxuTileTiming {
  std::uint64_t load_start;   // L_j: column 0's staging chain starts shifting
  std::uint64_t feed_start;   // s_j: the feeder injects the tile's vector 0
  std::uint64_t last_output;  // E_j: the tile's last useful psum leaves row R-1
};

// The tile recurrence, one entry per tile (O(tiles)). Reference for
// mxu_tile_cycles and the schedule the walk-through explains:
//   L_0 = 0;  L_j = max(L_{j-1} + R, s_{j-nb} + m - 1)   (nb = 2 or 1)
//   s_j = max(L_j + R, s_{j-1} + m)
//   E_j = s_j + (m - 1) + (R - 1) + (n_j - 1)
// With the fold_serial schedule, L_j = s_{j-1} + m + R + C - 2: the array is
// empty (padded columns included) before the next tile's weights enter.
// is: the same for the ws op of mxu_array_shape (tiles of A^T, B's columns
// streaming). os (tiles of Y, nothing to load, L_f = s_f):
//   s_0 = 0;  s_f = max(s_{f-1} + k, s_{f-1} + R)   (fold-serial: s_{f-1} + k + R + C - 2)
//   E_f = s_f + (k - 1) + (rows_f - 1) + (cols_f - 1)
std::vector<MxuTileTiming> mxu_tile_schedule(const MxuConfig& config, const MxuShape& shape);

// The shape of the weight-stationary op the array runs: the op itself for
// ws and os, {n, k, m} for is (Y^T = B^T A^T: A^T's tiles are stationary
// and B's columns stream as the "activations"; docs/mxu.md, "Dataflows").
MxuShape mxu_array_shape(const MxuConfig& config, const MxuShape& shape);

// Cycles between feeder starts of consecutive tiles in steady state (which
// the recurrence reaches from tile 1 on). ws: max(m, R) with double-buffered
// weights, m + R - 1 without; 2R + C + m - 2 fold-serial; is: the same with
// n for m. os: max(k, R); k + R + C - 2 fold-serial.
std::uint64_t mxu_tile_period(const MxuConfig& config, const MxuShape& shape);

// Cycles of one op = max_j E_j + 1, in O(1): s_j = R + j * period for every
// j (proved in docs/mxu.md), so only the last tile and the last full-width
// tile can end last. Fold-serial: tiles x period, the op ending when its
// last tile has left the array (SCALE-Sim's count plus one). Throws sim::ConfigError on a bad config or shape, or
// when the count does not fit in 64 bits.
std::uint64_t mxu_tile_cycles(const MxuConfig& config, const MxuShape& shape);

}  // namespace hw
