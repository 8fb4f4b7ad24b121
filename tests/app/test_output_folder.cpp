// The output folder is checked before anything is simulated: --out that is
// a file, or that holds a directory where report.json goes, is exit 2 with
// a message naming it (not an internal error after the run), and a run
// without --trace does not leave an earlier run's trace.json beside its
// report. A run's outputs are replaced as one set, only when it succeeds.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace test_output_folder {

using testing_cli::run_tpusim;
using testing_cli::TempDir;
namespace fs = std::filesystem;

namespace {
const char* kExperiment = "configs/experiments/matmul-v5e.yaml";
}

TEST_CASE("an output folder that is a file or holds a directory named report.json: exit 2 before the run",
          "[app][outputs]") {
  TempDir tmp("out-folder");
  std::ofstream(tmp / "a-file") << "x";
  auto r = run_tpusim(std::string("run ") + kExperiment + " --out " + (tmp / "a-file"));
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("--out " + (tmp / "a-file") + ": exists and is not a directory"));
  fs::create_directories(tmp.path / "has-dir" / "report.json");
  r = run_tpusim(std::string("run ") + kExperiment + " --out " + (tmp / "has-dir"));
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("report.json in it is a directory"));
  CHECK_THAT(r.output, !Catch::Contains("internal error"));
}

TEST_CASE("a run without --trace removes an earlier run's trace.json", "[app][outputs]") {
  TempDir tmp("stale-trace");
  const std::string out = tmp / "run";
  REQUIRE(run_tpusim(std::string("run ") + kExperiment + " --trace --out " + out).status == 0);
  REQUIRE(fs::exists(fs::path(out) / "trace.json"));
  REQUIRE(run_tpusim(std::string("run ") + kExperiment + " --out " + out).status == 0);
  CHECK(fs::exists(fs::path(out) / "report.json"));
  CHECK_FALSE(fs::exists(fs::path(out) / "trace.json"));
  // Nothing of the checks is left behind.
  for (const auto& e : fs::directory_iterator(out)) CHECK(e.path().filename().string().rfind(".tpusim", 0) != 0);
}

TEST_CASE("a failed --vcd run leaves the earlier run's outputs as they were", "[app][outputs]") {
  // mxu.vcd was written in place: a run that failed after opening it left a
  // half-written VCD beside the earlier run's report.
  TempDir tmp("vcd-set");
  const std::string out = tmp / "run";
  const std::string run = "run configs/experiments/matmul-teach.yaml --set fidelity=pe --vcd --out " + out;
  REQUIRE(run_tpusim(run).status == 0);
  const auto read = [](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string vcd = read(fs::path(out) / "mxu.vcd"), report = read(fs::path(out) / "report.json");
  REQUIRE(vcd.size() > 1000);
  // Stopped at 100 ns of its 926 ns, after mxu.vcd was opened.
  const auto failed = run_tpusim(run + " --set 'limits={max_sim_time: 1.0e-7}'");
  INFO(failed.output);
  CHECK(failed.status == 3);
  CHECK(read(fs::path(out) / "mxu.vcd") == vcd);
  CHECK(read(fs::path(out) / "report.json") == report);
  for (const auto& e : fs::directory_iterator(out))
    CHECK(e.path().filename().string().find(".tmp.") == std::string::npos);
  // A run without --vcd removes the earlier mxu.vcd, as it does trace.json.
  REQUIRE(run_tpusim("run configs/experiments/matmul-teach.yaml --out " + out).status == 0);
  CHECK_FALSE(fs::exists(fs::path(out) / "mxu.vcd"));
}

TEST_CASE("a run removes the temporary files a killed run left, and no one else's", "[app][outputs]") {
  TempDir tmp("stale-temps");
  const std::string out = tmp / "run";
  fs::create_directories(out);
  // No process has pid 999999999 (pid_max is at most 2^22); this test's own pid is alive.
  std::ofstream(fs::path(out) / "report.json.tmp.999999999") << "{";
  std::ofstream(fs::path(out) / "mxu.vcd.tmp.999999999.vcd") << "$date";
  const std::string live = "trace.json.tmp." + std::to_string(::getpid());
  std::ofstream(fs::path(out) / live) << "[";
  REQUIRE(run_tpusim(std::string("run ") + kExperiment + " --out " + out).status == 0);
  CHECK_FALSE(fs::exists(fs::path(out) / "report.json.tmp.999999999"));
  CHECK_FALSE(fs::exists(fs::path(out) / "mxu.vcd.tmp.999999999.vcd"));
  CHECK(fs::exists(fs::path(out) / live));
}

TEST_CASE("report.json records the --set overrides and the resolved workload", "[app][outputs]") {
  // Two reports of one file with different overrides could not be told apart.
  TempDir tmp("overrides");
  const std::string out = tmp / "run";
  REQUIRE(run_tpusim(std::string("run ") + kExperiment + " --set workload.m=256 --out " + out).status == 0);
  std::ifstream in(fs::path(out) / "report.json");
  const auto rep = nlohmann::json::parse(in);
  CHECK(rep["experiment"]["overrides"] == nlohmann::json::array({"workload.m=256"}));
  CHECK(rep["experiment"]["workload"].get<std::string>().find("m: 256") != std::string::npos);
  CHECK(rep["experiment"]["inputs"][0] == kExperiment);
}

}  // namespace test_output_folder
