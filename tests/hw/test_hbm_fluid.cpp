// hw::HbmFluid, the chip-wide fluid HBM of kernel fidelity: hand-worked
// times with caps and weights, and uncapped flows on random schedules
// against hw::FairShare, the virtual-time processor-sharing server of the
// per-channel model (an independent algorithm for the same discipline).
#include <catch2/catch.hpp>

#include <memory>
#include <random>
#include <systemc>
#include <vector>

#include "hw/fair_share.h"
#include "hw/hbm_fluid.h"
#include "sim/kernel.h"

namespace test_hbm_fluid {

namespace {

struct Flow {
  std::uint64_t start_ps = 0;
  hw::HbmFluid::Demand demand;
};

// Starts each flow at its time from a thread of its own and records when it
// completed.
struct Driver : sc_core::sc_module, hw::HbmFluid::Listener {
  hw::HbmFluid& hbm;
  std::vector<Flow> flows;
  std::vector<std::uint64_t> done_ps;
  Driver(sc_core::sc_module_name name, hw::HbmFluid& h, std::vector<Flow> f)
      : sc_core::sc_module(name), hbm(h), flows(std::move(f)), done_ps(flows.size(), 0) {
    for (std::size_t i = 0; i < flows.size(); ++i)
      sc_core::sc_spawn(
          [this, i] {
            sc_core::wait(sc_core::sc_time::from_value(flows[i].start_ps));
            hbm.start(flows[i].demand, this, i);
          },
          ("f" + std::to_string(i)).c_str());
  }
  void flow_done(std::uint64_t token) override { done_ps[token] = sc_core::sc_time_stamp().value(); }
};

// 1 byte per ps of HBM, 0.5 byte per ps of vector units.
hw::HbmConfig one_byte_per_ps() {
  hw::HbmConfig c;
  c.capacity_bytes = 1ull << 30;
  c.bandwidth_bytes_per_s = 1e12;
  c.latency_s = 0;
  c.interleave_bytes = 256;
  return c;
}

std::vector<std::uint64_t> run(std::vector<Flow> flows, double vector_bytes_per_s = 0.5e12) {
  sim::reset_kernel();
  hw::HbmFluid hbm("hbm", one_byte_per_ps(), vector_bytes_per_s);
  Driver d("driver", hbm, std::move(flows));
  sc_core::sc_start();
  return d.done_ps;
}

hw::HbmFluid::Demand bytes(double b, double cap_per_s = sim::FluidShare::kNoCap) { return {b, 1.0, 0.0, cap_per_s}; }

}  // namespace

TEST_CASE("hbm fluid: a lone flow takes bytes / bandwidth", "[hbm][fluid]") {
  CHECK(run({{0, bytes(1000)}}) == std::vector<std::uint64_t>{1000});
  CHECK(run({{250, bytes(1000)}}) == std::vector<std::uint64_t>{1250});
}

TEST_CASE("hbm fluid: two flows share, the second joining half way", "[hbm][fluid]") {
  // A (1000 B) alone for 500 ps: 500 B left. B (1000 B) joins: 0.5 B/ps
  // each, A ends at 1500; B has 500 left and ends alone at 2000.
  CHECK(run({{0, bytes(1000)}, {500, bytes(1000)}}) == std::vector<std::uint64_t>{1500, 2000});
}

TEST_CASE("hbm fluid: a capped kernel keeps its cap, a copy takes the rest", "[hbm][fluid]") {
  // Kernel: 1000 B at most 0.25 B/ps (2.5e11 B/s): 4000 ps whatever else runs.
  // Copy: 1500 B gets 0.75 B/ps while the kernel runs: done at 2000 ps.
  CHECK(run({{0, bytes(1000, 2.5e11)}, {0, bytes(1500)}}) == std::vector<std::uint64_t>{4000, 2000});
}

TEST_CASE("hbm fluid: a reduction takes 3 B of HBM and 1 B of vector per byte", "[hbm][fluid]") {
  // Alone: HBM allows 1/3 B/ps, the vector units 0.5: 1/3 binds, 300 B in 900 ps.
  CHECK(run({{0, {300, 3.0, 1.0, sim::FluidShare::kNoCap}}}) == std::vector<std::uint64_t>{900});
  // With a plain copy both rise to r: 3r + r = 1 B/ps, r = 0.25. The
  // reduction's 100 B take 400 ps; the copy then has 900 of 1000 B left
  // and runs alone: 400 + 900 = 1300.
  CHECK(run({{0, {100, 3.0, 1.0, sim::FluidShare::kNoCap}}, {0, bytes(1000)}}) ==
        std::vector<std::uint64_t>{400, 1300});
}

TEST_CASE("hbm fluid: a flow of no work completes at once", "[hbm][fluid]") {
  CHECK(run({{700, bytes(0)}}) == std::vector<std::uint64_t>{700});
}

TEST_CASE("hbm fluid: random uncapped flows finish when processor sharing says", "[hbm][fluid]") {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 30; ++round) {
    std::vector<Flow> flows;
    const int n = 1 + int(rng() % 12);
    for (int i = 0; i < n; ++i) flows.push_back({rng() % 20000, bytes(double(1 + rng() % 10000))});
    const std::vector<std::uint64_t> got = run(flows);
    // hw::FairShare at 1 byte per tick, driven by hand.
    hw::FairShare ps(1.0);
    std::vector<std::uint64_t> want(flows.size(), 0);
    std::vector<std::size_t> order(flows.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return flows[a].start_ps < flows[b].start_ps; });
    std::size_t next = 0;
    std::size_t finished = 0;
    while (finished < flows.size()) {
      const std::uint64_t arrival = next < order.size() ? flows[order[next]].start_ps : ~std::uint64_t{0};
      const std::uint64_t completion = ps.pending() ? ps.next_completion() : ~std::uint64_t{0};
      if (arrival <= completion && next < order.size()) {
        for (auto id : ps.finish(arrival)) want[id] = arrival, ++finished;
        ps.add(arrival, flows[order[next]].demand.amount, order[next]);
        ++next;
      } else {
        for (auto id : ps.finish(completion)) want[id] = completion, ++finished;
      }
    }
    for (std::size_t i = 0; i < flows.size(); ++i) {
      INFO("round " << round << " flow " << i);
      // Both round completions up to whole picoseconds, at different points.
      CHECK(std::llabs(static_cast<long long>(got[i]) - static_cast<long long>(want[i])) <= 2);
    }
  }
}

}  // namespace test_hbm_fluid
