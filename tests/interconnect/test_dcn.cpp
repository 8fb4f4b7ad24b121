// Collectives across slices over the data-center network against their
// closed forms (docs/reference/formulas.md §1 for the ring terms;
// docs/interconnect.md, "DCN", for the route).
#include <catch2/catch.hpp>

#include <cmath>

#include "interconnect/pod_shape.h"
#include "interconnect/run_collective.h"
#include "sim/error.h"

namespace test_dcn {

using namespace interconnect;
using namespace interconnect::v4_ici;

namespace {

constexpr double kNic = 2.5e10;   // NICs per host (docs/reference/dcn.md#v5e)
constexpr double kDcnL = 1.0e-5;  // per DCN message (docs/reference/dcn.md#latency)

// `slices` slices of a ring of `chips`, joined by DCN; the host link is
// fast enough never to bind unless a test says otherwise.
PodNetworkConfig multislice(int chips, int slices, int chips_per_host, double oversubscription = 1.0) {
  PodNetworkConfig p;
  p.topology = TopologyKind::ring;
  p.shape = {chips};
  p.link.bandwidth = kW;
  p.link.latency = kL;
  p.link.dcn.nic_bandwidth = kNic;
  p.link.dcn.host_bandwidth = 1e13;
  p.link.dcn.latency = kDcnL;
  p.link.dcn.oversubscription = oversubscription;
  p.slices = slices;
  p.chips_per_host = chips_per_host;
  return p;
}

CollectiveResult run(const PodNetworkConfig& p, CollectiveOp op, std::uint64_t bytes,
                     std::vector<std::string> axes = {}, Algorithm a = Algorithm::automatic) {
  CollectiveSpec s;
  s.op = op;
  s.algorithm = a;
  s.bytes = bytes;
  s.axes = std::move(axes);
  return run_collective(p, s);
}

double rel_err(double got, double want) { return std::abs(got - want) / want; }

// A ring all-reduce of S bytes over n ranks, each step one message of
// S/n at `bw` plus `latency` (docs/reference/formulas.md §1).
double ring_all_reduce(int n, double S, double bw, double latency) {
  return 2.0 * (n - 1) / n * S / bw + 2.0 * (n - 1) * latency;
}

}  // namespace

TEST_CASE("dcn: a route between slices crosses the six DCN servers and no ICI link", "[dcn][topology]") {
  const Topology t = multislice(8, 2, 4).make_topology();
  REQUIRE(t.chips() == 16);
  REQUIRE(t.slices() == 2);
  REQUIRE(t.hosts() == 4);
  std::vector<int> route;
  t.route(1, 9, route);
  REQUIRE(route.size() == 6);
  const LinkClass want[] = {LinkClass::host_up,     LinkClass::nic_out, LinkClass::fabric_up,
                            LinkClass::fabric_down, LinkClass::nic_in,  LinkClass::host_down};
  for (std::size_t i = 0; i < route.size(); ++i) CHECK(t.link_class(route[i]) == want[i]);
  CHECK(t.hops(1, 9) == 0);
  t.route(1, 3, route);  // inside a slice: ICI only
  CHECK(route.size() == 2);
  for (int l : route) CHECK(t.link_class(l) == LinkClass::ici);
  CHECK(t.links() == 2 * 16);  // ICI link directions only: two rings of 8
}

TEST_CASE("dcn: an all-reduce across slices follows 2(N-1)/N S / B_nic plus latency", "[dcn][timing]") {
  // One chip per host and per slice, no oversubscription: every step moves
  // S/N through each NIC, whichever way the ring runs.
  const int n = GENERATE(2, 4, 8);
  const std::uint64_t bytes = 64 * kMiB;
  const double want = ring_all_reduce(n, double(bytes), kNic, kDcnL);
  for (Algorithm a : {Algorithm::automatic, Algorithm::ring}) {
    const auto r = run(multislice(1, n, 1), CollectiveOp::all_reduce, bytes, {}, a);
    INFO("slices " << n << " " << to_string(a) << ": " << r.time_s << " vs " << want);
    CHECK(rel_err(r.time_s, want) < 0.02);
  }
  // all_gather and reduce_scatter over DCN: half of it each.
  const double half = (n - 1.0) / n * double(bytes) / kNic + (n - 1.0) * kDcnL;
  CHECK(rel_err(run(multislice(1, n, 1), CollectiveOp::all_gather, bytes).time_s, half) < 0.02);
  CHECK(rel_err(run(multislice(1, n, 1), CollectiveOp::reduce_scatter, bytes).time_s, half) < 0.02);
}

TEST_CASE("dcn: oversubscription k multiplies the time once the fabric binds", "[dcn][timing]") {
  // Four hosts of one chip per slice: the slice's fabric share is
  // 4 B_nic / k each way, and all four chips cross it at once.
  const std::uint64_t bytes = 32 * kMiB;
  const double S = double(bytes);
  const double latency = 2.0 * kDcnL;  // two slices: 2 steps
  const double t1 = run(multislice(4, 2, 1), CollectiveOp::all_reduce, bytes, {"dcn"}).time_s;
  CHECK(rel_err(t1, ring_all_reduce(2, S, kNic, kDcnL)) < 0.02);
  for (double k : {2.0, 4.0}) {
    const double t = run(multislice(4, 2, 1, k), CollectiveOp::all_reduce, bytes, {"dcn"}).time_s;
    INFO("k=" << k << ": " << t << " vs " << t1);
    CHECK(rel_err(t - latency, k * (t1 - latency)) < 0.02);
  }
  // With each chip's host link at B_nic / 2 the hosts offer 4 x B_nic / 2:
  // the fabric binds only beyond k = 2.
  auto slow_host = [&](double k) {
    auto p = multislice(4, 2, 1, k);
    p.link.dcn.host_bandwidth = kNic / 2;
    return run(p, CollectiveOp::all_reduce, bytes, {"dcn"}).time_s;
  };
  const double host_bound = ring_all_reduce(2, S, kNic / 2, kDcnL);
  CHECK(rel_err(slow_host(1.0), host_bound) < 0.02);
  CHECK(rel_err(slow_host(2.0), host_bound) < 0.02);
  CHECK(rel_err(slow_host(4.0), ring_all_reduce(2, S, kNic / 4, kDcnL)) < 0.02);
}

TEST_CASE("dcn: hierarchical all-reduce = ICI reduce-scatter + DCN all-reduce of the shard + ICI all-gather",
          "[dcn][timing]") {
  const int c = 4;  // chips per slice, a ring with wraparound
  const int n = GENERATE(2, 4);
  const std::uint64_t bytes = 64 * kMiB;
  const double S = double(bytes);
  // The bidirectional ring on ICI: (c-1) steps of S/(2c) each way.
  const double ici_half = (c - 1) * (kL + S / (2.0 * c * kW));
  SECTION("one chip per host: each chip's shard on its own NIC") {
    const auto r = run(multislice(c, n, 1), CollectiveOp::all_reduce, bytes);
    const double want = ici_half + ring_all_reduce(n, S / c, kNic, kDcnL) + ici_half;
    INFO("slices " << n << ": " << r.time_s << " vs " << want);
    CHECK(rel_err(r.time_s, want) < 0.02);
    CHECK(r.participants == c * n);
  }
  SECTION("four chips per host: their shards share the host's NICs") {
    const auto r = run(multislice(c, n, 4), CollectiveOp::all_reduce, bytes);
    const double want = ici_half + ring_all_reduce(n, S, kNic, kDcnL) + ici_half;
    INFO("slices " << n << ": " << r.time_s << " vs " << want);
    CHECK(rel_err(r.time_s, want) < 0.02);
  }
  SECTION("the chip's host link binds when it is slower than its NIC share") {
    auto p = multislice(c, n, 1);
    p.link.dcn.host_bandwidth = kNic / 2;
    const auto r = run(p, CollectiveOp::all_reduce, bytes);
    const double want = ici_half + ring_all_reduce(n, S / c, kNic / 2, kDcnL) + ici_half;
    CHECK(rel_err(r.time_s, want) < 0.02);
  }
}

TEST_CASE("dcn: collectives across slices compute the definition", "[dcn][functional]") {
  for (CollectiveOp op : {CollectiveOp::all_reduce, CollectiveOp::all_gather, CollectiveOp::reduce_scatter,
                          CollectiveOp::all_to_all, CollectiveOp::permute}) {
    CollectiveSpec s;
    s.op = op;
    s.bytes = 4 * 48;
    s.functional = true;
    const auto r = run_collective(multislice(4, 3, 2), s);
    INFO(to_string(op) << ": " << r.functional.first_mismatch);
    REQUIRE(r.functional.checked);
    CHECK(r.functional.matches);
  }
}

TEST_CASE("dcn: a placement the slices do not admit is a located error", "[dcn][validation]") {
  auto p = multislice(4, 6, 1);
  p.mesh = {{"model", 4}, {"data", 4, true}};
  CHECK_THROWS_WITH(p.validate(), Catch::Contains("pod.dcn_axes") && Catch::Contains("does not divide 6 slices"));
  p.mesh = {{"model", 4}, {"data", 3, true}};
  CHECK_THROWS_WITH(p.validate(), Catch::Contains("pod.dcn_axes") && Catch::Contains("spans 3 slices"));
  p.mesh = {{"model", 8}, {"data", 6, true}};  // an ICI axis larger than a slice
  CHECK_THROWS_WITH(p.validate(), Catch::Contains("mesh.model") && Catch::Contains("slice"));
  p.mesh = {{"model", 4}, {"data", 6}};  // nothing placed across the slices
  CHECK_THROWS_WITH(p.validate(), Catch::Contains("pod.dcn_axes"));
  p.mesh = {{"model", 4}, {"data", 2, true}, {"pipe", 3, true}};
  CHECK_NOTHROW(p.validate());
  p.model = NetworkModel::packet;
  CHECK_THROWS_WITH(p.validate(), Catch::Contains("pod.network_model"));
}

}  // namespace test_dcn
