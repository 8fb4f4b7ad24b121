// Bad input is a sim::ConfigError whose key path names the field (exit 2).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "interconnect/collective_spec.h"
#include "interconnect/pod_config.h"
#include "interconnect/run_collective.h"
#include "sim/error.h"
#include "sim/params.h"

namespace test_collective_validation {

using namespace interconnect;

namespace {

PodNetworkConfig good_pod() {
  PodNetworkConfig p;
  p.topology = TopologyKind::torus2d;
  p.shape = {4, 4};
  p.wraparound = {true, true};
  return p;
}

CollectiveSpec good_spec() {
  CollectiveSpec s;
  s.op = CollectiveOp::all_gather;
  s.bytes = 4 * 16 * 10;
  return s;
}

// The key path of the ConfigError f throws, and its message.
template <class F>
std::pair<std::string, std::string> config_error(F f) {
  try {
    f();
  } catch (const sim::ConfigError& e) {
    return {e.key_path(), e.what()};
  }
  return {"(no error)", ""};
}

}  // namespace

TEST_CASE("topology validation: bad pods name the field", "[topology][validation]") {
  PodNetworkConfig p = good_pod();
  SECTION("shape product differs from the chip count") {
    p.chips = 8;
    const auto [key, msg] = config_error([&] { p.validate(); });
    CHECK(key == "pod.shape");
    CHECK(msg.find("4x4 holds 16 chips, but the pod has 8") != std::string::npos);
  }
  SECTION("shape rank differs from the topology") {
    p.shape = {4, 4, 4};
    const auto [key, msg] = config_error([&] { p.validate(); });
    CHECK(key == "pod.shape");
    CHECK(msg.find("torus2d needs 2 dimensions, got 3") != std::string::npos);
  }
  SECTION("zero-sized axis") {
    p.shape = {4, 0};
    CHECK(config_error([&] { p.validate(); }).first == "pod.shape");
  }
  SECTION("wraparound list of the wrong length") {
    p.wraparound = {true};
    CHECK(config_error([&] { p.validate(); }).first == "pod.wraparound");
  }
  SECTION("wraparound on an axis of two chips") {
    p.shape = {2, 4};
    const auto [key, msg] = config_error([&] { p.validate(); });
    CHECK(key == "pod.wraparound");
    CHECK(msg.find("axis x has 2 chip(s); wraparound needs at least 3") != std::string::npos);
  }
  SECTION("zero bandwidth") {
    p.link.bandwidth = 0;
    CHECK(config_error([&] { p.validate(); }).first == "pod.link_bandwidth");
  }
  SECTION("negative latency") {
    p.link.latency = -1e-6;
    CHECK(config_error([&] { p.validate(); }).first == "pod.link_latency");
  }
  SECTION("zero packet size") {
    p.link.packet_bytes = 0;
    CHECK(config_error([&] { p.validate(); }).first == "pod.packet_bytes");
  }
  SECTION("mesh axis that divides no physical axis") {
    p.mesh = {{"data", 3}, {"model", 8}};
    const auto [key, msg] = config_error([&] { p.validate(); });
    CHECK(key == "mesh.data");
    CHECK(msg.find("size 3 does not map onto the 4x4 topology") != std::string::npos);
  }
  SECTION("mesh covering fewer chips than the pod") {
    p.mesh = {{"data", 4}};
    CHECK(config_error([&] { p.validate(); }).first == "mesh");
  }
  SECTION("unknown names") {
    CHECK(config_error([] { parse_topology_kind("torus4d", "pod.topology"); }).first == "pod.topology");
    CHECK(config_error([] { parse_switching("wormhole", "pod.switching"); }).first == "pod.switching");
    CHECK(config_error([] { parse_network_model("exact", "pod.model"); }).first == "pod.model");
  }
  SECTION("a good pod passes") { CHECK_NOTHROW(p.validate()); }
}

TEST_CASE("collective validation: bad specs name the field", "[collective][validation]") {
  const PodNetworkConfig p = good_pod();
  CollectiveSpec s = good_spec();
  SECTION("buffer that does not divide among the participants") {
    s.bytes = 4 * 100;  // 100 elements over 16 chips
    const auto [key, msg] = config_error([&] { s.validate(p); });
    CHECK(key == "workload.bytes");
    CHECK(msg.find("do not divide among 16 participants; use a multiple of 64 bytes") != std::string::npos);
  }
  SECTION("the same buffer divides among the 4 chips of one axis") {
    s.bytes = 4 * 100;
    s.axes = {"y"};
    CHECK_NOTHROW(s.validate(p));
  }
  SECTION("an all_to_all with blocks per pair takes any whole number of elements") {
    // Its blocks are given pair by pair (a skewed MoE dispatch), so the
    // buffer need not split into equal shards: 100 elements over 16 chips.
    s.op = CollectiveOp::all_to_all;
    s.bytes = 4 * 100;
    s.pair_elements.assign(16 * 16, 0);
    s.pair_elements[0 * 16 + 1] = 100;
    CHECK_NOTHROW(s.validate(p));
    s.algorithm = Algorithm::dimension_ordered;
    CHECK_NOTHROW(s.validate(p));
  }
  SECTION("all_reduce takes any whole number of elements") {
    s.op = CollectiveOp::all_reduce;
    s.bytes = 4 * 101;
    CHECK_NOTHROW(s.validate(p));
  }
  SECTION("partial elements") {
    s.op = CollectiveOp::all_reduce;
    s.bytes = 4 * 16 + 2;
    CHECK(config_error([&] { s.validate(p); }).first == "workload.bytes");
  }
  SECTION("zero bytes") {
    s.bytes = 0;
    CHECK(config_error([&] { s.validate(p); }).first == "workload.bytes");
  }
  SECTION("unknown or repeated axis names") {
    s.axes = {"data"};
    const auto [key, msg] = config_error([&] { s.validate(p); });
    CHECK(key == "workload.axes");
    CHECK(msg.find("unknown mesh axis 'data' (mesh axes: x, y)") != std::string::npos);
    s.axes = {"x", "x"};
    CHECK(config_error([&] { s.validate(p); }).first == "workload.axes");
  }
  SECTION("algorithm that does not implement the op") {
    s.op = CollectiveOp::all_to_all;
    s.algorithm = Algorithm::torus;
    CHECK(config_error([&] { s.validate(p); }).first == "workload.algorithm");
    CHECK(config_error([] { algorithm_names().parse("tree", "workload.algorithm"); }).first == "workload.algorithm");
    CHECK(config_error([] { collective_op_names().parse("reduce", "workload.op"); }).first == "workload.op");
    s.algorithm = Algorithm::dimension_ordered;
    CHECK(config_error([&] { s.validate(p); }).first == "(no error)");
    for (auto op : {CollectiveOp::all_reduce, CollectiveOp::permute, CollectiveOp::broadcast}) {
      s.op = op;
      CHECK(config_error([&] { s.validate(p); }).first == "workload.algorithm");
    }
  }
  SECTION("a dimension-ordered all-to-all is timing only") {
    s.op = CollectiveOp::all_to_all;
    s.algorithm = Algorithm::dimension_ordered;
    s.functional = true;
    const auto [key, msg] = config_error([&] { s.validate(p); });
    CHECK(key == "functional");
    CHECK(msg.find("dimension_ordered all_to_all runs for its timing only") != std::string::npos);
  }
  SECTION("permute pairs out of range or repeated") {
    s.op = CollectiveOp::permute;
    s.pairs = {{0, 16}};
    CHECK(config_error([&] { s.validate(p); }).first == "workload.pairs");
    s.pairs = {{0, 1}, {2, 1}};
    const auto [key, msg] = config_error([&] { s.validate(p); });
    CHECK(key == "workload.pairs");
    CHECK(msg.find("destination 1 appears twice") != std::string::npos);
  }
  SECTION("broadcast root outside the group") {
    s.op = CollectiveOp::broadcast;
    s.root = 16;
    CHECK(config_error([&] { s.validate(p); }).first == "workload.root");
  }
  SECTION("element size") {
    s.element_bytes = 3;
    CHECK(config_error([&] { s.validate(p); }).first == "workload.element_bytes");
  }
  SECTION("run_collective validates before it simulates") {
    s.bytes = 4 * 100;
    CHECK_THROWS_AS(run_collective(p, s), sim::ConfigError);
  }
}

// Which algorithm implements which op and what auto picks, as
// docs/interconnect.md ("Algorithms and their steps") and docs/interface.md
// list them, against every list derived from interconnect's one table.
TEST_CASE("collective validation: each op's algorithms and auto's choice", "[collective]") {
  using Names = std::vector<std::string>;
  struct Row {
    CollectiveOp op;
    Names algorithms;
    Algorithm automatic;
  };
  const Names rings = {"ring", "bidirectional_ring"};
  const Names reductions = {"ring", "bidirectional_ring", "torus"};
  const std::vector<Row> rows = {{CollectiveOp::all_reduce, reductions, Algorithm::torus},
                                 {CollectiveOp::reduce_scatter, reductions, Algorithm::torus},
                                 {CollectiveOp::all_gather, reductions, Algorithm::torus},
                                 {CollectiveOp::all_to_all, {"direct", "dimension_ordered"}, Algorithm::direct},
                                 {CollectiveOp::permute, {"direct"}, Algorithm::direct},
                                 {CollectiveOp::broadcast, rings, Algorithm::bidirectional_ring}};
  CHECK(algorithm_names().names() ==
        Names{"auto", "ring", "bidirectional_ring", "torus", "direct", "dimension_ordered"});
  const PodNetworkConfig p = good_pod();
  for (const Row& row : rows) {
    INFO(to_string(row.op));
    CHECK(algorithm_names_for(row.op).names() == row.algorithms);
    CHECK(resolve_algorithm(row.op, Algorithm::automatic) == row.automatic);
    CollectiveSpec s = good_spec();
    s.op = row.op;
    for (const auto& a : algorithm_names().choices()) {
      INFO(a.name);
      s.algorithm = a.value;
      const bool listed = std::find(row.algorithms.begin(), row.algorithms.end(), a.name) != row.algorithms.end();
      const auto [key, msg] = config_error([&] { s.validate(p); });
      if (listed || a.value == Algorithm::automatic) {
        CHECK(key == "(no error)");
      } else {
        CHECK(key == "workload.algorithm");
        CHECK(msg.find("algorithm " + a.name + " does not implement " + to_string(row.op)) != std::string::npos);
      }
    }
  }
  // A key fixed to one op takes its algorithms only: auto is no word of it.
  CHECK(config_error([] { algorithm_names_for(CollectiveOp::all_to_all).parse("auto", "k"); }).first == "k");
}

TEST_CASE("collective validation: names round-trip and busbw factors follow NCCL-tests", "[collective]") {
  for (auto op : {CollectiveOp::all_reduce, CollectiveOp::reduce_scatter, CollectiveOp::all_gather,
                  CollectiveOp::all_to_all, CollectiveOp::permute, CollectiveOp::broadcast}) {
    CHECK(collective_op_names().parse(to_string(op), "") == op);
  }
  for (auto a : {Algorithm::automatic, Algorithm::ring, Algorithm::bidirectional_ring, Algorithm::torus,
                 Algorithm::direct, Algorithm::dimension_ordered}) {
    CHECK(algorithm_names().parse(to_string(a), "") == a);
  }
  // nccl-tests doc/PERFORMANCE.md (docs/reference/formulas.md §1)
  CHECK(bus_bandwidth_factor(CollectiveOp::all_reduce, 8) == Approx(2.0 * 7 / 8));
  CHECK(bus_bandwidth_factor(CollectiveOp::all_gather, 8) == Approx(7.0 / 8));
  CHECK(bus_bandwidth_factor(CollectiveOp::reduce_scatter, 8) == Approx(7.0 / 8));
  CHECK(bus_bandwidth_factor(CollectiveOp::all_to_all, 8) == Approx(7.0 / 8));
  CHECK(bus_bandwidth_factor(CollectiveOp::broadcast, 8) == 1.0);
}

}  // namespace test_collective_validation
