// The API a per-chip program sequencer uses: chips reach a collective at
// different times from their own SystemC processes, several collectives run
// at once, and point-to-point messages go through the same network.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <systemc>

#include "interconnect/collective.h"
#include "interconnect/deadlock.h"
#include "interconnect/ici_network.h"
#include "sim/kernel.h"

namespace test_collective_join {

using namespace interconnect;

namespace {

// One SC_THREAD per chip standing in for a chip's sequencer: waits for its
// own start time, joins, then waits for the collective's on_done.
struct ChipProgram : sc_core::sc_module {
  SC_HAS_PROCESS(ChipProgram);
  ChipProgram(const sc_core::sc_module_name& n, Collective& c, int chip, double start_s)
      : sc_core::sc_module(n), coll(c), id(chip), start(start_s) {
    SC_THREAD(run);
  }
  void run() {
    wait(sc_core::sc_time(start, sc_core::SC_SEC));
    joined_at = sc_core::sc_time_stamp().to_seconds();
    coll.join(id, [this] { done.notify(); });
    wait(done);
    finished_at = sc_core::sc_time_stamp().to_seconds();
  }
  Collective& coll;
  int id;
  double start;
  double joined_at = -1, finished_at = -1;
  sc_core::sc_event done;
};

}  // namespace

TEST_CASE("collective join: chips join late from their own threads and the result waits for the last",
          "[collective][join]") {
  const Topology topo(TopologyKind::ring, {5}, {true});
  LinkConfig link;
  link.bandwidth = 1e10;
  link.latency = 1e-7;
  CollectiveSpec spec;
  spec.bytes = 4000;  // 1000 elements
  spec.algorithm = Algorithm::ring;
  spec.functional = true;
  sim::reset_kernel();
  IciNetwork net("ici", topo, link);
  VectorUnitReduction red(net, ReductionConfig{});
  Collective coll(net, red, plan_collective(topo, Mesh(topo, {}), link, spec), true);
  std::vector<std::unique_ptr<ChipProgram>> chips;
  for (int c = 0; c < 5; ++c) {
    coll.set_input(c, std::vector<double>(1000, c + 1.0));
    chips.push_back(
        std::make_unique<ChipProgram>(("chip" + std::to_string(c)).c_str(), coll, c, 1e-6 * (c == 2 ? 50 : c)));
  }
  sc_core::sc_start();
  require_all_done(net, {&coll});
  // Alone, the all-reduce takes 8 steps of (latency + 800 B / W), and each
  // of the 4 reduce-scatter steps ends with reducing its last (here only)
  // packet at the default reducer rate, HBM-bound at 1.2e12 / 3 B/s.
  const double alone = 8 * (1e-7 + 800 / 1e10) + 4 * 800 / (1.2e12 / 3);
  for (const auto& c : chips) {
    CHECK(c->finished_at > c->joined_at);
    CHECK(c->finished_at >= 50e-6);  // nobody can finish before chip 2 joins
    CHECK(c->finished_at <= 50e-6 + alone + 1e-9);
    CHECK(coll.output(c->id) == std::vector<double>(1000, 15.0));
  }
  // The ends the collective keeps for the chips that joined (in the order
  // they joined: 0, 1, 3, 4, 2) are listed by chip, each when that chip's
  // own thread heard back.
  const auto ends = coll.finish_times();
  REQUIRE(ends.size() == 5);
  for (int c = 0; c < 5; ++c) {
    CHECK(ends[c].first == c);
    CHECK(static_cast<double>(ends[c].second) * 1e-12 == Approx(chips[c]->finished_at).margin(1e-15));
  }
  CHECK(coll.end_time() ==
        std::max_element(ends.begin(), ends.end(), [](auto& a, auto& b) { return a.second < b.second; })->second);
}

TEST_CASE("collective join: two collectives at once on different axes keep their messages apart",
          "[collective][join]") {
  const Topology topo(TopologyKind::torus2d, {3, 4}, {true, true});
  const Mesh mesh(topo, {});
  LinkConfig link;
  CollectiveSpec rows, cols;
  rows.op = CollectiveOp::all_reduce;
  rows.axes = {"x"};
  rows.bytes = 4 * 30;
  rows.functional = true;
  cols.op = CollectiveOp::all_gather;
  cols.axes = {"y"};
  cols.bytes = 4 * 40;
  cols.functional = true;
  sim::reset_kernel();
  IciNetwork net("ici", topo, link);
  VectorUnitReduction red(net, ReductionConfig{});
  Collective a(net, red, plan_collective(topo, mesh, link, rows), true, 0);
  Collective b(net, red, plan_collective(topo, mesh, link, cols), true, 1);
  for (int c = 0; c < 12; ++c) {
    a.set_input(c, std::vector<double>(30, static_cast<double>(c)));
    b.set_input(c, std::vector<double>(10, static_cast<double>(c)));
    a.join(c);
    b.join(c);
  }
  sc_core::sc_start();
  require_all_done(net, {&a, &b});
  for (int c = 0; c < 12; ++c) {
    const int x = c % 3, y = c / 3;
    double row_sum = 0;
    for (int i = 0; i < 3; ++i) row_sum += 3 * y + i;
    CHECK(a.output(c) == std::vector<double>(30, row_sum));
    std::vector<double> column;
    for (int j = 0; j < 4; ++j) column.insert(column.end(), 10, static_cast<double>(3 * j + x));
    CHECK(b.output(c) == column);
  }
}

TEST_CASE("network: point-to-point messages match by source and tag in any order", "[network][ici]") {
  const Topology topo(TopologyKind::ring, {4}, {true});
  sim::reset_kernel();
  IciNetwork net("ici", topo, LinkConfig{});
  struct Log : NetworkClient {
    std::vector<std::pair<std::uint64_t, double>> got;
    void on_received(std::uint64_t cookie, Arrival& a) override { got.emplace_back(cookie, a.message.payload.at(0)); }
  } log;
  auto msg = [](int src, std::uint64_t tag, double value) {
    Message m;
    m.src = src;
    m.dst = 2;
    m.tag = tag;
    m.bytes = 100;
    m.payload = {value};
    return m;
  };
  net.send(msg(0, 5, 50.0), &log, 0);
  net.send(msg(1, 5, 15.0), &log, 0);
  net.send(msg(1, 6, 16.0), &log, 0);
  net.receive(2, 1, 6, &log, 1);  // posted before arrival
  sc_core::sc_start();
  net.receive(2, 0, 5, &log, 2);  // after arrival: handed over as an event
  net.receive(2, 1, 5, &log, 3);
  sc_core::sc_start();
  REQUIRE(log.got.size() == 3);
  CHECK(log.got[0] == std::make_pair(std::uint64_t{1}, 16.0));
  CHECK(log.got[1] == std::make_pair(std::uint64_t{2}, 50.0));
  CHECK(log.got[2] == std::make_pair(std::uint64_t{3}, 15.0));
  CHECK(net.pending().empty());
}

}  // namespace test_collective_join
