// Runaway protection: `limits: {max_sim_time: SECONDS, max_events: N}`. A
// run that reaches either limit with work left fails with exit 3 and names
// the limit and what was still pending; a limit the run stays inside
// changes nothing in its results; the stopping point is deterministic.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "host_fields.h"

namespace test_limits {

using testing_cli::run_tpusim;
namespace fs = std::filesystem;

namespace {

const std::string kOut = "build-test-out/limits/";

// A ring all-gather of 65535 steps, which no other limit stops for minutes;
// append --set 'limits={...}'.
const std::string kBigRing =
    "run configs/experiments/allgather-ring-v5e-16.yaml --set 'pod={topology: ring, shape: [65536]}' --set ";

bool written(const std::string& dir) { return fs::exists(fs::path(TPUSIM_SOURCE_DIR) / dir / "report.json"); }

// `tpusim ARGS --out DIR` into an emptied DIR.
testing_cli::CliResult run_into(const std::string& args, const std::string& dir) {
  fs::remove_all(fs::path(TPUSIM_SOURCE_DIR) / dir);
  return run_tpusim(args + " --out " + dir);
}

}  // namespace

TEST_CASE("limits: max_sim_time stops a one-chip run, exit 3, naming the pending ops", "[app][limits]") {
  const auto r =
      run_into("run configs/experiments/matmul-v4.yaml --set 'limits={max_sim_time: 1.0e-4}'", kOut + "time");
  INFO(r.output);
  CHECK(r.status == 3);
  CHECK(r.output.find("simulation failed: runaway: simulated time reached limits.max_sim_time (100 us)") !=
        std::string::npos);
  CHECK(r.output.find("\n  chip 0 waits in '") != std::string::npos);
  CHECK(r.output.find(" ops pending") != std::string::npos);
  CHECK_FALSE(written(kOut + "time"));
}

TEST_CASE("limits: max_events stops a one-chip run, exit 3", "[app][limits]") {
  // At tile fidelity, where the 8192^3 matmul is thousands of ops (at
  // kernel fidelity two, a few dozen events).
  const std::string run = "run configs/experiments/matmul-v4.yaml --set fidelity=tile --set 'limits={max_events: 100}'";
  const auto r = run_into(run, kOut + "events");
  INFO(r.output);
  CHECK(r.status == 3);
  CHECK(r.output.find("exceeded limits.max_events (100) at ") != std::string::npos);
  CHECK(r.output.find("\n  chip 0 waits in '") != std::string::npos);
  CHECK(r.output.find(" ops pending") != std::string::npos);
  CHECK_FALSE(written(kOut + "events"));
  // Deterministic: the same run stops at the same event with the same message.
  CHECK(run_tpusim(run + " --out " + kOut + "events").output == r.output);
}

TEST_CASE("limits: a pod run that reaches a limit names every waiting chip", "[app][limits]") {
  for (const char* limit : {"max_events: 300", "max_sim_time: 2.0e-4"}) {
    DYNAMIC_SECTION(limit) {
      const auto r = run_into("run configs/experiments/train-pp-v5e.yaml --set 'limits={" + std::string(limit) + "}'",
                              kOut + "pod");
      INFO(r.output);
      CHECK(r.status == 3);
      CHECK(r.output.find("simulation failed: runaway: ") != std::string::npos);
      CHECK(r.output.find(std::string("limits.") + std::string(limit).substr(0, std::string(limit).find(':'))) !=
            std::string::npos);
      CHECK(r.output.find("with work left") != std::string::npos);
      CHECK(r.output.find("\n  chip 0 waits in '") != std::string::npos);
      CHECK(r.output.find("\n  chip 1 waits in '") != std::string::npos);
      CHECK_FALSE(written(kOut + "pod"));
    }
  }
}

TEST_CASE("limits: a run inside its limits gives the results it gives without them", "[app][limits]") {
  for (const char* exp : {"configs/experiments/matmul-v4.yaml", "configs/experiments/train-pp-v5e.yaml"}) {
    DYNAMIC_SECTION(exp) {
      REQUIRE(run_into(std::string("run ") + exp, kOut + "free").status == 0);
      const nlohmann::json free = testing_cli::read_report(kOut + "free");
      const double step = free["result"]["step_time_s"].get<double>();
      const auto events = free["simulator"]["events"].get<std::uint64_t>();
      // Just enough events and simulated time: the run still finishes.
      std::ostringstream limits;
      limits << "limits={max_events: " << events + free["simulator"].value("network_events", std::uint64_t{0}) + 100
             << ", max_sim_time: " << step * 1.01 << "}";
      const auto r = run_into(std::string("run ") + exp + " --set '" + limits.str() + "'", kOut + "bounded");
      INFO(limits.str() << "\n" << r.output);
      REQUIRE(r.status == 0);
      const nlohmann::json bounded = testing_cli::read_report(kOut + "bounded");
      CHECK(bounded["result"] == free["result"]);
      CHECK(bounded["per_chip"] == free["per_chip"]);
    }
  }
}

TEST_CASE("limits: max_wall_time stops a collective on a 65536-chip ring, exit 3", "[app][limits]") {
  // The ring all-gather has 65535 steps; on main it ran on regardless of
  // every limit. One second of host time ends it between slices.
  const auto r = run_into(kBigRing + "'limits={max_wall_time: 1}'", kOut + "wall");
  INFO(r.output);
  CHECK(r.status == 3);
  CHECK(r.output.find("simulation failed: runaway: host time reached limits.max_wall_time (1 s) at ") !=
        std::string::npos);
  CHECK(r.output.find("with work left\n  chip 0 waits in 'all_gather#0'") != std::string::npos);
  CHECK_FALSE(written(kOut + "wall"));
}

TEST_CASE("limits: progress_interval logs progress on stderr and changes no result", "[app][limits]") {
  // A line after every slice (an interval of a microsecond of host time):
  // the 65536-chip ring all-gather above, stopped by max_events (so the
  // number of slices does not depend on the host's speed), logs one line per
  // slice, each further in simulated time and events.
  const auto slow =
      run_into(kBigRing + "'limits={max_events: 3000000, progress_interval: 1e-6}'", kOut + "progress-slow");
  INFO(slow.output);
  CHECK(slow.status == 3);
  std::istringstream lines(slow.output);
  std::string line;
  std::vector<std::uint64_t> events;
  while (std::getline(lines, line))
    if (line.rfind("[info] progress: ", 0) == 0) {
      CHECK(line.find(" of host time, ") != std::string::npos);
      const std::size_t at = line.find(" simulated, ");
      REQUIRE(at != std::string::npos);
      events.push_back(std::stoull(line.substr(at + 12)));
    }
  CHECK(events.size() >= 3);
  CHECK(std::is_sorted(events.begin(), events.end()));

  // A line after every slice (an interval of a microsecond) against none:
  // the same report, host fields aside, and no progress line without.
  const auto every = run_into("run configs/experiments/train-dp-v5e.yaml --set 'limits={progress_interval: 1e-6}'",
                              kOut + "progress-every");
  const auto none = run_into("run configs/experiments/train-dp-v5e.yaml --set 'limits={progress_interval: 0}'",
                             kOut + "progress-none");
  REQUIRE(every.status == 0);
  REQUIRE(none.status == 0);
  CHECK(every.output.find("[info] progress: ") != std::string::npos);
  CHECK(none.output.find("[info] progress: ") == std::string::npos);
  nlohmann::json a = testing_cli::read_report(kOut + "progress-every"),
                 b = testing_cli::read_report(kOut + "progress-none");
  for (const char* field : testing_cli::kHostFields) {
    a["simulator"].erase(field);
    b["simulator"].erase(field);
  }
  a["experiment"].erase("overrides");
  b["experiment"].erase("overrides");
  CHECK(a == b);
}

}  // namespace test_limits
