// Symmetric pods (translations.h): the network simulating one chip per
// orbit gives what simulating every chip gives, for collectives whose plans
// are invariant, and refuses (falls back to every chip) where they are not.
#include <catch2/catch.hpp>

#include "interconnect/mesh.h"
#include "interconnect/pod_shape.h"
#include "interconnect/run_collective.h"
#include "interconnect/translations.h"

namespace test_translations {

using namespace interconnect;

namespace {

PodNetworkConfig pod(TopologyKind kind, std::vector<int> shape, std::vector<bool> wrap) {
  PodNetworkConfig p = pod_shape(kind, std::move(shape), std::move(wrap));
  p.link.bandwidth = 4.5e10;
  p.link.latency = 1e-6;
  return p;
}

// `slices` slices of a torus joined by DCN (NIC 25 GB/s, DCN latency
// 10 us, docs/reference/dcn.md#v5e), `chips_per_host` chips sharing a
// host's NICs, the fabric core oversubscribed k times.
PodNetworkConfig multislice_pod(std::vector<int> shape, int slices, int chips_per_host, double k) {
  PodNetworkConfig p = pod(TopologyKind::torus2d, std::move(shape), {true, true});
  p.slices = slices;
  p.chips_per_host = chips_per_host;
  p.link.dcn.nic_bandwidth = 2.5e10;
  p.link.dcn.host_bandwidth = 1.6e10;
  p.link.dcn.latency = 1e-5;
  p.link.dcn.oversubscription = k;
  return p;
}

// Both runs, compared chip by chip and link by link; `axes`, when given,
// the symmetric axes the folded run must use.
// `fewer`: at least how many times fewer messages the folded run simulates
// (0: not checked).
void same_as_every_chip(const PodNetworkConfig& p, const CollectiveSpec& s, bool expect_symmetric, bool uneven = false,
                        const std::vector<std::string>& axes = {}, int fewer = 4) {
  const CollectiveResult mirrored = run_collective(p, s, true);
  const CollectiveResult full = run_collective(p, s, false);
  CHECK(full.symmetric_axes.empty());
  CHECK(mirrored.symmetric_axes.empty() == !expect_symmetric);
  if (!axes.empty()) CHECK(mirrored.symmetric_axes == axes);
  // Uneven chunks: each chip within the bound of what simulating it gives.
  const double slack = mirrored.symmetry_error_s;
  CHECK((slack > 0) == uneven);
  CHECK(mirrored.time_s == Approx(full.time_s).epsilon(1e-9).margin(slack));
  // Uneven: a chip whose chunk is empty sends nothing, its orbit chip may not.
  if (slack == 0) CHECK(mirrored.messages_carried == full.messages);
  // Uneven chunks: each chip's bytes are its orbit chip's, up to the uneven
  // bytes (slack at the link rate) per chip and link.
  const double bw = p.link.bandwidth, chips = double(full.per_chip.size());
  CHECK(double(mirrored.ici_bytes) == Approx(double(full.ici_bytes)).epsilon(1e-12).margin(chips * slack * bw));
  CHECK(mirrored.link_utilization_max == Approx(full.link_utilization_max).epsilon(1e-9).margin(slack / full.time_s));
  CHECK(mirrored.link_utilization_mean == Approx(full.link_utilization_mean).epsilon(1e-9).margin(slack / full.time_s));
  REQUIRE(mirrored.per_chip.size() == full.per_chip.size());
  for (std::size_t c = 0; c < full.per_chip.size(); ++c) {
    INFO("chip " << c);
    const ChipReport &m = mirrored.per_chip[c], &f = full.per_chip[c];
    CHECK(m.finish_s == Approx(f.finish_s).epsilon(1e-9).margin(slack));
    CHECK(double(m.bytes_out) == Approx(double(f.bytes_out)).epsilon(1e-12).margin(slack * bw));
    CHECK(double(m.bytes_in) == Approx(double(f.bytes_in)).epsilon(1e-12).margin(slack * bw));
    CHECK(m.reduce_hbm_bytes == Approx(f.reduce_hbm_bytes).epsilon(1e-12).margin(3 * slack * bw));
  }
  for (std::size_t l = 0; l < full.links.size(); ++l) {
    INFO("link " << full.links[l].link);
    CHECK(double(mirrored.links[l].bytes) == Approx(double(full.links[l].bytes)).epsilon(1e-12).margin(slack * bw));
    CHECK(mirrored.links[l].busy_s == Approx(full.links[l].busy_s).epsilon(1e-9).margin(slack));
  }
  // One chip's messages per orbit (empty ones too where chunks are uneven).
  if (expect_symmetric && !uneven && fewer > 0) CHECK(mirrored.messages * fewer <= full.messages);
}

}  // namespace

TEST_CASE("translations: orbit chips, moved chips and links", "[translations]") {
  const Topology topo(TopologyKind::torus3d, {4, 3, 5}, {true, true, true});
  const Translations t(topo, {0, 2});
  CHECK(t.order() == 20);
  const int c = topo.chip_at({2, 1, 3});
  CHECK(t.rep(c) == topo.chip_at({0, 1, 0}));
  CHECK(t.moved(topo.chip_at({3, 2, 4}), topo.chip_at({0, 1, 0}), c) == topo.chip_at({1, 2, 2}));
  CHECK(t.link_rep(topo.link_id(c, 1, -1)) == topo.link_id(topo.chip_at({0, 1, 0}), 1, -1));
  // Half way round the even x ring is a tie broken by the source's parity.
  CHECK(t.ties(topo.chip_at({1, 0, 0}), topo.chip_at({3, 0, 0})));
  CHECK_FALSE(t.ties(topo.chip_at({1, 0, 0}), topo.chip_at({2, 0, 0})));
  CHECK_THROWS(Translations(Topology(TopologyKind::torus2d, {4, 4}, {true, false}), {1}));
}

TEST_CASE("translations: on several slices, ICI axes move hosts onto hosts and a fabric share weighs its images",
          "[translations][dcn]") {
  // Two slices of a 4x4 torus, hosts of 4 chips: a host is one x row, so
  // x (stride 1) moves a host's chips onto two hosts, y (stride 4) and the
  // DCN axis whole hosts onto hosts.
  const Topology topo(TopologyKind::torus2d, {4, 4}, {true, true}, SliceLayout{{2}, 4, 1});
  REQUIRE(topo.hosts() == 8);
  CHECK_FALSE(Translations::hosts_move(topo, 0));
  CHECK(Translations::hosts_move(topo, 1));
  CHECK(Translations::hosts_move(topo, 2));
  CHECK_THROWS_WITH(Translations(topo, {0, 2}), Catch::Contains("does not move hosts onto hosts"));
  const Translations t(topo, {1, 2});
  CHECK(t.order() == 8);
  // Chip (2, 3) of slice 1 stands for (2, 0) of slice 0; its host's NICs
  // for host 0's, its slice's fabric share for slice 0's.
  const int c = topo.chip_at({2, 3, 1});
  CHECK(t.rep(c) == topo.chip_at({2, 0, 0}));
  std::vector<int> route;
  topo.route(c, topo.chip_at({2, 3, 0}), route);
  std::vector<int> rep_route;
  topo.route(topo.chip_at({2, 0, 0}), topo.chip_at({2, 0, 1}), rep_route);
  REQUIRE(route.size() == 6);
  // The message is the image of one from the orbit chip (the translation
  // taking c to it moves the destination to (2, 0) of slice 1): server by
  // server, the routes stand for the same orbit servers.
  for (std::size_t i = 0; i < route.size(); ++i) {
    INFO("server " << i << " of the route");
    CHECK(t.link_rep(route[i]) == t.link_rep(rep_route[i]));
  }
  CHECK(t.link_rep(route[0]) == rep_route[0]);  // host_up: the orbit chip's PCIe
  CHECK(t.link_rep(route[1]) == rep_route[1]);  // nic_out: its host's NICs
  // The fabric shares: each y shift leaves a slice's share in place, so a
  // simulated flow stands for y's 4 images on it; a NIC or PCIe link only
  // for itself.
  CHECK(t.weight(t.link_rep(route[2])) == 4);
  CHECK(t.weight(t.link_rep(route[3])) == 4);
  CHECK(t.weight(t.link_rep(route[1])) == 1);
  CHECK(t.weight(t.link_rep(route[0])) == 1);
  CHECK(t.weight(topo.link_id(c, 0, +1)) == 1);
  // A slice shift alone moves the fabric share too: weight 1.
  CHECK(Translations(topo, {2}).weight(route[2]) == 1);
  // A DCN route has no tie to break and counts as one hop.
  CHECK_FALSE(t.ties(topo.chip_at({0, 0, 0}), topo.chip_at({0, 2, 1})));
  CHECK(t.hops(topo.chip_at({0, 0, 0}), topo.chip_at({0, 0, 1})) == 1);
}

TEST_CASE("translations: a symmetric collective is what every chip simulated gives", "[translations]") {
  constexpr std::uint64_t MiB = 1 << 20;
  SECTION("torus all-reduce 4x4x4") {
    same_as_every_chip(pod(TopologyKind::torus3d, {4, 4, 4}, {true, true, true}),
                       collective_spec(CollectiveOp::all_reduce, Algorithm::torus, 96 * MiB), true);
  }
  SECTION("ring all-gather on a 1D ring of 6") {
    same_as_every_chip(pod(TopologyKind::ring, {6}, {true}),
                       collective_spec(CollectiveOp::all_gather, Algorithm::ring, 6 * MiB), true);
  }
  SECTION("bidirectional reduce-scatter over the x rings of a 5x3 torus") {
    same_as_every_chip(pod(TopologyKind::torus2d, {5, 3}, {true, true}),
                       collective_spec(CollectiveOp::reduce_scatter, Algorithm::bidirectional_ring, 15 * MiB, {"x"}),
                       true);
  }
  SECTION("all-to-all on a 3x5 torus: routes of two hops fold onto one link") {
    same_as_every_chip(pod(TopologyKind::torus2d, {3, 5}, {true, true}),
                       collective_spec(CollectiveOp::all_to_all, Algorithm::direct, 15 * MiB), true);
  }
  // On 3x5 (15 MiB or 60 KiB) the full run ends 1 ps, one SystemC time unit,
  // from the folded one, beyond this check's 1e-9 (measured; not traced).
  SECTION("dimension-ordered all-to-all on a 3x3 torus: each phase's line flows fold too") {
    same_as_every_chip(pod(TopologyKind::torus2d, {3, 3}, {true, true}),
                       collective_spec(CollectiveOp::all_to_all, Algorithm::dimension_ordered, 9 * MiB), true);
  }
  SECTION("all-to-all on a 4x4 torus: half-way routes are ties, every chip is simulated") {
    same_as_every_chip(pod(TopologyKind::torus2d, {4, 4}, {true, true}),
                       collective_spec(CollectiveOp::all_to_all, Algorithm::direct, 16 * MiB), false);
  }
  SECTION("a buffer that does not divide into equal chunks: within the uneven bytes' time") {
    same_as_every_chip(pod(TopologyKind::ring, {6}, {true}),
                       collective_spec(CollectiveOp::all_reduce, Algorithm::ring, 6 * MiB + 4), true, true);
    same_as_every_chip(pod(TopologyKind::torus3d, {3, 4, 5}, {true, true, true}),
                       collective_spec(CollectiveOp::all_reduce, Algorithm::torus, 10 * MiB + 28), true, true);
  }
  SECTION("fewer elements than chips: some chunks empty, a latency off per such step") {
    same_as_every_chip(pod(TopologyKind::ring, {6}, {true}),
                       collective_spec(CollectiveOp::all_reduce, Algorithm::ring, 3 * 4), true, true);
    same_as_every_chip(pod(TopologyKind::torus3d, {4, 4, 4}, {true, true, true}),
                       collective_spec(CollectiveOp::all_reduce, Algorithm::torus, 100 * 4), true, true);
  }
  SECTION("two slices of a 4x4 torus over DCN, hosts of 4 chips (x rows): y and the slice shift fold") {
    // The hierarchical all-reduce; with oversubscription 4 the fabric
    // shares bind, where each simulated flow stands for its 4 images.
    for (double k : {1.0, 4.0}) {
      INFO("oversubscription " << k);
      same_as_every_chip(multislice_pod({4, 4}, 2, 4, k),
                         collective_spec(CollectiveOp::all_reduce, Algorithm::torus, 64 * MiB), true, false,
                         {"y", "dcn0"});
    }
  }
  SECTION("four slices of a 4x4 torus, one chip per host: x, y and the slice shift fold") {
    same_as_every_chip(multislice_pod({4, 4}, 4, 1, 2.0),
                       collective_spec(CollectiveOp::all_reduce, Algorithm::torus, 64 * MiB), true, false,
                       {"x", "y", "dcn0"});
    // Uneven chunks across slices: within the bound at the DCN rate and latency.
    same_as_every_chip(multislice_pod({4, 4}, 4, 1, 2.0),
                       collective_spec(CollectiveOp::all_reduce, Algorithm::torus, 64 * MiB + 12), true, true,
                       {"x", "y", "dcn0"});
  }
  SECTION("hosts of 8 chips on a 4x4 slice span two x rows: no ICI axis moves them, the slice shift alone folds") {
    // Orbits of two: the messages carried are checked above; the folded
    // run also sends the plan's empty transfers (a chip's may hold an
    // element where its orbit chip's holds none), which outnumber the rest.
    same_as_every_chip(multislice_pod({4, 4}, 2, 8, 2.0),
                       collective_spec(CollectiveOp::all_reduce, Algorithm::torus, 64 * MiB), true, false, {"dcn0"}, 0);
  }
  SECTION("a mesh axis: only the wrapping one is used") {
    same_as_every_chip(pod(TopologyKind::torus2d, {4, 4}, {true, false}),
                       collective_spec(CollectiveOp::all_reduce, Algorithm::torus, 16 * MiB), true);
  }
}

TEST_CASE("translations: why a plan is not invariant, and by how many bytes", "[translations]") {
  const Topology topo(TopologyKind::ring, {6}, {true});
  const Translations t(topo, {0});
  const auto plan_of = [&](CollectiveOp op, Algorithm a, std::uint64_t bytes) {
    CollectiveSpec s = collective_spec(op, a, bytes);
    if (op == CollectiveOp::broadcast) s.pipeline_chunks = 4;
    return plan_collective(topo, Mesh(topo, {}), LinkConfig{}, s);
  };
  // 6 KiB + 4 B: 1537 elements, chunks of 257 and 256; each chip's ten steps
  // move one element more or less than chip 0's in some of them.
  const Invariance uneven = t.invariance(plan_of(CollectiveOp::all_reduce, Algorithm::ring, 6 * 1024 + 4));
  CHECK(uneven.blocker.empty());
  CHECK(uneven.uneven_bytes > 0);
  CHECK(uneven.uneven_bytes <= 10 * 4);  // at most one element per step
  const Invariance even = t.invariance(plan_of(CollectiveOp::all_reduce, Algorithm::ring, 6 * 1024));
  CHECK(even.blocker.empty());
  CHECK(even.uneven_bytes == 0);
  // A broadcast from a root: chip 1 is not chip 0 moved.
  CHECK_THAT(t.invariance(plan_of(CollectiveOp::broadcast, Algorithm::ring, 6 * 1024)).blocker,
             Catch::Contains("is not chip 0's moved"));
}

TEST_CASE("translations: a plan with more steps than the check's budget is refused before comparing any",
          "[translations]") {
  // A ring all-gather over 65536 chips: each of the 65535 chips that follow
  // chip 0 takes n - 1 = 65535 steps, 65535^2 = 4294836225 to compare,
  // beyond the 2^26 = 67108864 the check affords (docs/interconnect.md).
  const Topology topo(TopologyKind::ring, {65536}, {true});
  const Translations t(topo, {0});
  const Invariance big = t.invariance(plan_collective(
      topo, Mesh(topo, {}), LinkConfig{}, collective_spec(CollectiveOp::all_gather, Algorithm::ring, 65536 * 64)));
  CHECK(big.blocker == "4294836225 steps to compare, more than 67108864");
}

}  // namespace test_translations
