// Bytes are conserved, and every link carries what the algorithm sends over
// it (counted here from each algorithm's definition).
#include <catch2/catch.hpp>

#include "interconnect/pod_shape.h"
#include "interconnect/run_collective.h"

namespace test_conservation {

using namespace interconnect;

namespace {

PodNetworkConfig pod(TopologyKind kind, std::vector<int> shape, std::vector<bool> wrap) {
  return pod_shape(kind, std::move(shape), std::move(wrap));
}

CollectiveResult run(const PodNetworkConfig& p, CollectiveOp op, Algorithm a, std::uint64_t bytes) {
  CollectiveSpec s;
  s.op = op;
  s.algorithm = a;
  s.bytes = bytes;
  return run_collective(p, s);
}

void require_conserved(const CollectiveResult& r) {
  std::uint64_t out = 0, in = 0;
  for (const auto& c : r.per_chip) {
    out += c.bytes_out;
    in += c.bytes_in;
  }
  CHECK(out == in);
  CHECK(out == r.ici_bytes);
}

}  // namespace

TEST_CASE("collective conservation: a ring all-gather loads one direction with (n-1)/n of the buffer",
          "[collective][conservation]") {
  const int n = 8;
  const std::uint64_t bytes = 8 * 4096;
  const auto r = run(pod(TopologyKind::ring, {n}, {true}), CollectiveOp::all_gather, Algorithm::ring, bytes);
  require_conserved(r);
  CHECK(r.ici_bytes == static_cast<std::uint64_t>(n) * (n - 1) * bytes / n);
  for (const auto& l : r.links) CHECK(l.bytes == (l.dir > 0 ? (n - 1) * bytes / n : 0));
  for (const auto& c : r.per_chip) {
    CHECK(c.bytes_out == (n - 1) * bytes / n);
    CHECK(c.bytes_in == (n - 1) * bytes / n);
  }
}

TEST_CASE("collective conservation: a bidirectional ring all-reduce loads both directions equally",
          "[collective][conservation]") {
  const int n = 8;
  const std::uint64_t bytes = 8 * 2 * 4096;
  const auto r =
      run(pod(TopologyKind::ring, {n}, {true}), CollectiveOp::all_reduce, Algorithm::bidirectional_ring, bytes);
  require_conserved(r);
  // Each direction: reduce-scatter and all-gather of half the buffer.
  for (const auto& l : r.links) CHECK(l.bytes == 2 * (n - 1) * (bytes / 2) / n);
  CHECK(r.link_utilization_mean == Approx(r.link_utilization_max).epsilon(1e-9));
}

TEST_CASE("collective conservation: torus all-reduce puts each stream's share on each axis",
          "[collective][conservation]") {
  // 4x4 torus, k = 2 axes, 4 streams of V/4. The stream that starts on axis
  // a sends 3 chunks of V/16 on it per phase (reduce-scatter, all-gather);
  // the stream that reaches a second sends 3 chunks of V/64 per phase. Each
  // link direction of axis a carries one of each per direction.
  const std::uint64_t V = 64 * 4096;
  const auto r = run(pod(TopologyKind::torus2d, {4, 4}, {true, true}), CollectiveOp::all_reduce, Algorithm::torus, V);
  require_conserved(r);
  for (const auto& l : r.links) CHECK(l.bytes == 2 * 3 * V / 16 + 2 * 3 * V / 64);
}

TEST_CASE("collective conservation: multi-hop messages count on every link they cross", "[collective][conservation]") {
  // Permute by 2 on a ring of 6: each message crosses two + links.
  CollectiveSpec s;
  s.op = CollectiveOp::permute;
  s.bytes = 4096;
  for (int i = 0; i < 6; ++i) s.pairs.emplace_back(i, (i + 2) % 6);
  const auto r = run_collective(pod(TopologyKind::ring, {6}, {true}), s);
  require_conserved(r);
  for (const auto& l : r.links) CHECK(l.bytes == (l.dir > 0 ? 2 * 4096 : 0));
  for (const auto& c : r.per_chip) CHECK(c.bytes_out == 4096);
}

TEST_CASE("collective conservation: all-to-all moves (n-1)/n of every buffer", "[collective][conservation]") {
  const std::uint64_t bytes = 9 * 4096;
  const auto r =
      run(pod(TopologyKind::torus2d, {3, 3}, {true, true}), CollectiveOp::all_to_all, Algorithm::direct, bytes);
  require_conserved(r);
  CHECK(r.ici_bytes == 9 * 8 * bytes / 9);
  std::uint64_t hop_bytes = 0;
  for (const auto& l : r.links) hop_bytes += l.bytes;
  // On a 3x3 torus every other chip is 1 hop away along one axis or 2 hops
  // (one per axis): 4 at distance 1 and 4 at distance 2 from each chip.
  CHECK(hop_bytes == 9 * (4 * 1 + 4 * 2) * (bytes / 9));
}

TEST_CASE("collective conservation: all-to-all over more chip pairs than the network caches routes for",
          "[collective][conservation]") {
  // 8x8 torus: 4032 pairs, each message on its own route (the network keeps
  // about eight routes per chip, so most are worked out afresh and replace
  // another). Along an axis of 8 the distances from a coordinate are
  // 0, 1, 1, 2, 2, 3, 3, 4 (sum 16); from a chip to the 63 others, 8 x 16 hops
  // per axis, 256 in all.
  const std::uint64_t bytes = 64 * 4096;
  const auto r =
      run(pod(TopologyKind::torus2d, {8, 8}, {true, true}), CollectiveOp::all_to_all, Algorithm::direct, bytes);
  require_conserved(r);
  std::uint64_t hop_bytes = 0;
  for (const auto& l : r.links) hop_bytes += l.bytes;
  CHECK(hop_bytes == 64 * 256 * (bytes / 64));
}

}  // namespace test_conservation
