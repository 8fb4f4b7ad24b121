// Degraded and failed ICI links (pod.links, docs/interconnect.md "Degraded
// and failed links"): routes round a failed link by hand, and collective
// times against the ring formula with the bottleneck link's bandwidth.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "interconnect/pod_config.h"
#include "interconnect/pod_shape.h"
#include "interconnect/run_collective.h"
#include "interconnect/topology.h"
#include "sim/error.h"

namespace test_degraded_links {

using namespace interconnect;
using namespace interconnect::v4_ici;

namespace {

PodNetworkConfig with_links(PodNetworkConfig p) {
  p.link.bandwidth = kW;
  p.link.latency = kL;
  return p;
}

LinkFault fault(std::vector<int> from, std::vector<int> to, double bandwidth, bool one_way = false) {
  LinkFault f;
  f.from = std::move(from);
  f.to = std::move(to);
  f.bandwidth = bandwidth;
  f.one_way = one_way;
  return f;
}

LinkFault failed(std::vector<int> from, std::vector<int> to) {
  LinkFault f;
  f.from = std::move(from);
  f.to = std::move(to);
  f.failed = true;
  return f;
}

CollectiveResult all_reduce(const PodNetworkConfig& p, Algorithm a, std::uint64_t bytes,
                            std::vector<std::string> axes = {}, bool translations = true) {
  CollectiveSpec s;
  s.op = CollectiveOp::all_reduce;
  s.algorithm = a;
  s.bytes = bytes;
  s.axes = std::move(axes);
  return run_collective(p, s, translations);
}

double rel_err(double got, double want) { return std::abs(got - want) / want; }

// The chips a route visits, from src, by following its link ids.
std::vector<int> visits(const Topology& t, int src, int dst) {
  std::vector<int> route;
  t.route(src, dst, route);
  std::vector<int> chips{src};
  for (int l : route) {
    REQUIRE(t.link_ends(l).from == chips.back());
    chips.push_back(t.link_ends(l).to);
  }
  return chips;
}

}  // namespace

TEST_CASE("degraded links: a failed link is routed round by a detour of three hops", "[links][topology]") {
  // 4x4 torus, link (1,0)-(2,0) failed both ways. Chip ids x + 4y.
  PodNetworkConfig p = with_links(pod_shape(TopologyKind::torus2d, {4, 4}, {true, true}));
  p.links = {failed({1, 0}, {2, 0})};
  p.validate();
  const Topology t = p.make_topology();
  CHECK(t.link_failed(t.link_id(1, 0, +1)));
  CHECK(t.link_failed(t.link_id(2, 0, -1)));
  CHECK_FALSE(t.uniform_links());
  // 1 -> 2: off along y (+ side first) to (1,1)=5, across to (2,1)=6, back to (2,0)=2.
  CHECK(visits(t, 1, 2) == std::vector<int>{1, 5, 6, 2});
  // 2 -> 1, the other direction: (2,1)=6, (1,1)=5, (1,0)=1.
  CHECK(visits(t, 2, 1) == std::vector<int>{2, 6, 5, 1});
  // 0 -> 6 is x first (0,1,2 with the detour for 1->2), then y: 0,1,5,6,2,6.
  CHECK(visits(t, 0, 6) == std::vector<int>{0, 1, 5, 6, 2, 6});
  // A route that does not cross it is the dimension-order route.
  CHECK(visits(t, 4, 7) == std::vector<int>{4, 7});  // (0,1) -> (3,1): one step - round x
  CHECK(visits(t, 5, 6) == std::vector<int>{5, 6});
}

TEST_CASE("degraded links: on a ring a failed link's traffic goes the other way round", "[links][topology]") {
  PodNetworkConfig p = with_links(pod_shape(TopologyKind::ring, {8}, {true}));
  p.links = {failed({3}, {4})};
  p.validate();
  const Topology t = p.make_topology();
  CHECK(visits(t, 3, 4) == std::vector<int>{3, 2, 1, 0, 7, 6, 5, 4});
  CHECK(visits(t, 2, 5) == std::vector<int>{2, 1, 0, 7, 6, 5});
  CHECK(visits(t, 4, 3) == std::vector<int>{4, 5, 6, 7, 0, 1, 2, 3});
  CHECK(visits(t, 0, 2) == std::vector<int>{0, 1, 2});
}

TEST_CASE("degraded links: a ring all-reduce slows as its slowest link predicts", "[links][timing]") {
  // Ring all-reduce (NCCL-tests, docs/reference/formulas.md §1): 2(n-1)
  // steps of S/n each over every link of the ring; the chip before the
  // slow link sends its chunks back to back over it, so each step takes
  // (S/n) / (f W) and the time is 2(n-1)/n x S / (f W) + 2(n-1) L.
  const int n = 8;
  const double f = 0.5;
  const std::uint64_t bytes = 64 * kMiB;
  const double S = static_cast<double>(bytes);
  PodNetworkConfig p = with_links(pod_shape(TopologyKind::ring, {n}, {true}));
  p.links = {fault({3}, {4}, f)};
  const auto r = all_reduce(p, Algorithm::ring, bytes);
  const double want = 2.0 * (n - 1) / n * S / (f * kW) + 2.0 * (n - 1) * kL;
  INFO("degraded ring all-reduce " << r.time_s << " s, formula " << want << " s");
  CHECK(rel_err(r.time_s, want) < 0.02);
  // Every chip is simulated: a translation would move the slow link onto a fast one.
  CHECK(r.symmetric_axes.empty());
  // The slow link carried its share, at half the rate: busy for its bytes / (f W).
  for (const LinkReport& l : r.links) {
    if (l.from == 3 && l.to == 4) CHECK(l.busy_s == Approx(static_cast<double>(l.bytes) / (f * kW)).epsilon(1e-6));
  }
}

TEST_CASE("degraded links: a degraded link the collective does not use changes nothing", "[links][timing]") {
  const std::uint64_t bytes = 16 * kMiB;
  SECTION("a ring's unused direction") {
    // The ring all-reduce sends up the ring (+); slow down 4 -> 3 only.
    PodNetworkConfig p = with_links(pod_shape(TopologyKind::ring, {8}, {true}));
    const auto nominal = all_reduce(p, Algorithm::ring, bytes, {}, false);
    p.links = {fault({4}, {3}, 0.25, true)};
    const auto degraded = all_reduce(p, Algorithm::ring, bytes);
    CHECK(degraded.time_s == nominal.time_s);
    // ... while the direction it uses does slow it.
    p.links = {fault({3}, {4}, 0.25, true)};
    CHECK(all_reduce(p, Algorithm::ring, bytes).time_s > 2 * nominal.time_s);
  }
  SECTION("a link along an axis the collective does not span") {
    // All-reduce along x of a 4x4 torus; a y link at 0.1.
    PodNetworkConfig p = with_links(pod_shape(TopologyKind::torus2d, {4, 4}, {true, true}));
    const auto nominal = all_reduce(p, Algorithm::ring, bytes, {"x"}, false);
    p.links = {fault({1, 1}, {1, 2}, 0.1)};
    const auto degraded = all_reduce(p, Algorithm::ring, bytes, {"x"});
    CHECK(degraded.time_s == nominal.time_s);
  }
}

TEST_CASE("degraded links: a failed link on a torus reroutes and the ring slows to the bandwidth left",
          "[links][timing]") {
  // 4x4 torus, all-reduce along x (four rings of 4, one per row), each
  // sending up x. Link (1,0)-(2,0) failed: row 0's hop 1 -> 2 takes the
  // detour (1,0) -> (1,1) -> (2,1) -> (2,0), whose middle link is row 1's
  // own hop 1 -> 2. Rows 0 and 1 then share that link every step, W/2
  // each, and it bounds both rings: 2(n-1)/n x S / (W/2), with the
  // detour's two extra hops of latency on every step. (Going the other
  // way round x would have used the idle - links and kept the nominal time.)
  const int n = 4;
  const std::uint64_t bytes = 64 * kMiB;
  const double S = static_cast<double>(bytes);
  PodNetworkConfig p = with_links(pod_shape(TopologyKind::torus2d, {4, 4}, {true, true}));
  const auto nominal = all_reduce(p, Algorithm::ring, bytes, {"x"});
  p.links = {failed({1, 0}, {2, 0})};
  const auto r = all_reduce(p, Algorithm::ring, bytes, {"x"});
  const double want = 2.0 * (n - 1) / n * S / (kW / 2) + 2.0 * (n - 1) * 3 * kL;
  INFO("torus all-reduce with a failed link " << r.time_s << " s, formula " << want << " s, nominal " << nominal.time_s
                                              << " s");
  CHECK(rel_err(r.time_s, want) < 0.02);
  CHECK(rel_err(nominal.time_s, 2.0 * (n - 1) / n * S / kW + 2.0 * (n - 1) * kL) < 0.02);
  for (const LinkReport& l : r.links) {
    if (l.from == 1 && l.to == 2) CHECK(l.bytes == 0);  // the failed link carried nothing
    // The shared link carried rows 0's and 1's chunks: twice a ring link's 2(n-1)/n S.
    if (l.from == 5 && l.to == 6) CHECK(static_cast<double>(l.bytes) == Approx(2 * 2.0 * (n - 1) / n * S));
  }
}

TEST_CASE("degraded links: the packet model agrees with the fluid model on a degraded ring", "[links][timing]") {
  PodNetworkConfig p = with_links(pod_shape(TopologyKind::ring, {4}, {true}));
  p.links = {fault({1}, {2}, 0.5)};
  const std::uint64_t bytes = 1 * kMiB;
  const auto fluid = all_reduce(p, Algorithm::ring, bytes);
  p.model = NetworkModel::packet;
  const auto packet = all_reduce(p, Algorithm::ring, bytes);
  INFO("fluid " << fluid.time_s << " s, packet " << packet.time_s << " s");
  CHECK(rel_err(packet.time_s, fluid.time_s) < 0.02);
}

TEST_CASE("degraded links: failed links that cut the pod end the run (exit 3) naming a link", "[links][errors]") {
  SECTION("a ring cut in two places") {
    PodNetworkConfig p = with_links(pod_shape(TopologyKind::ring, {8}, {true}));
    p.links = {failed({2}, {3}), failed({5}, {6})};
    CHECK_THROWS_AS(all_reduce(p, Algorithm::ring, kMiB), sim::SimFailure);
    CHECK_THROWS_WITH(all_reduce(p, Algorithm::ring, kMiB),
                      Catch::Contains("avoids the failed link chip 2 (2) -> chip 3 (3)") &&
                          Catch::Contains("the failed link chip 6 (6) -> chip 5 (5)"));
  }
  SECTION("a 4x2 torus whose x rings are cut on both sides") {
    PodNetworkConfig p = with_links(pod_shape(TopologyKind::torus2d, {4, 2}, {true, false}));
    p.links = {failed({1, 0}, {2, 0}), failed({1, 1}, {2, 1}), failed({3, 0}, {0, 0}), failed({3, 1}, {0, 1})};
    CHECK_THROWS_WITH(all_reduce(p, Algorithm::ring, kMiB, {"x"}),
                      Catch::Contains("no route from") && Catch::Contains("(pod.links)"));
  }
}

TEST_CASE("degraded links: bad entries are rejected with their key path", "[links][errors]") {
  PodNetworkConfig p = with_links(pod_shape(TopologyKind::torus2d, {4, 4}, {true, true}));
  const auto rejects = [&](std::vector<LinkFault> links, const std::string& key, const std::string& text) {
    p.links = std::move(links);
    try {
      p.validate();
      FAIL("accepted");
    } catch (const sim::ConfigError& e) {
      CHECK(e.key_path() == key);
      CHECK_THAT(e.detail(), Catch::Contains(text));
    }
  };
  rejects({fault({4, 0}, {0, 0}, 0.5)}, "pod.links[0].from", "outside the pod");
  rejects({fault({0, 0}, {2, 0}, 0.5)}, "pod.links[0].to", "2 apart along x");
  rejects({fault({0, 0}, {1, 1}, 0.5)}, "pod.links[0].to", "differ along x and y");
  rejects({fault({0, 0}, {1, 0}, 0.5), fault({1, 0}, {0, 0}, 0.5, true)}, "pod.links[1].to", "already in entry 0");
  rejects({fault({0, 0}, {0}, 0.5)}, "pod.links[0].to", "expected 2 coordinates");
  LinkFault both = failed({0, 0}, {1, 0});
  both.bandwidth = 0.5;
  rejects({both}, "pod.links[0].failed", "give one of them");
  // The ends of a wrapping axis are neighbours; of a mesh axis not.
  p.links = {fault({3, 0}, {0, 0}, 0.5)};
  CHECK_NOTHROW(p.validate());
  p.wraparound = {false, false};
  rejects({fault({3, 0}, {0, 0}, 0.5)}, "pod.links[0].to", "does not wrap");
}

}  // namespace test_degraded_links
