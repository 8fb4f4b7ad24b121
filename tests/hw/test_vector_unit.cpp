#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <catch2/catch.hpp>
#include <systemc>

#include "hw/vector_unit.h"
#include "sim/error.h"
#include "sim/kernel.h"

namespace {

// v5p per core: 8 sublanes x 128 lanes x 4 ALUs (docs/reference/tpu-specs.md#v5p.vpu_flops).
const hw::VectorUnitConfig kV5pCore{4096.0};
const sc_core::sc_time kPeriod(1, sc_core::SC_NS);

// Runs one thread of execute() calls; returns when it ended.
sc_core::sc_time run_ops(hw::VectorUnit& vpu, std::vector<std::pair<std::uint64_t, double>> ops) {
  sc_core::sc_time end;
  sc_core::sc_spawn([&] {
    for (const auto& [elements, flops] : ops) vpu.execute(elements, flops);
    end = sc_core::sc_time_stamp();
  });
  sc_core::sc_start();
  return end;
}

}  // namespace

TEST_CASE("vector unit: time is whole cycles of flops_per_cycle work", "[vector]") {
  struct Case {
    std::uint64_t elements;
    double flops;
    std::uint64_t cycles;  // by hand
  };
  const Case cases[] = {
      {4096 * 10, 1.0, 10},  // exactly 10 full cycles
      {4097, 1.0, 2},        // one element spills into a second cycle
      {1000, 2.5, 1},        // 2500 flops fit in one cycle
      {2048, 4.0, 2},        // 8192 flops
      {0, 3.0, 0},           // nothing to do, no time
  };
  for (const Case& c : cases) {
    sim::reset_kernel();
    hw::VectorUnit vpu("vpu", kV5pCore, kPeriod);
    CHECK(run_ops(vpu, {{c.elements, c.flops}}) == static_cast<double>(c.cycles) * kPeriod);
    CHECK(vpu.busy_cycles() == c.cycles);
    CHECK(vpu.operations() == 1);
  }
}

TEST_CASE("vector unit: counters add up over a sequence of operations", "[vector]") {
  sim::reset_kernel();
  hw::VectorUnit vpu("vpu", kV5pCore, sc_core::sc_time(571, sc_core::SC_PS));  // ~1.75 GHz (v5p.clock_hz)
  // 3 + 1 + 5 cycles.
  const sc_core::sc_time end = run_ops(vpu, {{3 * 4096, 1.0}, {100, 1.0}, {4096, 5.0}});
  CHECK(end == sc_core::sc_time(9 * 571, sc_core::SC_PS));
  CHECK(vpu.busy_cycles() == 9);
  CHECK(vpu.busy() == end);
  CHECK(vpu.flops() == Approx(3 * 4096 + 100 + 5 * 4096));
  CHECK(vpu.operations() == 3);
}

TEST_CASE("vector unit: concurrent callers take turns", "[vector]") {
  sim::reset_kernel();
  hw::VectorUnit vpu("vpu", kV5pCore, kPeriod);
  sc_core::sc_time a, b;
  sc_core::sc_spawn([&] {
    vpu.execute(4 * 4096, 1.0);
    a = sc_core::sc_time_stamp();
  });
  sc_core::sc_spawn([&] {
    vpu.execute(6 * 4096, 1.0);
    b = sc_core::sc_time_stamp();
  });
  sc_core::sc_start();
  // Whichever goes first ends at its own length; the other after both.
  CHECK(std::max(a, b) == 10.0 * kPeriod);
  CHECK((a == 4.0 * kPeriod || b == 6.0 * kPeriod));
  CHECK(vpu.busy_cycles() == 10);
}

TEST_CASE("vector unit: a non-positive throughput is a ConfigError", "[vector]") {
  sim::reset_kernel();
  CHECK_THROWS_AS(hw::VectorUnit("vpu", hw::VectorUnitConfig{0.0}, kPeriod), sim::ConfigError);
}
