#include "hw/mxu_timing.h"

#include <algorithm>

#include "sim/error.h"

namespace hw {

namespace {

[[noreturn]] void too_large() {
  throw sim::ConfigError({}, "mxu", "op too large: its cycle count does not fit in 64 bits");
}

std::uint64_t add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) too_large();
  return r;
}

std::uint64_t mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) too_large();
  return r;
}

// ws: E_j + 1 for a tile whose feeder starts at s_j = R + j * period.
std::uint64_t end_of_tile(std::uint64_t j, std::uint64_t period, std::uint64_t R, std::uint64_t m, std::uint64_t n_j) {
  // s_j + (m-1) + (R-1) + (n_j-1) + 1 = j*period + 2R + m + n_j - 2
  return add(mul(j, period), add(m, 2 * R + n_j - 2));
}

// ws fold-serial: the first cycle after a tile fed from `feed_start` has
// left the array entirely: its last vector enters at feed_start + m - 1 and
// its psum of the last column, padding included, leaves row R-1 (R - 1) +
// (C - 1) cycles later.
std::uint64_t array_empty(std::uint64_t feed_start, const MxuConfig& config, std::uint64_t m) {
  return add(feed_start, add(m, std::uint64_t{config.rows} + config.cols - 2));
}

// ws: cycles between feeder starts of consecutive tiles streaming m vectors.
std::uint64_t ws_period(const MxuConfig& config, std::uint64_t m) {
  const std::uint64_t R = config.rows;
  if (config.schedule == MxuSchedule::fold_serial) return array_empty(R, config, m);
  return config.double_buffer ? std::max<std::uint64_t>(m, R) : add(m, R - 1);
}

// os: E_f + 1 for output tile f of `rows` x `cols` useful sums whose first
// step is injected at s_f = f * period: its last sum, at PE(rows-1, cols-1),
// takes its k-th MAC in cycle s_f + (k-1) + (rows-1) + (cols-1).
std::uint64_t os_end_of_tile(std::uint64_t f, std::uint64_t period, std::uint64_t k, std::uint64_t rows,
                             std::uint64_t cols) {
  return add(mul(f, period), add(k, rows + cols - 2));
}

std::vector<MxuTileTiming> os_schedule(const MxuConfig& config, const MxuShape& shape) {
  const MxuTiling tiling = mxu_tiling(config, shape);
  const std::uint64_t R = config.rows, C = config.cols, k = shape.k;
  const bool serial = config.schedule == MxuSchedule::fold_serial;
  std::vector<MxuTileTiming> tiles(tiling.m_tiles * tiling.n_tiles);
  for (std::uint64_t f = 0; f < tiles.size(); ++f) {
    MxuTileTiming& t = tiles[f];
    t.feed_start = 0;
    // Each column's output bus takes the previous tile's R sums first;
    // fold-serial: its last sum, padding included, has left the array.
    if (f >= 1) {
      const std::uint64_t prev = tiles[f - 1].feed_start;
      t.feed_start = serial ? prev + k + R + C - 2 : std::max(prev + k, prev + R);
    }
    t.load_start = t.feed_start;  // nothing to load
    const std::uint64_t rows = f % tiling.m_tiles == tiling.m_tiles - 1 ? tiling.last_m_rows : R;
    const std::uint64_t cols = f / tiling.m_tiles == tiling.n_tiles - 1 ? tiling.last_n_cols : C;
    t.last_output = t.feed_start + (k - 1) + (rows - 1) + (cols - 1);
  }
  return tiles;
}

std::uint64_t os_cycles(const MxuConfig& config, const MxuShape& shape) {
  const MxuTiling tiling = mxu_tiling(config, shape);
  const std::uint64_t period = mxu_tile_period(config, shape);
  const std::uint64_t tiles = mul(tiling.m_tiles, tiling.n_tiles);
  if (config.schedule == MxuSchedule::fold_serial) return mul(tiles, period);
  // E_f grows with f inside an n-band (period >= R covers a shorter last
  // m-tile), so the candidates are the last tile and, when the last band is
  // narrower, the last tile of the band before it.
  std::uint64_t cycles = os_end_of_tile(tiles - 1, period, shape.k, tiling.last_m_rows, tiling.last_n_cols);
  if (tiling.n_tiles >= 2) {
    const std::uint64_t last_full = tiles - tiling.m_tiles - 1;
    cycles = std::max(cycles, os_end_of_tile(last_full, period, shape.k, tiling.last_m_rows, config.cols));
  }
  return cycles;
}

std::vector<MxuTileTiming> ws_schedule(const MxuConfig& config, const MxuShape& shape) {
  const MxuTiling tiling = mxu_tiling(config, shape);
  const std::uint64_t R = config.rows, m = shape.m;
  const std::uint64_t nb = config.double_buffer ? 2 : 1;
  std::vector<MxuTileTiming> tiles(tiling.count());
  const bool serial = config.schedule == MxuSchedule::fold_serial;
  for (std::uint64_t j = 0; j < tiles.size(); ++j) {
    MxuTileTiming& t = tiles[j];
    t.load_start = 0;
    if (serial && j >= 1) t.load_start = array_empty(tiles[j - 1].feed_start, config, m);
    if (!serial && j >= 1) t.load_start = tiles[j - 1].load_start + R;
    if (!serial && j >= nb) t.load_start = std::max(t.load_start, tiles[j - nb].feed_start + m - 1);
    t.feed_start = t.load_start + R;
    if (j >= 1) t.feed_start = std::max(t.feed_start, tiles[j - 1].feed_start + m);
    const bool last_n_tile = j / tiling.k_tiles == tiling.n_tiles - 1;
    const std::uint64_t n_j = last_n_tile ? tiling.last_n_cols : config.cols;
    t.last_output = t.feed_start + (m - 1) + (R - 1) + (n_j - 1);
  }
  return tiles;
}

std::uint64_t ws_cycles(const MxuConfig& config, const MxuShape& shape) {
  const MxuTiling tiling = mxu_tiling(config, shape);
  const std::uint64_t R = config.rows, m = shape.m;
  const std::uint64_t period = ws_period(config, m);
  const std::uint64_t tiles = mul(tiling.k_tiles, tiling.n_tiles);
  // Fold-serial: every tile takes one period, load to empty array, and the
  // op ends when its last tile has left the array.
  if (config.schedule == MxuSchedule::fold_serial) return mul(tiles, period);
  // E_j grows with j inside an n-tile band of equal width, so the candidates
  // are the op's last tile and, when the last band is narrower, the last tile
  // of the band before it.
  std::uint64_t cycles = end_of_tile(tiles - 1, period, R, m, tiling.last_n_cols);
  if (tiling.n_tiles >= 2) {
    const std::uint64_t last_full = tiles - tiling.k_tiles - 1;
    cycles = std::max(cycles, end_of_tile(last_full, period, R, m, config.cols));
  }
  return cycles;
}

}  // namespace

MxuShape mxu_array_shape(const MxuConfig& config, const MxuShape& shape) {
  return config.dataflow == MxuDataflow::is ? MxuShape{shape.n, shape.k, shape.m} : shape;
}

std::vector<MxuTileTiming> mxu_tile_schedule(const MxuConfig& config, const MxuShape& shape) {
  if (config.dataflow == MxuDataflow::os) return os_schedule(config, shape);
  return ws_schedule(config, mxu_array_shape(config, shape));
}

std::uint64_t mxu_tile_period(const MxuConfig& config, const MxuShape& shape) {
  if (config.dataflow == MxuDataflow::os) {
    const std::uint64_t R = config.rows;
    if (config.schedule == MxuSchedule::fold_serial) return add(shape.k, R + config.cols - 2);
    return std::max<std::uint64_t>(shape.k, R);
  }
  return ws_period(config, mxu_array_shape(config, shape).m);
}

std::uint64_t mxu_tile_cycles(const MxuConfig& config, const MxuShape& shape) {
  if (config.dataflow == MxuDataflow::os) return os_cycles(config, shape);
  return ws_cycles(config, mxu_array_shape(config, shape));
}

}  // namespace hw
