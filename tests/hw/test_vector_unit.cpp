#include <catch2/catch.hpp>
#include <systemc>

#include "hw/vector_unit.h"
#include "sim/error.h"
#include "sim/kernel.h"

namespace test_vector_unit {

namespace {

// v5p per core: 8 sublanes x 128 lanes x 4 ALUs (docs/reference/tpu-specs.md#v5p.vpu_flops).
const hw::VectorUnitConfig kV5pCore{4096.0};
const sc_core::sc_time kPeriod(1, sc_core::SC_NS);

}  // namespace

// The unit accounts an operation and says how many cycles it occupies;
// hw::Chip completes it that many periods later (test_chip.cpp: times, and
// back-to-back operations on one unit).

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
    CHECK(vpu.cycles_for(c.elements, c.flops) == c.cycles);
    CHECK(vpu.begin(c.elements, c.flops) == c.cycles);
    CHECK(vpu.busy() == static_cast<double>(c.cycles) * kPeriod);
    CHECK(vpu.busy_cycles() == c.cycles);
    CHECK(vpu.operations() == 1);
  }
}

TEST_CASE("vector unit: counters add up over a sequence of operations", "[vector]") {
  sim::reset_kernel();
  hw::VectorUnit vpu("vpu", kV5pCore, sc_core::sc_time(571, sc_core::SC_PS));  // ~1.75 GHz (v5p.clock_hz)
  // 3 + 1 + 5 cycles.
  CHECK(vpu.begin(3 * 4096, 1.0) == 3);
  CHECK(vpu.begin(100, 1.0) == 1);
  CHECK(vpu.begin(4096, 5.0) == 5);
  CHECK(vpu.busy_cycles() == 9);
  CHECK(vpu.busy() == sc_core::sc_time(9 * 571, sc_core::SC_PS));
  CHECK(vpu.flops() == Approx(3 * 4096 + 100 + 5 * 4096));
  CHECK(vpu.operations() == 3);
}

TEST_CASE("vector unit: a non-positive throughput is a ConfigError", "[vector]") {
  sim::reset_kernel();
  CHECK_THROWS_AS(hw::VectorUnit("vpu", hw::VectorUnitConfig{0.0}, kPeriod), sim::ConfigError);
}

}  // namespace test_vector_unit
