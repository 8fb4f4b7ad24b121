// Functional runs: real values move, and every chip's result is compared with
// the definition of the op computed in this file from the inputs.
#include <catch2/catch.hpp>

#include <numeric>
#include <systemc>

#include "interconnect/collective.h"
#include "interconnect/deadlock.h"
#include "interconnect/network_factory.h"
#include "interconnect/pod_shape.h"
#include "interconnect/run_collective.h"
#include "sim/kernel.h"

namespace test_collective_functional {

using namespace interconnect;

namespace {

PodNetworkConfig pod(TopologyKind kind, std::vector<int> shape, std::vector<bool> wrap) {
  PodNetworkConfig p = pod_shape(kind, std::move(shape), std::move(wrap));
  p.link.bandwidth = 1e10;
  p.link.latency = 1e-7;
  p.link.packet_bytes = 256;
  return p;
}

// Runs a functional collective through the module-level API with inputs
// input[chip][i] = 1000 * chip + i and returns every chip's output.
std::vector<std::vector<double>> run(const PodNetworkConfig& p, const CollectiveSpec& spec,
                                     std::vector<std::vector<double>>& inputs) {
  p.validate();
  spec.validate(p);
  const Topology topo = p.make_topology();
  CollectivePlan plan = plan_collective(topo, Mesh(topo, p.mesh), p.link, spec);
  sim::reset_kernel();
  auto net = make_network("ici", topo, p);
  VectorUnitReduction red(*net, p.reduction);
  Collective coll(*net, red, std::move(plan), true);
  inputs.assign(topo.chips(), {});
  for (int chip = 0; chip < topo.chips(); ++chip) {
    inputs[chip].resize(coll.input_elements());
    for (std::size_t i = 0; i < inputs[chip].size(); ++i) inputs[chip][i] = 1000.0 * chip + static_cast<double>(i);
    coll.set_input(chip, inputs[chip]);
  }
  for (int chip = 0; chip < topo.chips(); ++chip) coll.join(chip);
  sc_core::sc_start();
  require_all_done(*net, {&coll});
  std::vector<std::vector<double>> out;
  for (int chip = 0; chip < topo.chips(); ++chip) out.push_back(coll.output(chip));
  return out;
}

// Chips sharing coordinates off the collective's axes, ascending.
std::vector<int> group_of(const Topology& t, int chip, const std::vector<int>& axes) {
  std::vector<int> g;
  for (int c = 0; c < t.chips(); ++c) {
    bool same = true;
    for (int a = 0; a < t.axes(); ++a) {
      if (std::find(axes.begin(), axes.end(), a) == axes.end() && t.coord(c, a) != t.coord(chip, a)) same = false;
    }
    if (same) g.push_back(c);
  }
  return g;
}

}  // namespace

TEST_CASE("collective functional: all_reduce sums every input exactly", "[collective][functional]") {
  auto algorithm = GENERATE(Algorithm::ring, Algorithm::bidirectional_ring, Algorithm::torus);
  auto p = GENERATE(pod(TopologyKind::ring, {5}, {true}), pod(TopologyKind::ring, {4}, {false}),
                    pod(TopologyKind::torus2d, {3, 4}, {true, false}),
                    pod(TopologyKind::torus3d, {3, 2, 3}, {true, false, true}));
  CollectiveSpec spec;
  spec.op = CollectiveOp::all_reduce;
  spec.algorithm = algorithm;
  spec.bytes = 4 * 1001;  // not a multiple of the chip count: chunks differ by one element
  spec.functional = true;
  std::vector<std::vector<double>> in;
  const auto out = run(p, spec, in);
  const Topology t = p.make_topology();
  for (int chip = 0; chip < t.chips(); ++chip) {
    REQUIRE(out[chip].size() == 1001);
    for (std::size_t i = 0; i < 1001; ++i) {
      double sum = 0;
      for (int c = 0; c < t.chips(); ++c) sum += in[c][i];
      REQUIRE(out[chip][i] == sum);
    }
  }
}

TEST_CASE("collective functional: all_gather puts every shard in rank order", "[collective][functional]") {
  auto algorithm = GENERATE(Algorithm::ring, Algorithm::bidirectional_ring, Algorithm::torus);
  auto p = GENERATE(pod(TopologyKind::ring, {6}, {true}), pod(TopologyKind::torus2d, {4, 3}, {true, true}),
                    pod(TopologyKind::torus3d, {3, 3, 2}, {true, true, false}));
  CollectiveSpec spec;
  spec.op = CollectiveOp::all_gather;
  spec.algorithm = algorithm;
  const Topology t = p.make_topology();
  spec.bytes = 4 * 7 * static_cast<std::uint64_t>(t.chips());  // 7 elements per shard
  spec.functional = true;
  std::vector<std::vector<double>> in;
  const auto out = run(p, spec, in);
  for (int chip = 0; chip < t.chips(); ++chip) {
    std::vector<double> want;
    for (int c = 0; c < t.chips(); ++c) want.insert(want.end(), in[c].begin(), in[c].end());
    REQUIRE(out[chip] == want);
  }
}

TEST_CASE("collective functional: reduce_scatter leaves rank r the sum of shard r", "[collective][functional]") {
  auto algorithm = GENERATE(Algorithm::ring, Algorithm::bidirectional_ring, Algorithm::torus);
  auto p = GENERATE(pod(TopologyKind::ring, {4}, {false}), pod(TopologyKind::torus2d, {3, 4}, {false, true}),
                    pod(TopologyKind::torus3d, {3, 3, 3}, {true, true, true}));
  CollectiveSpec spec;
  spec.op = CollectiveOp::reduce_scatter;
  spec.algorithm = algorithm;
  const Topology t = p.make_topology();
  const std::size_t shard = 5;
  spec.bytes = 4 * shard * static_cast<std::uint64_t>(t.chips());
  spec.functional = true;
  std::vector<std::vector<double>> in;
  const auto out = run(p, spec, in);
  for (int chip = 0; chip < t.chips(); ++chip) {
    REQUIRE(out[chip].size() == shard);
    for (std::size_t i = 0; i < shard; ++i) {
      double sum = 0;
      for (int c = 0; c < t.chips(); ++c) sum += in[c][chip * shard + i];
      REQUIRE(out[chip][i] == sum);
    }
  }
}

TEST_CASE("collective functional: a collective over one mesh axis works in every sub-ring",
          "[collective][functional]") {
  auto op = GENERATE(CollectiveOp::all_reduce, CollectiveOp::all_gather, CollectiveOp::reduce_scatter,
                     CollectiveOp::all_to_all);
  auto p = pod(TopologyKind::torus3d, {3, 4, 2}, {true, true, false});
  p.mesh = {{"data", 3}, {"model", 8}};  // model spans physical y and z
  auto axis = GENERATE(std::string("data"), std::string("model"));
  CollectiveSpec spec;
  spec.op = op;
  spec.axes = {axis};
  spec.bytes = 4 * 24 * 2;
  spec.functional = true;
  std::vector<std::vector<double>> in;
  const auto out = run(p, spec, in);
  const Topology t = p.make_topology();
  const std::vector<int> axes = axis == "data" ? std::vector<int>{0} : std::vector<int>{1, 2};
  const std::size_t v = 48;
  for (int chip = 0; chip < t.chips(); ++chip) {
    const auto g = group_of(t, chip, axes);
    const std::size_t n = g.size(), s = v / n;
    const std::size_t r = static_cast<std::size_t>(std::find(g.begin(), g.end(), chip) - g.begin());
    std::vector<double> want;
    if (op == CollectiveOp::all_reduce || op == CollectiveOp::reduce_scatter) {
      want.assign(v, 0.0);
      for (int c : g) {
        for (std::size_t i = 0; i < v; ++i) want[i] += in[c][i];
      }
      if (op == CollectiveOp::reduce_scatter)
        want = std::vector<double>(want.begin() + r * s, want.begin() + (r + 1) * s);
    } else if (op == CollectiveOp::all_gather) {
      for (int c : g) want.insert(want.end(), in[c].begin(), in[c].end());
    } else {
      for (int c : g) want.insert(want.end(), in[c].begin() + r * s, in[c].begin() + (r + 1) * s);
    }
    REQUIRE(out[chip] == want);
  }
}

TEST_CASE("collective functional: all_to_all transposes the blocks", "[collective][functional]") {
  auto p = GENERATE(pod(TopologyKind::ring, {6}, {true}), pod(TopologyKind::torus2d, {3, 3}, {true, false}));
  CollectiveSpec spec;
  spec.op = CollectiveOp::all_to_all;
  const Topology t = p.make_topology();
  spec.bytes = 4 * 3 * static_cast<std::uint64_t>(t.chips());
  spec.functional = true;
  std::vector<std::vector<double>> in;
  const auto out = run(p, spec, in);
  for (int chip = 0; chip < t.chips(); ++chip) {
    for (int c = 0; c < t.chips(); ++c) {
      for (int i = 0; i < 3; ++i) REQUIRE(out[chip][3 * c + i] == in[c][3 * chip + i]);
    }
  }
}

TEST_CASE("collective functional: permute delivers each source's buffer and zeros the rest",
          "[collective][functional]") {
  auto p = pod(TopologyKind::torus2d, {3, 3}, {true, true});
  CollectiveSpec spec;
  spec.op = CollectiveOp::permute;
  spec.bytes = 4 * 10;
  spec.functional = true;
  SECTION("default shift by one") {
    std::vector<std::vector<double>> in;
    const auto out = run(p, spec, in);
    for (int chip = 0; chip < 9; ++chip) CHECK(out[chip] == in[(chip + 8) % 9]);
  }
  SECTION("explicit pairs, some chips without a source") {
    spec.pairs = {{0, 8}, {8, 0}, {4, 2}, {3, 3}};
    std::vector<std::vector<double>> in;
    const auto out = run(p, spec, in);
    CHECK(out[8] == in[0]);
    CHECK(out[0] == in[8]);
    CHECK(out[2] == in[4]);
    CHECK(out[3] == in[3]);
    CHECK(out[1] == std::vector<double>(10, 0.0));
    CHECK(out[4] == std::vector<double>(10, 0.0));
  }
}

TEST_CASE("collective functional: broadcast copies the root's buffer everywhere", "[collective][functional]") {
  auto algorithm = GENERATE(Algorithm::ring, Algorithm::bidirectional_ring);
  auto p = GENERATE(pod(TopologyKind::ring, {7}, {true}), pod(TopologyKind::torus2d, {3, 4}, {false, true}));
  CollectiveSpec spec;
  spec.op = CollectiveOp::broadcast;
  spec.algorithm = algorithm;
  spec.root = 2;
  spec.bytes = 4 * 999;
  spec.pipeline_chunks = GENERATE(0, 1, 7);
  spec.functional = true;
  std::vector<std::vector<double>> in;
  const auto out = run(p, spec, in);
  for (const auto& o : out) REQUIRE(o == in[2]);
}

TEST_CASE("collective functional: run_collective checks every op on both network models",
          "[collective][functional][network]") {
  auto model = GENERATE(NetworkModel::fluid, NetworkModel::packet);
  auto op = GENERATE(CollectiveOp::all_reduce, CollectiveOp::reduce_scatter, CollectiveOp::all_gather,
                     CollectiveOp::all_to_all, CollectiveOp::permute, CollectiveOp::broadcast);
  auto p = pod(TopologyKind::torus2d, {4, 3}, {true, true});
  p.model = model;
  CollectiveSpec spec;
  spec.op = op;
  spec.bytes = 4 * 12 * 16;
  spec.functional = true;
  const CollectiveResult r = run_collective(p, spec);
  INFO(r.functional.first_mismatch);
  CHECK(r.functional.checked);
  CHECK(r.functional.matches);
  CHECK(r.time_s > 0.0);
}

}  // namespace test_collective_functional
