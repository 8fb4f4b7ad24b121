// The walk-through text for cycles worked out by hand.
#include <catch2/catch.hpp>
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

}  // namespace test_mxu_walkthrough
