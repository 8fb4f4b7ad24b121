// Messages a collective sends: one per chunk that holds an element, none for
// empty chunks (a small buffer on many chips), counted against closed forms
// and against the plan's non-empty transfers; the values still come out right.
#include <catch2/catch.hpp>

#include "interconnect/algorithms.h"
#include "interconnect/mesh.h"
#include "interconnect/run_collective.h"

namespace test_collective_messages {

using namespace interconnect;

namespace {

PodNetworkConfig torus(int side) {
  PodNetworkConfig p;
  p.topology = TopologyKind::torus3d;
  p.shape = {side, side, side};
  p.wraparound = {true, true, true};
  return p;
}

// Sends over every step of every chip's schedule: all, and those with at
// least one element.
struct Sends {
  std::uint64_t all = 0, nonempty = 0;
};
Sends planned_sends(const CollectivePlan& plan) {
  Sends n;
  for (const ChipSchedule& chip : plan.chips)
    chip.for_each_step([&n](const Step& step) {
      for (const Transfer& t : step.sends) {
        ++n.all;
        n.nonempty += t.count > 0;
      }
    });
  return n;
}

}  // namespace

TEST_CASE("collective messages: a ring all-reduce of E < n elements sends 2 (n - 1) E messages",
          "[collective][messages]") {
  // E of the n chunks hold one element; each goes n - 1 hops round the ring
  // in the reduce-scatter and again in the all-gather. Empty chunks are not
  // sent (before: 2 n (n - 1) messages whatever E).
  const int n = 16;
  const std::uint64_t E = GENERATE(1, 5, 15);
  PodNetworkConfig p;
  p.topology = TopologyKind::ring;
  p.shape = {n};
  CollectiveSpec s;
  s.op = CollectiveOp::all_reduce;
  s.algorithm = Algorithm::ring;
  s.bytes = E * 4;
  s.functional = true;
  const CollectiveResult r = run_collective(p, s);
  CHECK(r.messages == 2 * (n - 1) * E);
  CHECK(r.functional.matches);
  // With E = 1 the one element goes round the ring twice, hop after hop,
  // each hop its latency and its 4 bytes, each reduce-scatter hop then the
  // reduction's tail (its 4 bytes at HBM's pace, 3 HBM bytes per byte);
  // chips whose chunks are empty wait for nothing.
  if (E == 1) {
    const double hop = p.link.latency + 4 / p.link.bandwidth;
    const double tail = 4 * p.reduction.hbm_bytes_per_reduced_byte / p.reduction.hbm_bytes_per_s;
    CHECK(r.time_s == Approx(2 * (n - 1) * hop + (n - 1) * tail).margin(3 * (n - 1) * 1e-12));
  }
}

TEST_CASE("collective messages: an 8 KB all-reduce on a 16^3 torus sends only its non-empty chunks",
          "[collective][messages]") {
  const PodNetworkConfig p = torus(16);
  CollectiveSpec s;
  s.op = CollectiveOp::all_reduce;
  s.algorithm = Algorithm::torus;
  s.bytes = 8 * 1024;
  const Topology topo = p.make_topology();
  const CollectivePlan plan = plan_collective(topo, Mesh(topo, p.mesh), p.link, s);
  const Sends want = planned_sends(plan);
  const CollectiveResult r = run_collective(p, s, false);  // every chip simulated (translations.h)
  INFO(want.all << " planned sends, " << want.nonempty << " not empty");
  CHECK(r.messages == want.nonempty);
  // 2048 elements over 6 streams: the third axis's chunks of 1 or 2
  // elements cut 16 ways are mostly empty.
  CHECK(want.nonempty < want.all);
}

TEST_CASE("collective messages: empty chunks skipped on both ends keep a torus all-reduce exact",
          "[collective][messages]") {
  // 4x4x4, 6 streams, 100 elements: many empty chunks in every phase.
  PodNetworkConfig p = torus(4);
  CollectiveSpec s;
  s.op = CollectiveOp::all_reduce;
  s.algorithm = GENERATE(Algorithm::torus, Algorithm::ring, Algorithm::bidirectional_ring);
  s.bytes = 100 * 4;
  s.functional = true;
  const CollectiveResult r = run_collective(p, s);
  CHECK(r.functional.checked);
  CHECK(r.functional.matches);
}

}  // namespace test_collective_messages
