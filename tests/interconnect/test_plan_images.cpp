// Plans of the orbit chips only (algorithms.h, images_along): on a
// symmetric pod the planner leaves out the chips whose schedules are their
// neighbours' images by construction. Each case plans every chip too and
// compares: the chips planned get the same steps, Translations::invariance
// of the smaller plan is the full plan's (blocker, uneven bytes and hops),
// and the bytes between slices are the same. Where the buffer does not
// divide evenly the axes the collective runs along are not left out, and
// the full check finds uneven bytes there: leaving them out would hide them.
#include <catch2/catch.hpp>

#include "interconnect/algorithms.h"
#include "interconnect/mesh.h"
#include "interconnect/pod_shape.h"
#include "interconnect/slice_traffic.h"
#include "interconnect/translations.h"

namespace test_plan_images {

using namespace interconnect;

namespace {

std::vector<Step> steps_of(const ChipSchedule& chip) {
  std::vector<Step> out;
  chip.for_each_step([&out](const Step& step) { out.push_back(step); });
  return out;
}

bool same(const std::vector<Transfer>& a, const std::vector<Transfer>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].peer != b[i].peer || a[i].tag != b[i].tag || a[i].offset != b[i].offset || a[i].count != b[i].count)
      return false;
  return true;
}

// Plans `s` both ways under translations along `axes`; returns the axes
// left out.
std::vector<int> compare(const Topology& topo, const Mesh& mesh, const CollectiveSpec& s,
                         const std::vector<int>& axes) {
  const Translations t(topo, axes);
  const auto along = images_along(topo, mesh, s, axes);
  REQUIRE(along.has_value());
  const CollectivePlan full = plan_collective(topo, mesh, LinkConfig{}, s);
  const CollectivePlan part = plan_collective(topo, mesh, LinkConfig{}, s, *along);
  CHECK(part.images_along == *along);
  int planned = 0;
  for (int c = 0; c < topo.chips(); ++c) {
    INFO("chip " << c);
    if (!part.planned(topo, c)) {
      CHECK(part.chips[c].streams.empty());
      continue;
    }
    ++planned;
    const std::vector<Step> a = steps_of(full.chips[c]), b = steps_of(part.chips[c]);
    REQUIRE(a.size() == b.size());
    for (std::size_t k = 0; k < a.size(); ++k) {
      CHECK(a[k].reduce == b[k].reduce);
      CHECK(same(a[k].sends, b[k].sends));
      CHECK(same(a[k].recvs, b[k].recvs));
    }
  }
  int fewer = 1;
  for (const int a : *along) fewer *= topo.size(a);
  CHECK(planned * fewer == topo.chips());
  const Invariance want = t.invariance(full), got = t.invariance(part);
  CHECK(got.blocker == want.blocker);
  CHECK(got.uneven_bytes == want.uneven_bytes);
  CHECK(got.uneven_hops == want.uneven_hops);
  const std::vector<SliceTraffic> tw = slice_traffic(full, topo), tg = slice_traffic(part, topo);
  REQUIRE(tg.size() == tw.size());
  for (std::size_t i = 0; i < tw.size(); ++i) {
    CHECK(tg[i].from == tw[i].from);
    CHECK(tg[i].to == tw[i].to);
    CHECK(tg[i].bytes == tw[i].bytes);
  }
  return *along;
}

}  // namespace

TEST_CASE("plan images: a torus all-gather and reduce-scatter leave out every translation axis",
          "[translations][images]") {
  // FSDP's collectives on a 4x6x6 torus (the superpod's 16x24x24, smaller):
  // the group is the whole torus, so every chip's ring along an axis is its
  // neighbour's one place on, with equal chunks (the buffer is the shard
  // times the group). 64 MiB + 2 B is no multiple of the 144 chips: the
  // shard rounds down, the counts stay equal.
  const Topology topo(TopologyKind::torus3d, {4, 6, 6}, {true, true, true});
  const Mesh mesh(topo, {});
  for (const CollectiveOp op : {CollectiveOp::all_gather, CollectiveOp::reduce_scatter}) {
    const std::vector<int> along =
        compare(topo, mesh, collective_spec(op, Algorithm::torus, 64 * 1024 * 1024 + 2), {0, 1, 2});
    CHECK(along == std::vector<int>{0, 1, 2});
  }
  // An all-reduce whose streams divide by the group: the same.
  CHECK(compare(topo, mesh, collective_spec(CollectiveOp::all_reduce, Algorithm::torus, 6 * 144 * 1024), {0, 1, 2}) ==
        std::vector<int>{0, 1, 2});
}

TEST_CASE("plan images: an uneven all-reduce keeps the axes it runs along and finds their uneven bytes",
          "[translations][images]") {
  // Along x only, on a 4x6 torus: y is no part of the groups, so it is left
  // out whatever the size; x is planned and compared, since 6 KiB + 4 B
  // (1537 elements in 2 streams) does not divide over 4 chips.
  const Topology topo(TopologyKind::torus2d, {4, 6}, {true, true});
  const Mesh mesh(topo, {});
  const CollectiveSpec s = collective_spec(CollectiveOp::all_reduce, Algorithm::torus, 6 * 1024 + 4, {"x"});
  CHECK(compare(topo, mesh, s, {0, 1}) == std::vector<int>{1});
  CHECK(Translations(topo, {0, 1}).invariance(plan_collective(topo, mesh, LinkConfig{}, s)).uneven_bytes > 0);
  // The same bytes along both axes: nothing can be left out.
  const CollectiveSpec both = collective_spec(CollectiveOp::all_reduce, Algorithm::torus, 6 * 1024 + 4);
  CHECK(compare(topo, mesh, both, {0, 1}).empty());
}

TEST_CASE("plan images: on several slices the slice shift is left out, and the bytes between slices stay",
          "[translations][images]") {
  // Four slices of a 4x4 torus, one chip a host: FSDP inside each slice,
  // and the data-parallel all-reduce of each chip's shard over the slices
  // (the hierarchical plan's DCN ring), whose uneven shard keeps the slice
  // shift planned: 4 KiB + 4 B over 4 slices.
  const Topology topo(TopologyKind::torus2d, {4, 4}, {true, true}, SliceLayout{{4}, 1, 1});
  const Mesh mesh(topo, {});
  const std::vector<int> axes{0, 1, 2};
  CHECK(compare(topo, mesh, collective_spec(CollectiveOp::all_gather, Algorithm::torus, 8 * 1024, {"x", "y"}), axes) ==
        axes);
  CHECK(compare(topo, mesh, collective_spec(CollectiveOp::all_reduce, Algorithm::torus, 4 * 1024 + 4, {"dcn"}), axes) ==
        std::vector<int>{0, 1});
  CHECK(compare(topo, mesh, collective_spec(CollectiveOp::all_reduce, Algorithm::torus, 4 * 1024, {"dcn"}), axes) ==
        axes);
}

TEST_CASE("plan images: what cannot be left out", "[translations][images]") {
  const Topology topo(TopologyKind::torus2d, {4, 4}, {true, true});
  const Mesh mesh(topo, {});
  // A ring through both axes (a snake) is no image of itself under a shift.
  CHECK_FALSE(
      images_along(topo, mesh, collective_spec(CollectiveOp::all_reduce, Algorithm::ring, 4096), {0, 1}).has_value());
  // ... but a ring along x leaves y out.
  CHECK(compare(topo, mesh, collective_spec(CollectiveOp::all_reduce, Algorithm::ring, 4096 + 4, {"x"}), {1}) ==
        std::vector<int>{1});
  // An all-to-all's steps are written out chip by chip: every chip planned.
  CHECK_FALSE(
      images_along(topo, mesh, collective_spec(CollectiveOp::all_to_all, Algorithm::direct, 4096), {0, 1}).has_value());
}

}  // namespace test_plan_images
