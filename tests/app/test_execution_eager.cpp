// execution: eager (issue 48): JAX without jit, op by op from the host.
// Checked against two closed forms: with no dispatch time, eager is exactly
// the unfused step (nothing else differs); with a dispatch far longer than
// any op, the host is the bottleneck and the step is the K launches' time,
// K counted from the run's own trace, plus at most the unfused step.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "cli_runner.h"

namespace test_execution_eager {

using testing_cli::read_report;
using testing_cli::run_tpusim;
using testing_cli::TempDir;

namespace {

const std::string kStep = "run configs/tutorial/ch3-dp.yaml";

double step_of(const TempDir& dir, const std::string& sets, const std::string& sub) {
  const auto r = run_tpusim(kStep + " " + sets + " --out " + (dir / sub));
  INFO(r.output);
  REQUIRE(r.status == 0);
  return read_report(dir / sub)["result"]["step_time_s"];
}

}  // namespace

TEST_CASE("execution: jit is the default and changes nothing", "[app][execution]") {
  TempDir dir("eager-jit");
  CHECK(step_of(dir, "", "plain") == step_of(dir, "--set workload.execution=jit", "jit"));
}

TEST_CASE("execution: eager without dispatch time is the unfused step", "[app][execution]") {
  TempDir dir("eager-zero");
  const double unfused = step_of(dir, "--set workload.elementwise=unfused", "unfused");
  CHECK(step_of(dir, "--set workload.execution=eager --set workload.eager_dispatch=0", "eager0") == unfused);
  CHECK(unfused > step_of(dir, "", "fused"));  // lost fusion costs (HBM round trips)
}

TEST_CASE("execution: eager with a long dispatch is the host's time", "[app][execution]") {
  TempDir dir("eager-long");
  const double unfused = step_of(dir, "--set workload.elementwise=unfused", "unfused");
  const double d = 1e-3;  // far above any op of this step (the whole step is 3 ms)
  const auto r = run_tpusim(
      kStep + " --set workload.execution=eager --set workload.eager_dispatch=1e-3 --trace --out " + (dir / "eager"));
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("eager: every op dispatched from the host (1 ms each)") != std::string::npos);
  const auto rep = read_report(dir / "eager");
  std::ifstream in(dir / "eager/trace.json");
  const auto trace = nlohmann::json::parse(in);
  int launches = 0;  // chip 0's kernel launches
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["pid"] == 0 && e["name"].get<std::string>().rfind("launch", 0) == 0) ++launches;
  REQUIRE(launches > 10);
  // tpu-v4's kernel_launch, 0.8 us (configs/chips/tpu-v4.yaml), rides on each dispatch.
  const double host = launches * (d + 0.8e-6);
  const double step = rep["result"]["step_time_s"];
  CHECK(step >= host);
  CHECK(step <= host + unfused);
}

}  // namespace test_execution_eager
