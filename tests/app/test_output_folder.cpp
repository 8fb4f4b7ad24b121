// The output folder is checked before anything is simulated: --out that is
// a file, or that holds a directory where report.json goes, is exit 2 with
// a message naming it (not an internal error after the run), and a run
// without --trace does not leave an earlier run's trace.json beside its
// report.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "cli_runner.h"

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
