// sim::mean against sums and counts worked by hand.
#include <catch2/catch.hpp>

#include <vector>

#include "sim/mean.h"

namespace test_mean {

TEST_CASE("mean: the sum over the count, nothing averages to 0", "[mean]") {
  CHECK(sim::mean({1.0, 2.0, 6.0}) == 3.0);  // 9 / 3
  CHECK(sim::mean({0.25}) == 0.25);
  CHECK(sim::mean({-1.0, 1.0}) == 0.0);
  CHECK(sim::mean({}) == 0.0);
}

}  // namespace test_mean
