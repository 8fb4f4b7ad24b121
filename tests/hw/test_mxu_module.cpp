// hw::Mxu as a SystemC module: simulated time, values, queueing and stats
// against hand-worked cycle counts.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <systemc>
#include <vector>

#include "hw/mxu.h"
#include "hw/mxu_timing.h"
#include "sim/error.h"
#include "sim/kernel.h"

namespace test_mxu_module {

using hw::bf16;
using sc_core::SC_NS;
using sc_core::sc_time;

namespace {

std::vector<bf16> from_floats(const std::vector<float>& v) {
  std::vector<bf16> out;
  for (float x : v) out.push_back(bf16::from_float(x));
  return out;
}

// Issues one op from its own thread and records when it finished.
struct Issuer : sc_core::sc_module {
  SC_HAS_PROCESS(Issuer);
  Issuer(sc_core::sc_module_name name, hw::Mxu& mxu, hw::MxuShape shape, const bf16* a, const bf16* b)
      : sc_core::sc_module(name), mxu_(mxu), shape_(shape), a_(a), b_(b), y(shape.m * shape.n) {
    SC_THREAD(run);
  }
  void run() {
    mxu_.execute(shape_, a_, b_, y.data());
    done_at = sc_core::sc_time_stamp();
  }
  hw::Mxu& mxu_;
  hw::MxuShape shape_;
  const bf16* a_;
  const bf16* b_;
  std::vector<float> y;
  sc_time done_at;
};

}  // namespace

TEST_CASE("mxu module: one op takes its cycles at the clock period, both fidelities", "[mxu]") {
  // 2x2 array, m = k = n = 2: 6 cycles (worked out in test_mxu_timing.cpp).
  const std::vector<bf16> a = from_floats({1, 2, 3, 4}), b = from_floats({5, 6, 7, 8});
  for (hw::Fidelity f : {hw::Fidelity::tile, hw::Fidelity::pe}) {
    sim::reset_kernel();
    hw::Mxu mxu("mxu", {2, 2, true}, sc_time(2, SC_NS), f);
    Issuer issuer("issuer", mxu, {2, 2, 2}, a.data(), b.data());
    sc_core::sc_start();
    CHECK(issuer.done_at == sc_time(12, SC_NS));
    CHECK(issuer.y == std::vector<float>{19, 22, 43, 50});
    CHECK(mxu.stats().ops == 1);
    CHECK(mxu.stats().macs == 8);
    CHECK(mxu.stats().busy_cycles == 6);
  }
}

TEST_CASE("mxu module: concurrent callers queue, one op at a time", "[mxu]") {
  sim::reset_kernel();
  hw::Mxu mxu("mxu", {2, 2, false}, sc_time(1, SC_NS), hw::Fidelity::tile);
  // 11 cycles (m = 3, k = 4, n = 2 on one weight bank) and 6 cycles.
  Issuer first("first", mxu, {3, 4, 2}, nullptr, nullptr);
  Issuer second("second", mxu, {2, 2, 2}, nullptr, nullptr);
  sc_core::sc_start();
  const sc_time a = first.done_at, b = second.done_at;
  CHECK(std::min(a, b) == (a < b ? sc_time(11, SC_NS) : sc_time(6, SC_NS)));
  CHECK(std::max(a, b) == sc_time(17, SC_NS));
  CHECK(mxu.stats().ops == 2);
  CHECK(mxu.stats().busy_cycles == 17);
  CHECK(mxu.stats().macs == 3 * 4 * 2 + 8);
}

TEST_CASE("mxu module: pe fidelity without operands computes zeros", "[mxu]") {
  sim::reset_kernel();
  hw::Mxu mxu("mxu", {4, 4, true}, sc_time(1, SC_NS), hw::Fidelity::pe);
  Issuer issuer("issuer", mxu, {3, 5, 6}, nullptr, nullptr);
  sc_core::sc_start();
  CHECK(issuer.y == std::vector<float>(18, 0.0f));
  CHECK(issuer.done_at == sc_time(static_cast<double>(hw::mxu_tile_cycles({4, 4, true}, {3, 5, 6})), SC_NS));
}

TEST_CASE("mxu module: bad configuration rejected", "[mxu]") {
  sim::reset_kernel();
  CHECK_THROWS_AS(hw::Mxu("bad_rows", {1, 2, true}, sc_time(1, SC_NS)), sim::ConfigError);
  CHECK_THROWS_AS(hw::Mxu("bad_period", {2, 2, true}, sc_core::SC_ZERO_TIME),
                  std::logic_error);  // chip.clock's range keeps it positive
}

}  // namespace test_mxu_module
