// The PE engine against independent references: hand-worked cycles and
// values, the closed-form timing (cycles), a host GEMM in the MXU's order
// computed exactly in double (values), and the skew / bank rules checked PE
// by PE every cycle.
#include <catch2/catch.hpp>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "hw/mxu_functional.h"
#include "hw/mxu_timing.h"
#include "hw/systolic_array.h"
#include "sim/error.h"
#include "test_mxu_reference.h"

#if defined(__SSE2__)
#include <xmmintrin.h>

namespace test_mxu_systolic {

#endif

using hw::bf16;
using hw::MxuConfig;
using hw::MxuShape;

namespace {

std::vector<bf16> from_floats(const std::vector<float>& v) {
  std::vector<bf16> out;
  for (float x : v) out.push_back(bf16::from_float(x));
  return out;
}

std::vector<bf16> random_operands(std::size_t count, std::mt19937_64& rng) {
  std::vector<bf16> v(count);
  for (bf16& x : v) x = mxu_test::random_operand(rng);
  return v;
}

std::vector<bf16> small_integers(std::size_t count, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> pick(-8, 8);
  std::vector<bf16> v(count);
  for (bf16& x : v) x = bf16::from_float(static_cast<float>(pick(rng)));
  return v;
}

bool bitwise_equal(const std::vector<float>& x, const std::vector<float>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

// Runs the engine and checks cycles against the closed form and values
// against the host reference; also the functional model bit for bit.
void check_engine(const MxuConfig& cfg, const MxuShape& s, std::mt19937_64& rng) {
  INFO(hw::to_string(cfg.dataflow) << " R=" << cfg.rows << " C=" << cfg.cols << " db=" << cfg.double_buffer << " "
                                   << hw::to_string(cfg.schedule) << " m=" << s.m << " k=" << s.k << " n=" << s.n);
  const std::vector<bf16> a = random_operands(s.m * s.k, rng);
  const std::vector<bf16> b = random_operands(s.k * s.n, rng);
  hw::SystolicArray array;
  const hw::MxuPeResult pe = array.run(cfg, s, a.data(), b.data());
  REQUIRE(pe.cycles == hw::mxu_tile_cycles(cfg, s));
  const std::vector<float> want = mxu_test::reference_matmul(cfg, s, a, b);
  REQUIRE(pe.y.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i);
    REQUIRE(mxu_test::same_value(pe.y[i], want[i]));
  }
  REQUIRE(bitwise_equal(hw::mxu_functional_matmul(cfg, s, a.data(), b.data()), pe.y));
}

}  // namespace

TEST_CASE("mxu systolic: 2x2 hand-worked wavefront, values and cycles", "[mxu][systolic]") {
  // A = [[1,2],[3,4]], B = [[5,6],[7,8]], Y = [[19,22],[43,50]].
  // Weights: column 0 latches at the end of cycle 1, column 1 at the end of
  // cycle 2. Vector i (row i of A) is injected in cycle 2 + i, so A[i][r]
  // passes PE(r,c) in cycle 2 + i + r + c:
  //   cycle 2: PE(0,0) 1*5 = 5
  //   cycle 3: PE(0,0) 3*5 = 15, PE(0,1) 1*6 = 6, PE(1,0) 5 + 2*7 = 19 -> Y[0][0]
  //   cycle 4: PE(0,1) 3*6 = 18, PE(1,0) 15 + 4*7 = 43 -> Y[1][0], PE(1,1) 6 + 2*8 = 22 -> Y[0][1]
  //   cycle 5: PE(1,1) 18 + 4*8 = 50 -> Y[1][1]; the op takes 6 cycles.
  const std::vector<bf16> a = from_floats({1, 2, 3, 4}), b = from_floats({5, 6, 7, 8});
  struct Seen {
    std::uint64_t cycle;
    std::uint32_t r, c;
    float psum;
  };
  std::vector<Seen> seen;
  hw::SystolicArray array;
  const hw::MxuPeResult res = array.run({2, 2, true}, {2, 2, 2}, a.data(), b.data(), [&](const hw::ArrayStateView& v) {
    for (std::uint32_t r = 0; r < 2; ++r)
      for (std::uint32_t c = 0; c < 2; ++c)
        if (v.valid(r, c)) seen.push_back({v.cycle, r, c, v.psum(r, c)});
  });
  CHECK(res.cycles == 6);
  CHECK(res.y == std::vector<float>{19, 22, 43, 50});
  const std::vector<std::vector<float>> want = {{2, 0, 0, 5},  {3, 0, 0, 15}, {3, 0, 1, 6},  {3, 1, 0, 19},
                                                {4, 0, 1, 18}, {4, 1, 0, 43}, {4, 1, 1, 22}, {5, 1, 1, 50}};
  REQUIRE(seen.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    CHECK(seen[i].cycle == want[i][0]);
    CHECK(seen[i].r == want[i][1]);
    CHECK(seen[i].c == want[i][2]);
    CHECK(seen[i].psum == want[i][3]);
  }
}

TEST_CASE("mxu systolic: 2x2 two k-tiles, cycles by hand", "[mxu][systolic]") {
  // m = 3, k = 4, n = 2 (worked out in test_mxu_timing.cpp): 10 cycles
  // double-buffered, 11 with one weight bank.
  std::mt19937_64 rng(3);
  const std::vector<bf16> a = small_integers(12, rng), b = small_integers(8, rng);
  hw::SystolicArray array;
  CHECK(array.run({2, 2, true}, {3, 4, 2}, a.data(), b.data()).cycles == 10);
  CHECK(array.run({2, 2, false}, {3, 4, 2}, a.data(), b.data()).cycles == 11);
}

TEST_CASE("mxu systolic: output- and input-stationary 2x2 by hand", "[mxu][systolic]") {
  // A = [[1,2],[3,4]], B = [[5,6],[7,8]], Y = [[19,22],[43,50]].
  const std::vector<bf16> a = from_floats({1, 2, 3, 4}), b = from_floats({5, 6, 7, 8});
  hw::SystolicArray array;
  // os: PE(r,c) keeps Y[r][c]; step q (A[.][q], B[q][.]) reaches it in cycle
  // q + r + c. Cycle 0: PE(0,0) 1*5; cycle 1: PE(0,0) 5 + 2*7 = 19 out,
  // PE(0,1) 1*6, PE(1,0) 3*5; cycle 2: PE(0,1) 22 out, PE(1,0) 43 out,
  // PE(1,1) 3*6; cycle 3: PE(1,1) 18 + 4*8 = 50 out: 4 cycles.
  MxuConfig os{2, 2, true};
  os.dataflow = hw::MxuDataflow::os;
  const hw::MxuPeResult o = array.run(os, {2, 2, 2}, a.data(), b.data());
  CHECK(o.cycles == 4);
  CHECK(o.y == std::vector<float>{19, 22, 43, 50});
  // The per-cycle view draws weight registers, which an os array lacks.
  CHECK_THROWS_AS(array.run(os, {2, 2, 2}, a.data(), b.data(), [](const hw::ArrayStateView&) {}), sim::ConfigError);
  // is: the weight registers hold A^T (PE(r,c) = A[c][r]) and B's columns
  // stream: column c's psum leaving the bottom in cycle 2 + j + 1 + c is
  // Y[c][j]. The same 6 cycles as ws on a square op.
  MxuConfig is{2, 2, true};
  is.dataflow = hw::MxuDataflow::is;
  std::vector<float> held;
  const hw::MxuPeResult r = array.run(is, {2, 2, 2}, a.data(), b.data(), [&](const hw::ArrayStateView& v) {
    if (v.cycle == 3) held = {v.weight(0, 0, 0), v.weight(0, 0, 1), v.weight(0, 1, 0), v.weight(0, 1, 1)};
  });
  CHECK(r.cycles == 6);
  CHECK(r.y == std::vector<float>{19, 22, 43, 50});
  CHECK(held == std::vector<float>{1, 3, 2, 4});
  // is, m = 3, k = 4, n = 2 (worked out in test_mxu_timing.cpp): 11 cycles.
  std::mt19937_64 rng(5);
  const std::vector<bf16> a3 = small_integers(12, rng), b3 = small_integers(8, rng);
  CHECK(array.run(is, {3, 4, 2}, a3.data(), b3.data()).cycles == 11);
  // os, m = 4, k = 1, n = 2: the second output tile waits for the column
  // buses (5 cycles, test_mxu_timing.cpp).
  CHECK(array.run(os, {4, 1, 2}, a3.data(), b3.data()).cycles == 5);
}

// ws, os and is: 300 random shapes each, both schedules (and both buffer
// modes, which os does not have: its PEs hold sums, not weights).
TEST_CASE("mxu systolic: 300 random shapes, cycles equal closed form, values equal host reference (both schedules)",
          "[mxu][systolic]") {
  for (hw::MxuDataflow dataflow : {hw::MxuDataflow::ws, hw::MxuDataflow::os, hw::MxuDataflow::is}) {
    std::mt19937_64 rng(12345);
    for (int i = 0; i < 300; ++i) {
      MxuConfig cfg;
      cfg.dataflow = dataflow;
      cfg.rows = 2 + rng() % 39;
      cfg.cols = 2 + rng() % 39;
      const MxuShape s{1 + rng() % (3 * cfg.rows), 1 + rng() % (3 * cfg.rows), 1 + rng() % (3 * cfg.cols)};
      for (bool db : {true, false}) {
        cfg.double_buffer = db;
        cfg.schedule = hw::MxuSchedule::overlapped;
        check_engine(cfg, s, rng);
      }
      cfg.schedule = hw::MxuSchedule::fold_serial;
      check_engine(cfg, s, rng);
    }
  }
}

TEST_CASE("mxu systolic: full 128x128 array", "[mxu][systolic]") {
  std::mt19937_64 rng(128);
  const MxuConfig db{128, 128, true}, single{128, 128, false};
  check_engine(db, {128, 128, 128}, rng);
  check_engine(db, {300, 200, 260}, rng);
  check_engine(single, {300, 200, 260}, rng);
  check_engine(db, {1, 129, 1}, rng);
  check_engine(db, {5, 256, 300}, rng);
  check_engine(single, {40, 384, 129}, rng);
  MxuConfig os = db, is = single;
  os.dataflow = hw::MxuDataflow::os;
  is.dataflow = hw::MxuDataflow::is;
  check_engine(os, {300, 200, 260}, rng);
  check_engine(os, {129, 5, 257}, rng);
  check_engine(is, {300, 200, 260}, rng);
  check_engine(is, {257, 129, 5}, rng);
}

TEST_CASE("mxu systolic: every PE follows the skew and bank rules every cycle", "[mxu][systolic]") {
  // Expected state from the rules alone, with tile starts L_j and s_j from
  // the tile recurrence: the vector injected at cycle tau passes PE(r,c) at
  // cycle tau + r + c; tile j's vectors are injected at s_j .. s_j + m - 1;
  // its weights sit in bank j % 2 (or 0); a load's staging chains shift in
  // cycles L_j .. L_j + R + C - 2. Psums are partial dot products over rows
  // 0..r, exact for small integers.
  struct Case {
    MxuConfig cfg;
    MxuShape shape;
  };
  const std::vector<Case> cases = {{{3, 4, true}, {2, 7, 9}},  {{3, 4, false}, {2, 7, 9}}, {{4, 3, true}, {5, 5, 4}},
                                   {{4, 3, false}, {5, 5, 4}}, {{2, 5, true}, {1, 6, 11}}, {{5, 2, false}, {9, 10, 3}},
                                   {{6, 6, true}, {13, 13, 7}}};
  std::mt19937_64 rng(99);
  for (const Case& tc : cases) {
    const MxuConfig& cfg = tc.cfg;
    const MxuShape& s = tc.shape;
    INFO(hw::to_string(cfg.dataflow) << " R=" << cfg.rows << " C=" << cfg.cols << " db=" << cfg.double_buffer << " "
                                     << hw::to_string(cfg.schedule) << " m=" << s.m << " k=" << s.k << " n=" << s.n);
    const std::vector<bf16> a = small_integers(s.m * s.k, rng), b = small_integers(s.k * s.n, rng);
    const auto sched = hw::mxu_tile_schedule(cfg, s);
    const std::uint64_t k_tiles = (s.k + cfg.rows - 1) / cfg.rows;
    auto tile_at = [&](std::int64_t tau) -> std::int64_t {  // tile injected at cycle tau, or -1
      for (std::size_t j = 0; j < sched.size(); ++j) {
        const auto start = static_cast<std::int64_t>(sched[j].feed_start);
        if (tau >= start && tau < start + static_cast<std::int64_t>(s.m)) return static_cast<std::int64_t>(j);
      }
      return -1;
    };
    std::uint64_t frames = 0, checked_pes = 0;
    hw::SystolicArray array;
    array.run(cfg, s, a.data(), b.data(), [&](const hw::ArrayStateView& v) {
      const auto t = static_cast<std::int64_t>(v.cycle);
      REQUIRE(v.cycle == frames++);
      const std::int64_t fed = tile_at(t);
      REQUIRE(v.injected_tile == fed);
      if (fed >= 0) REQUIRE(v.injected_vector == static_cast<std::uint64_t>(t) - sched[fed].feed_start);
      std::vector<std::uint64_t> loading;
      for (std::size_t j = 0; j < sched.size(); ++j) {
        if (v.cycle >= sched[j].load_start && v.cycle <= sched[j].load_start + cfg.rows + cfg.cols - 2)
          loading.push_back(j);
      }
      REQUIRE(v.load_count == loading.size());
      for (std::size_t i = 0; i < loading.size(); ++i) REQUIRE(v.loads[i].tile == loading[i]);
      for (std::uint32_t r = 0; r < cfg.rows; ++r) {
        for (std::uint32_t c = 0; c < cfg.cols; ++c) {
          const std::int64_t j = tile_at(t - r - c);
          REQUIRE(v.valid(r, c) == (j >= 0));
          if (j < 0) continue;
          const std::uint64_t i = static_cast<std::uint64_t>(t - r - c) - sched[j].feed_start;
          const std::uint64_t k0 = (j % k_tiles) * cfg.rows, n0 = (j / k_tiles) * cfg.cols;
          REQUIRE(v.slot(r, c).tile == j);
          REQUIRE(v.slot(r, c).vector == i);
          REQUIRE(v.bank(r, c) == (cfg.double_buffer ? static_cast<unsigned>(j % 2) : 0u));
          const bool real_row = k0 + r < s.k, real_col = n0 + c < s.n;
          const float a_want = real_row ? a[i * s.k + k0 + r].to_float() : 0.0f;
          const float w_want = real_row && real_col ? b[(k0 + r) * s.n + n0 + c].to_float() : 0.0f;
          REQUIRE(v.activation(r, c) == a_want);
          REQUIRE(v.active_weight(r, c) == w_want);
          double dot = 0;
          for (std::uint32_t rr = 0; rr <= r && real_col; ++rr) {
            if (k0 + rr < s.k) dot += double(a[i * s.k + k0 + rr].to_float()) * b[(k0 + rr) * s.n + n0 + c].to_float();
          }
          REQUIRE(double(v.psum(r, c)) == dot);
          ++checked_pes;
        }
      }
    });
    const std::uint64_t cycles = hw::mxu_tile_cycles(cfg, s);
    CHECK(frames == cycles);
    // Visits of vectors to PEs before the op ends (the last vectors of a
    // narrow last n-tile never reach its padded columns).
    std::uint64_t visits = 0;
    for (const hw::MxuTileTiming& tile : sched)
      for (std::uint64_t i = 0; i < s.m; ++i)
        for (std::uint64_t r = 0; r < cfg.rows; ++r)
          for (std::uint64_t c = 0; c < cfg.cols; ++c) visits += tile.feed_start + i + r + c < cycles;
    CHECK(checked_pes == visits);
  }
}

TEST_CASE("mxu systolic: subnormal rule inside the array, caller's FP mode restored", "[mxu][systolic]") {
  const MxuConfig cfg{2, 2, true};
  const float e = FLT_MIN;
  // Y[0][0] = 1.5 * 2^-126 * 1 + (-2^-126) * 1 = 2^-127 exactly: a psum
  // below FLT_MIN, flushed to 0.
  const std::vector<bf16> a = from_floats({1.5f * e, -e});
  const std::vector<bf16> b = {bf16::from_float(1.0f), bf16::from_bits(0x0001), bf16::from_float(1.0f),
                               bf16::from_float(0.0f)};
  const std::vector<bf16> a2 = from_floats({1.0f, 0.0f});
  const std::vector<bf16> b2 = {bf16::from_float(1.0f), bf16::from_bits(0x0001),
                                bf16::from_float(std::ldexp(1.0f, 100)), bf16::from_float(0.0f)};
#if defined(__SSE2__)
  const unsigned mode_before = _mm_getcsr();
#endif
  bool observer_sees_subnormals = true, subnormal_psum = false;
  hw::SystolicArray array;
  const hw::MxuPeResult r1 = array.run(cfg, {1, 2, 2}, a.data(), b.data(), [&](const hw::ArrayStateView& v) {
    volatile float tiny = FLT_MIN;
    observer_sees_subnormals = observer_sees_subnormals && (tiny / 2.0f != 0.0f);
    // The psum register of PE(1,0) holds the flushed sum, not 2^-127.
    for (std::uint32_t r = 0; r < 2; ++r)
      for (std::uint32_t c = 0; c < 2; ++c)
        subnormal_psum = subnormal_psum || std::fpclassify(v.psum(r, c)) == FP_SUBNORMAL;
  });
  CHECK(r1.y[0] == 0.0f);  // without the rule: 2^-127
  CHECK(observer_sees_subnormals);
  CHECK_FALSE(subnormal_psum);
  // Y[0][1] = 1 * 2^-133 (a subnormal BF16 weight, read as 0) + 0 * 0.
  const hw::MxuPeResult r2 = array.run(cfg, {1, 2, 2}, a2.data(), b2.data());
  CHECK(r2.y[0] == 1.0f);
  CHECK(r2.y[1] == 0.0f);  // without the rule: 2^-133
#if defined(__SSE2__)
  CHECK(_mm_getcsr() == mode_before);
#endif
  volatile float tiny = FLT_MIN;
  CHECK(tiny / 2.0f != 0.0f);
}

TEST_CASE("mxu systolic: operands required, bad shapes rejected", "[mxu][systolic]") {
  hw::SystolicArray array;
  const std::vector<bf16> x(4);
  CHECK_THROWS_AS(array.run({2, 2, true}, {2, 2, 2}, nullptr, x.data()), std::invalid_argument);
  CHECK_THROWS_AS(array.run({2, 2, true}, {0, 2, 2}, x.data(), x.data()), sim::ConfigError);
  CHECK_THROWS_AS(array.run({300, 2, true}, {1, 1, 1}, x.data(), x.data()), sim::ConfigError);
}

}  // namespace test_mxu_systolic
