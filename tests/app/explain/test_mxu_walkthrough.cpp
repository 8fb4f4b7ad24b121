// The walk-through text for cycles worked out by hand.
#include <catch2/catch.hpp>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "app/explain/mxu_walkthrough.h"
#include "hw/systolic_array.h"

namespace test_mxu_walkthrough {

using hw::bf16;

namespace {

std::vector<bf16> from_floats(const std::vector<float>& v) {
  std::vector<bf16> out;
  for (float x : v) out.push_back(bf16::from_float(x));
  return out;
}

std::vector<std::string> frames(const hw::MxuConfig& cfg, const hw::MxuShape& s, const std::vector<bf16>& a,
                                const std::vector<bf16>& b) {
  std::vector<std::string> out;
  hw::SystolicArray array;
  array.run(cfg, s, a.data(), b.data(),
            [&](const hw::ArrayStateView& v) { out.push_back(explain::render_walkthrough_frame(v)); });
  return out;
}

}  // namespace

TEST_CASE("mxu walkthrough: 2x2 frame drawn as worked out by hand", "[mxu]") {
  // A = [[1,2],[3,4]], B = [[5,6],[7,8]] (test_mxu_systolic.cpp). In cycle 3
  // vector 1 (a = 3) is at PE(0,0), vector 0 at PE(0,1) (a = 1) and PE(1,0)
  // (a = 2, psum 1*5 + 2*7 = 19 leaving the array); PE(1,1) waits for it.
  const auto f = frames({2, 2, true}, {2, 2, 2}, from_floats({1, 2, 3, 4}), from_floats({5, 6, 7, 8}));
  REQUIRE(f.size() == 6);
  const std::string want =
      "cycle 3 | feeder: tile 0 vector 1 | loader: idle\n"
      "weights (bank 0/bank 1, * = bank the activation selects)\n"
      "    c0    c1\n"
      " r0 *5/0  *6/0\n"
      " r1 *7/0  8/0\n"
      "activations (value @tile:vector, . = bubble)\n"
      "    c0      c1\n"
      " r0 3 @0:1  1 @0:0\n"
      " r1 2 @0:0  .\n"
      "psums produced (p_in + a * w)\n"
      "    c0   c1\n"
      " r0 15   6\n"
      " r1 19   .\n";
  CHECK(f[3] == want);
  // Cycle 2: column 0 has latched, column 1 still shifts its second row.
  CHECK(f[2].rfind("cycle 2 | feeder: tile 0 vector 0 | loader: tile 0 -> bank 0, column 1 shifting\n", 0) == 0);
}

TEST_CASE("mxu walkthrough: the next tile loads into the other bank", "[mxu]") {
  // 2x2, m = 3, k = 4, n = 2, double-buffered: L_1 = 2, so in cycle 3 both
  // columns of tile 1 shift into bank 1 while tile 0 streams (vector 1).
  std::vector<bf16> a(12, bf16::from_float(1)), b(8, bf16::from_float(1));
  const auto f = frames({2, 2, true}, {3, 4, 2}, a, b);
  CHECK(f[3].rfind("cycle 3 | feeder: tile 0 vector 1 | loader: tile 1 -> bank 1, columns 0-1 shifting\n", 0) == 0);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::vector<std::string> words_of(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

TEST_CASE("mxu walkthrough: compact frames fit 80x24 with the pager's prompt", "[mxu]") {
  struct Case {
    hw::MxuConfig config;
    hw::MxuShape shape;
  };
  for (const Case& c :
       {Case{{8, 8, true}, {16, 8, 8}}, Case{{8, 8, true}, {32, 32, 32}}, Case{{8, 8, false}, {13, 11, 9}},
        Case{{2, 3, true}, {5, 4, 7}}, Case{{4, 8, true}, {7, 9, 17}}}) {
    const explain::MxuWalkthrough w = explain::mxu_walkthrough(c.config, c.shape, 3);
    INFO(c.config.rows << "x" << c.config.cols << " m" << c.shape.m << " k" << c.shape.k << " n" << c.shape.n);
    REQUIRE(w.compact_frames.size() == w.cycles);
    for (const std::string& frame : w.compact_frames) {
      const std::vector<std::string> lines = lines_of(explain::strip_colour(frame));
      CHECK(lines.size() <= 23);  // the 24th line is the prompt
      for (const std::string& line : lines) CHECK(line.size() <= explain::kCompactWidth);
    }
  }
  // Beyond 8x8 there are only full frames.
  CHECK(explain::mxu_walkthrough({16, 8, true}, {4, 4, 4}, 1).compact_frames.empty());
  CHECK(explain::strip_colour("a\033[1;33m12\033[0m b") == "a12 b");
}

TEST_CASE("mxu walkthrough: the compact frames' bottom edge adds up to A x B", "[mxu]") {
  // 8x8 array, k = 24: three weight tiles along k, one along n, so column c
  // of the bottom row carries partial sums of Y[i][c]; the "to Y row" line
  // names i. Summing what the frames show leaving must give the host GEMM.
  const hw::MxuShape shape{16, 24, 8};
  const explain::MxuWalkthrough w = explain::mxu_walkthrough({8, 8, true}, shape, 5);
  std::vector<double> y(shape.m * shape.n, 0.0);
  std::size_t seen = 0;
  for (const std::string& frame : w.compact_frames) {
    const std::vector<std::string> lines = lines_of(explain::strip_colour(frame));
    REQUIRE(lines.size() == 23);
    // Line 10 is r7 (three heading lines, r0..r7); line 11 says where they go.
    const std::vector<std::string> r7 = words_of(lines.at(10)), to = words_of(lines.at(11));
    REQUIRE(r7.size() == 1 + 3 + 1 + 8 + 1 + 8);  // label, next in, |, activations, |, psums
    REQUIRE(r7[0] == "r7");
    std::vector<std::string> rows;  // the "iN" cells, left to right, one per valid column
    for (const std::string& word : to)
      if (word.size() > 1 && word[0] == 'i') rows.push_back(word.substr(1));
    std::size_t next = 0;
    for (std::size_t c = 0; c < 8; ++c) {
      const std::string& psum = r7[14 + c];
      if (psum == ".") continue;
      REQUIRE(next < rows.size());
      y[std::stoull(rows[next++]) * shape.n + c] += std::stod(psum);
      ++seen;
    }
    CHECK(next == rows.size());
  }
  CHECK(seen == shape.m * shape.n * 3);  // every entry, once per k tile
  const std::vector<double> want = explain::host_gemm(shape, w.a, w.b);
  for (std::size_t at = 0; at < want.size(); ++at) CHECK(y[at] == want[at]);
}

TEST_CASE("mxu walkthrough: a compact frame shows the skew as the formula places it", "[mxu]") {
  // Vector i of tile 0 enters row r at cycle s_0 + i + r: one cycle earlier
  // the "next in" column +1 of row r holds A[i][r], and in that cycle the
  // activation at PE(r, 0) is A[i][r].
  const hw::MxuShape shape{8, 8, 8};
  const explain::MxuWalkthrough w = explain::mxu_walkthrough({8, 8, true}, shape, 7);
  const std::uint64_t s0 = w.schedule.at(0).feed_start;
  for (std::uint64_t i = 0; i < shape.m; ++i) {
    for (std::uint32_t r = 0; r < 8; ++r) {
      const double a = w.a[i * shape.k + r].to_float();
      const auto before = words_of(lines_of(explain::strip_colour(w.compact_frames.at(s0 + i + r - 1))).at(3 + r));
      const auto at = words_of(lines_of(explain::strip_colour(w.compact_frames.at(s0 + i + r))).at(3 + r));
      INFO("i " << i << " r " << r);
      CHECK(std::stod(before.at(3)) == a);  // r, +3, +2, +1
      CHECK(std::stod(at.at(5)) == a);      // r, +3, +2, +1, |, c0
    }
  }
}

}  // namespace test_mxu_walkthrough
