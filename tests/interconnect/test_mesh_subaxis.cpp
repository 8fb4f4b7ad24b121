// Mesh axes over part of a physical axis (interconnect/mesh.h): the groups
// a collective runs in, worked by hand, and ring collective times over an
// inner factor (consecutive chips) and an outer factor (chips a stride
// apart) against the ring formula with the hops and link sharing counted by
// hand.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "interconnect/mesh.h"
#include "interconnect/pod_shape.h"
#include "interconnect/run_collective.h"
#include "sim/error.h"

namespace test_mesh_subaxis {

using namespace interconnect;
using namespace interconnect::v4_ici;

namespace {

using Groups = std::vector<std::vector<int>>;

Groups groups_of(const PodNetworkConfig& p, const std::vector<std::string>& names) {
  const Topology t = p.make_topology();
  return chip_groups(t, Mesh(t, p.mesh).resolve(names, "workload.axes"));
}

PodNetworkConfig ring16_split() {
  PodNetworkConfig p = pod_shape(TopologyKind::ring, {16}, {true});
  p.mesh = {{"a", 4}, {"b", 4}};
  p.link.bandwidth = kW;
  p.link.latency = kL;
  return p;
}

CollectiveResult run(const PodNetworkConfig& p, CollectiveOp op, std::vector<std::string> axes, std::uint64_t bytes) {
  CollectiveSpec s;
  s.op = op;
  s.algorithm = Algorithm::ring;
  s.bytes = bytes;
  s.axes = std::move(axes);
  return run_collective(p, s);
}

double rel_err(double got, double want) { return std::abs(got - want) / want; }

}  // namespace

TEST_CASE("mesh subaxis: a 16-chip ring split 4 x 4 groups consecutive chips (inner) and chips 4 apart (outer)",
          "[mesh][subaxis]") {
  const PodNetworkConfig p = ring16_split();
  CHECK(groups_of(p, {"a"}) == Groups{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}, {12, 13, 14, 15}});
  CHECK(groups_of(p, {"b"}) == Groups{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}});
  // Both factors together are the whole axis: one part, stride 1.
  const Topology t = p.make_topology();
  const Mesh mesh(t, p.mesh);
  CHECK(mesh.resolve({"b", "a"}, "workload.axes") == std::vector<AxisPart>{{0, 1, 16}});
  CHECK(mesh.physical_axes(1) == std::vector<AxisPart>{{0, 4, 4}});
}

TEST_CASE("mesh subaxis: on a 4x4 torus data 8 takes x and half of y, model 2 the other half", "[mesh][subaxis]") {
  PodNetworkConfig p = pod_shape(TopologyKind::torus2d, {4, 4}, {true, true});
  p.mesh = {{"data", 8}, {"model", 2}};
  // Chip id = x + 4 y: data varies x (4) and y's inner digit (y 0-1, 2-3);
  // model varies y's outer digit (y and y + 2, chips 8 apart).
  CHECK(groups_of(p, {"data"}) == Groups{{0, 1, 2, 3, 4, 5, 6, 7}, {8, 9, 10, 11, 12, 13, 14, 15}});
  CHECK(groups_of(p, {"model"}) == Groups{{0, 8}, {1, 9}, {2, 10}, {3, 11}, {4, 12}, {5, 13}, {6, 14}, {7, 15}});
  // Three factors of one 8-chip ring: inner 2, middle 2, outer 2.
  PodNetworkConfig r = pod_shape(TopologyKind::ring, {8}, {true});
  r.mesh = {{"i", 2}, {"m", 2}, {"o", 2}};
  CHECK(groups_of(r, {"m"}) == Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}});
  CHECK(groups_of(r, {"i", "o"}) == Groups{{0, 1, 4, 5}, {2, 3, 6, 7}});
}

TEST_CASE("mesh subaxis: a size that divides no factor left is refused at the axis with the sizes that map",
          "[mesh][subaxis][bad-input]") {
  PodNetworkConfig p = pod_shape(TopologyKind::torus2d, {4, 4}, {true, true});
  p.mesh = {{"data", 2}, {"model", 6}};
  const Topology t = p.make_topology();
  try {
    Mesh(t, p.mesh);
    FAIL("no error");
  } catch (const sim::ConfigError& e) {
    CHECK(e.key_path() == "mesh.model");
    // After data takes x's inner 2, what is left is x's outer 2 and y's 4:
    // sizes 1, 2 (x's 2), 4 (x's 2 and y's inner 2) and 8.
    CHECK(e.detail() ==
          "size 6 does not map onto the 4x4 topology (mesh axes take consecutive axes x, y, z, or a factor that "
          "divides one); sizes that map here: 1, 2, 4, 8");
  }
}

TEST_CASE(
    "mesh subaxis: ring collectives over an inner and an outer factor follow the ring formula with the "
    "links shared as counted by hand",
    "[mesh][subaxis][timing]") {
  // A ring collective of n chips, buffer S: (n-1) steps (2(n-1) for an
  // all_reduce), each moving S/n per chip (docs/reference/formulas.md §1).
  // Inner factor a: the groups' rings 0-1-2-3 use disjoint links, one hop
  // each, and the closing message 3 -> 0 is routed back over 3 hops of the
  // other direction, which no other message uses: each step takes S/(n W),
  // plus at most 3 hops' latency.
  // Outer factor b: the ring 0-4-8-12 hops 4 links a step, closing over the
  // wraparound 12 -> 0; every link of the + direction carries one message of
  // each of the 4 groups at once, so each gets W/4: a step takes
  // 4 S/(n W), 4 hops' latency.
  const PodNetworkConfig p = ring16_split();
  const std::uint64_t bytes = 64 * kMiB;
  const double S = static_cast<double>(bytes), n = 4;
  struct Case {
    CollectiveOp op;
    double steps;
  };
  for (const Case c : {Case{CollectiveOp::all_gather, n - 1}, Case{CollectiveOp::reduce_scatter, n - 1},
                       Case{CollectiveOp::all_reduce, 2 * (n - 1)}}) {
    const double inner = c.steps * (S / (n * kW) + 3 * kL);
    const double outer = c.steps * (4 * S / (n * kW) + 4 * kL);
    const auto a = run(p, c.op, {"a"}, bytes);
    const auto b = run(p, c.op, {"b"}, bytes);
    INFO(to_string(c.op) << ": inner " << a.time_s << " vs " << inner << "; outer " << b.time_s << " vs " << outer);
    CHECK(a.participants == 4);
    CHECK(a.groups == 4);
    CHECK(rel_err(a.time_s, inner) < 0.02);
    CHECK(rel_err(b.time_s, outer) < 0.02);
  }
}

TEST_CASE("mesh subaxis: a collective over both factors of a split axis is the whole-axis collective",
          "[mesh][subaxis]") {
  const std::uint64_t bytes = 16 * kMiB;
  PodNetworkConfig whole = ring16_split();
  whole.mesh.clear();  // the default mesh: x, the whole ring
  for (const CollectiveOp op : {CollectiveOp::all_reduce, CollectiveOp::all_gather}) {
    CollectiveSpec s;
    s.op = op;
    s.bytes = bytes;
    const double t_whole = run_collective(whole, s).time_s;
    s.axes = {"a", "b"};
    CHECK(run_collective(ring16_split(), s).time_s == t_whole);
  }
}

}  // namespace test_mesh_subaxis
