#include <catch2/catch.hpp>

#include <cstdlib>

#include "interconnect/topology.h"

namespace test_topology {

using interconnect::Topology;
using interconnect::TopologyKind;

TEST_CASE("topology: chip ids are row-major with x fastest", "[topology]") {
  const Topology t(TopologyKind::torus3d, {4, 3, 2}, {true, true, false});
  REQUIRE(t.chips() == 24);
  for (int chip = 0; chip < t.chips(); ++chip) {
    const auto c = t.coords(chip);
    CHECK(chip == c[0] + 4 * (c[1] + 3 * c[2]));
    CHECK(t.chip_at(c) == chip);
  }
  CHECK(t.describe(23) == "chip 23 (3,2,1)");
}

TEST_CASE("topology: neighbours wrap only on wrapping axes", "[topology]") {
  const Topology t(TopologyKind::torus2d, {4, 3}, {true, false});
  CHECK(t.neighbor(t.chip_at({3, 1}), 0, +1) == t.chip_at({0, 1}));
  CHECK(t.neighbor(t.chip_at({0, 1}), 0, -1) == t.chip_at({3, 1}));
  CHECK(t.neighbor(t.chip_at({2, 2}), 1, +1) == -1);
  CHECK(t.neighbor(t.chip_at({2, 0}), 1, -1) == -1);
  CHECK(t.neighbor(t.chip_at({2, 1}), 1, +1) == t.chip_at({2, 2}));
}

TEST_CASE("topology: link directions counted per axis", "[topology]") {
  // An axis of size X over C chips has 2*X*(C/X) directions with wraparound
  // and 2*(X-1)*(C/X) without.
  const Topology cube(TopologyKind::torus3d, {4, 4, 4}, {true, true, true});
  CHECK(cube.links() == 3 * 2 * 64);
  const Topology tray(TopologyKind::torus3d, {2, 2, 1}, {false, false, false});
  CHECK(tray.links() == 2 * 1 * 2 + 2 * 1 * 2);
  const Topology v5e(TopologyKind::torus2d, {8, 16}, {false, true});
  CHECK(v5e.links() == 2 * 7 * 16 + 2 * 16 * 8);
  for (int l = 0; l < v5e.link_slots(); ++l) {
    if (!v5e.link_exists(l)) continue;
    const auto e = v5e.link_ends(l);
    CHECK(v5e.neighbor(e.from, e.axis, e.dir) == e.to);
    CHECK(v5e.link_id(e.from, e.axis, e.dir) == l);
  }
}

TEST_CASE("topology: dimension-order routes are shortest and go x, then y, then z", "[topology]") {
  const Topology t(TopologyKind::torus3d, {5, 4, 3}, {true, false, true});
  std::vector<int> route;
  for (int src = 0; src < t.chips(); ++src) {
    for (int dst = 0; dst < t.chips(); ++dst) {
      t.route(src, dst, route);
      int expected = 0;
      for (int a = 0; a < 3; ++a) {
        const int d = std::abs(t.coord(src, a) - t.coord(dst, a));
        expected += t.wraps(a) ? std::min(d, t.size(a) - d) : d;
      }
      REQUIRE(static_cast<int>(route.size()) == expected);
      CHECK(t.hops(src, dst) == expected);
      int at = src, last_axis = 0;
      for (int l : route) {
        const auto e = t.link_ends(l);
        REQUIRE(t.link_exists(l));
        CHECK(e.from == at);
        CHECK(e.axis >= last_axis);
        last_axis = e.axis;
        at = e.to;
      }
      CHECK(at == dst);
    }
  }
}

TEST_CASE("topology: half-way ties split by source parity", "[topology]") {
  const Topology ring(TopologyKind::ring, {8}, {true});
  std::vector<int> route;
  ring.route(0, 4, route);
  CHECK(ring.link_ends(route.front()).dir == +1);
  ring.route(1, 5, route);
  CHECK(ring.link_ends(route.front()).dir == -1);
}

}  // namespace test_topology
