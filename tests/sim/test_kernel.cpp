#include <catch2/catch.hpp>
#include <systemc>

#include "sim/kernel.h"

namespace test_kernel {

namespace {
struct Ticker : sc_core::sc_module {
  int fired = 0;
  SC_HAS_PROCESS(Ticker);
  explicit Ticker(sc_core::sc_module_name n) : sc_core::sc_module(n) { SC_THREAD(run); }
  void run() {
    for (int i = 0; i < 3; ++i) {
      wait(sc_core::sc_time(10, sc_core::SC_NS));
      ++fired;
    }
  }
};
}  // namespace

TEST_CASE("two simulations run back to back in one process", "[sim][kernel]") {
  for (int round = 0; round < 2; ++round) {
    sim::reset_kernel();
    Ticker t("ticker");  // same name twice: would fail (E113-like) without a reset
    sc_core::sc_start();
    CHECK(t.fired == 3);
    CHECK(sc_core::sc_time_stamp() == sc_core::sc_time(30, sc_core::SC_NS));
  }
}

}  // namespace test_kernel
