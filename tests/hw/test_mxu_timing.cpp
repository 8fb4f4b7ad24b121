// Tile-fidelity timing: hand-worked schedules, the O(1) form against the
// tile recurrence, and the steady-state throughput claims.
#include <catch2/catch.hpp>
#include <random>

#include "hw/mxu_timing.h"
#include "sim/error.h"

namespace test_mxu_timing {

using hw::MxuConfig;
using hw::MxuShape;

namespace {

std::uint64_t recurrence_cycles(const MxuConfig& cfg, const MxuShape& s) {
  std::uint64_t last = 0;
  for (const hw::MxuTileTiming& t : hw::mxu_tile_schedule(cfg, s)) last = std::max(last, t.last_output);
  return last + 1;
}

}  // namespace

TEST_CASE("mxu timing: hand-worked schedules", "[mxu]") {
  // 2x2 array, one tile (m = k = n = 2). Column 0 shifts weights in cycles
  // 0-1 and latches at the end of 1; column 1 shifts in 1-2. Vector 0 enters
  // PE(0,0) in cycle 2 (s_0 = L_0 + R), reaches PE(1,1) in cycle 4; vector 1
  // follows one cycle later and leaves PE(1,1) at the end of cycle 5: 6 cycles.
  CHECK(hw::mxu_tile_cycles({2, 2, true}, {2, 2, 2}) == 6);
  CHECK(hw::mxu_tile_cycles({2, 2, false}, {2, 2, 2}) == 6);

  // 2x2, m = 3, k = 4 (two k-tiles), n = 2.
  // Double-buffered: L_1 = L_0 + R = 2 (tile 1 goes to the other bank);
  // s_0 = 2, s_1 = max(L_1 + R, s_0 + m) = max(4, 5) = 5;
  // E_1 = 5 + (m-1) + (R-1) + (n-1) = 9 -> 10 cycles.
  CHECK(hw::mxu_tile_cycles({2, 2, true}, {3, 4, 2}) == 10);
  // One bank: tile 1 may latch only after tile 0's last vector (injected in
  // cycle s_0 + m - 1 = 4) passed: L_1 = 4, s_1 = 6, E_1 = 10 -> 11 cycles.
  CHECK(hw::mxu_tile_cycles({2, 2, false}, {3, 4, 2}) == 11);

  // A narrow last n-tile ends before the full tile ahead of it: R = 2,
  // C = 8, m = 1, k = 2, n = 9. s_0 = 2, s_1 = 4. E_0 = 2 + 0 + 1 + 7 = 10,
  // E_1 = 4 + 0 + 1 + 0 = 5, so the op takes 11 cycles, set by tile 0.
  CHECK(hw::mxu_tile_cycles({2, 8, true}, {1, 2, 9}) == 11);

  // 128x128, one full tile: s_0 = 128, E_0 = 128 + 3 * 127 = 509 -> 510.
  CHECK(hw::mxu_tile_cycles({128, 128, true}, {128, 128, 128}) == 510);
}

TEST_CASE("mxu timing: the schedule obeys the loader and feeder rules", "[mxu]") {
  // Checks each tile's L_j and s_j against the rules as stated, tile pair by
  // tile pair, for the 2x2 / m = 3 / k = 4 case worked out above.
  const auto db = hw::mxu_tile_schedule({2, 2, true}, {3, 4, 2});
  REQUIRE(db.size() == 2);
  CHECK(db[0].load_start == 0);
  CHECK(db[0].feed_start == 2);
  CHECK(db[1].load_start == 2);
  CHECK(db[1].feed_start == 5);
  const auto sb = hw::mxu_tile_schedule({2, 2, false}, {3, 4, 2});
  CHECK(sb[1].load_start == 4);
  CHECK(sb[1].feed_start == 6);
  CHECK(sb[1].last_output == 10);
}

TEST_CASE("mxu timing: O(1) cycles equal the tile recurrence", "[mxu]") {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 3000; ++i) {
    MxuConfig cfg;
    cfg.rows = 2 + rng() % 255;
    cfg.cols = 2 + rng() % 255;
    cfg.double_buffer = rng() % 2;
    // Mostly a few tiles; sometimes many (up to ~1e4 tiles) and long streams.
    const std::uint64_t scale = rng() % 4 == 0 ? 100 : 3;
    MxuShape s{1 + rng() % (scale * cfg.rows * (rng() % 2 ? 1 : 10)), 1 + rng() % (scale * cfg.rows),
               1 + rng() % (scale * cfg.cols)};
    for (hw::MxuDataflow dataflow : {hw::MxuDataflow::ws, hw::MxuDataflow::os, hw::MxuDataflow::is}) {
      cfg.dataflow = dataflow;
      INFO(hw::to_string(dataflow) << " R=" << cfg.rows << " C=" << cfg.cols << " db=" << cfg.double_buffer
                                   << " m=" << s.m << " k=" << s.k << " n=" << s.n);
      REQUIRE(hw::mxu_tile_cycles(cfg, s) == recurrence_cycles(cfg, s));
    }
  }
}

TEST_CASE("mxu timing: hand-worked output- and input-stationary schedules", "[mxu]") {
  MxuConfig os{2, 2, true}, is{2, 2, true};
  os.dataflow = hw::MxuDataflow::os;
  is.dataflow = hw::MxuDataflow::is;
  // os, 2x2, m = k = n = 2: one output tile, steps q = 0, 1 injected in
  // cycles 0, 1; PE(r,c) takes step q in cycle q + r + c, so PE(1,1) ends
  // in cycle 3: 4 cycles (the ws array takes 6: it loads weights first).
  CHECK(hw::mxu_tile_cycles(os, {2, 2, 2}) == 4);
  // os, 2x2, m = 4, k = 1, n = 2: two output tiles (rows 0-1, 2-3). Tile 1
  // may start only in cycle 2 = R: had it started in cycle 1, its PE(0,0)
  // would drive column 0's bus in cycle 1 together with tile 0's PE(1,0).
  // E_1 = 2 + 0 + 1 + 1 = 4 -> 5 cycles. Fold-serial: 2 x (1 + 2 + 2 - 2).
  CHECK(hw::mxu_tile_cycles(os, {4, 1, 2}) == 5);
  MxuConfig os_serial = os;
  os_serial.schedule = hw::MxuSchedule::fold_serial;
  CHECK(hw::mxu_tile_cycles(os_serial, {4, 1, 2}) == 6);
  // os, R = 2, C = 8, m = k = 1, n = 9: tile 0 (8 columns) starts in cycle
  // 0 and ends in 0 + 0 + 0 + 7 = 7; tile 1 (1 column) starts in cycle 2 and
  // ends in cycle 2: 8 cycles, set by tile 0.
  MxuConfig os_wide{2, 8, true};
  os_wide.dataflow = hw::MxuDataflow::os;
  CHECK(hw::mxu_tile_cycles(os_wide, {1, 1, 9}) == 8);
  // os, k much longer than R: one tile per k cycles, each new m-tile adds k.
  CHECK(hw::mxu_tile_cycles(os, {6, 100, 2}) - hw::mxu_tile_cycles(os, {4, 100, 2}) == 100);
  // is, 2x2, m = 3, k = 4, n = 2: A^T's tiles (2 k-rows x 2 m-columns: two
  // k-tiles x two m-tiles, the last one column wide) are stationary and B's
  // two columns stream. L_j = 2j, s_j = 2 + 2j (max(n, R) = 2 apart);
  // E_3 = 8 + (2-1) + (2-1) + (1-1) = 10 -> 11 cycles (ws on the same op: 10).
  CHECK(hw::mxu_tile_cycles(is, {3, 4, 2}) == 11);
  const auto sched = hw::mxu_tile_schedule(is, {3, 4, 2});
  REQUIRE(sched.size() == 4);
  CHECK(sched[3].load_start == 6);
  CHECK(sched[3].feed_start == 8);
  CHECK(sched[3].last_output == 10);
}

TEST_CASE("mxu timing: steady state is one tile per period", "[mxu]") {
  // Adding one more k-tile (same single n-tile) adds exactly one period:
  // max(m, R) with double-buffered weights, m + R - 1 without.
  for (bool db : {true, false}) {
    for (std::uint64_t m : {1, 7, 64, 127, 128, 129, 1000}) {
      const MxuConfig cfg{128, 128, db};
      const std::uint64_t want = db ? std::max<std::uint64_t>(m, 128) : m + 127;
      for (std::uint64_t tiles : {2, 3, 10}) {
        const std::uint64_t a = hw::mxu_tile_cycles(cfg, {m, tiles * 128, 128});
        const std::uint64_t b = hw::mxu_tile_cycles(cfg, {m, (tiles + 1) * 128, 128});
        CHECK(b - a == want);
      }
      CHECK(hw::mxu_tile_period(cfg, {m, 128, 128}) == want);
    }
  }
  // os: one more m-tile (same single n-tile) adds max(k, R).
  for (std::uint64_t k : {1, 7, 127, 128, 129, 1000}) {
    MxuConfig os{128, 128, true};
    os.dataflow = hw::MxuDataflow::os;
    const std::uint64_t want = std::max<std::uint64_t>(k, 128);
    for (std::uint64_t tiles : {2, 3, 10}) {
      CHECK(hw::mxu_tile_cycles(os, {(tiles + 1) * 128, k, 128}) - hw::mxu_tile_cycles(os, {tiles * 128, k, 128}) ==
            want);
    }
    CHECK(hw::mxu_tile_period(os, {128, k, 128}) == want);
  }
  // Large m: the array streams one activation row per cycle, which is the
  // published rate of bf16[8,128] @ bf16[128,128] per 8 cycles
  // (docs/reference/tpu-specs.md#common.mxu_op) once the weights are resident.
  const MxuConfig cfg{128, 128, true};
  CHECK(hw::mxu_tile_cycles(cfg, {8 * 1000 + 8, 128, 128}) - hw::mxu_tile_cycles(cfg, {8 * 1000, 128, 128}) == 8);
}

TEST_CASE("mxu timing: huge shapes in O(1), bad input rejected", "[mxu]") {
  const MxuConfig cfg{128, 128, true};
  // A 2^20 cube on 128x128: 8192 x 8192 tiles, all full; period m = 2^20
  // (m >= R), so the last tile starts at s = R + (tiles - 1) * m and ends
  // (m - 1) + (R - 1) + (C - 1) cycles later.
  const std::uint64_t big = 1ull << 20;
  const std::uint64_t tiles = (big / 128) * (big / 128);
  CHECK(hw::mxu_tile_cycles(cfg, {big, big, big}) == (tiles - 1) * big + 2 * 128 + big + 128 - 2);
  CHECK_THROWS_AS(hw::mxu_tile_cycles(cfg, {1ull << 40, 1ull << 40, 1ull << 40}), sim::ConfigError);
  CHECK_THROWS_AS(hw::mxu_tile_cycles(cfg, {0, 1, 1}), sim::ConfigError);
  CHECK_THROWS_AS(hw::mxu_tile_cycles({1, 128, true}, {1, 1, 1}), sim::ConfigError);
  CHECK_THROWS_AS(hw::mxu_tile_cycles({128, 257, true}, {1, 1, 1}), sim::ConfigError);
}

}  // namespace test_mxu_timing
