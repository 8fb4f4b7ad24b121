// `kind: synthetic` against an independent clock: the step time of one unit
// measured by the plain single-chip `matmul` workload. The synthetic job on
// N chips must take (serial + ceil(parallel / N)) unit times, plus only the
// broadcast that joins the parts: Amdahl's law by construction.
#include <catch2/catch.hpp>

#include <cmath>

#include "sim/error.h"
#include "workloads/experiment.h"

namespace test_amdahl_synthetic {

namespace {

const std::string kBase = std::string(TPUSIM_SOURCE_DIR) + "/configs/sweeps/amdahl-synthetic.base.yaml";

double step_time(const std::string& path, const std::vector<std::string>& sets) {
  auto exp = workloads::load_experiment(path, sets);
  return exp.workload->run(exp, {}).report["result"]["step_time_s"].get<double>();
}

// One 4096^3 unit on one v4 chip, timed by kind: matmul.
double unit_time() {
  return step_time(std::string(TPUSIM_SOURCE_DIR) + "/configs/experiments/matmul-v4.yaml",
                   {"workload.m=4096", "workload.k=4096", "workload.n=4096"});
}

std::vector<std::string> job(int chips, int broadcast_bytes) {
  // 100 units, 10 of them serial.
  return {"workload.units=100", "workload.serial_fraction=0.1", "pod.shape=[" + std::to_string(chips) + "]",
          "workload.broadcast_bytes=" + std::to_string(broadcast_bytes)};
}

}  // namespace

TEST_CASE("synthetic job on one chip takes units x the matmul workload's time", "[workloads][amdahl]") {
  const double t = unit_time();
  CHECK(step_time(kBase, job(1, 4096)) == Approx(100 * t).epsilon(1e-9));
}

TEST_CASE("synthetic job on N chips: serial units plus the busiest chip's share", "[workloads][amdahl]") {
  const double t = unit_time();
  for (int n : {2, 3, 4, 10}) {
    const double expected = (10 + std::ceil(90.0 / n)) * t;  // 4 chips: 23 units on the busiest
    INFO(n << " chips");
    CHECK(step_time(kBase, job(n, 0)) == Approx(expected).epsilon(1e-9));
    // The broadcast of 4 KiB along a line of n chips: microseconds, not units.
    const double with_broadcast = step_time(kBase, job(n, 4096));
    CHECK(with_broadcast > expected);
    CHECK(with_broadcast < expected + n * 5e-6);
  }
}

TEST_CASE("synthetic job state that does not fit on few chips fails as the system", "[workloads][amdahl]") {
  // v4: 32 GiB of HBM per chip. 48 GiB of state fits on 2 chips, not on 1.
  const std::string state = "workload.state_bytes=" + std::to_string(48ull << 30);
  auto one = job(1, 0), two = job(2, 0);
  one.push_back(state);
  two.push_back(state);
  CHECK_THROWS_AS(step_time(kBase, one), sim::SimFailure);
  CHECK(step_time(kBase, two) > 0);
}

TEST_CASE("synthetic serial fraction must be a whole number of units", "[workloads][amdahl]") {
  try {
    workloads::load_experiment(kBase, {"workload.units=7", "workload.serial_fraction=0.1"});
    FAIL("expected a ConfigError");
  } catch (const sim::ConfigError& e) {
    CHECK(std::string(e.what()).find("workload.serial_fraction") != std::string::npos);
    CHECK(std::string(e.what()).find("not a whole number of units") != std::string::npos);
  }
}

}  // namespace test_amdahl_synthetic
