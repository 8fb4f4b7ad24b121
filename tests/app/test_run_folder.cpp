// `tpusim run` without --out keeps earlier runs: runs/<name>/, then
// runs/<name>-2/, -3/, ... (app/run_folder.h); --out still replaces.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "app/run_folder.h"
#include "cli_runner.h"

namespace test_run_folder {

using testing_cli::run_in_source_tree;
using testing_cli::TempDir;

TEST_CASE("run folder: the first of runs/<name>, <name>-2, ... without a report", "[app][outputs]") {
  TempDir tmp("run-folder");
  const std::string root = tmp.path.string();
  CHECK(app::default_run_folder("x", root) == root + "/x");
  std::filesystem::create_directories(tmp.path / "x");  // a folder a failed run left: no report, reused
  CHECK(app::default_run_folder("x", root) == root + "/x");
  std::ofstream(tmp / "x/report.json") << "{}";
  CHECK(app::default_run_folder("x", root) == root + "/x-2");
  std::filesystem::create_directories(tmp.path / "x-2");
  std::ofstream(tmp / "x-2/report.json") << "{}";
  CHECK(app::default_run_folder("x", root) == root + "/x-3");
}

TEST_CASE("run folder: a second run writes runs/<name>-2/ and says so, --out replaces", "[app][outputs]") {
  TempDir tmp("run-twice");
  const std::string run = "cd " + tmp.path.string() + " && SC_COPYRIGHT_MESSAGE=DISABLE " + TPUSIM_BINARY + " run " +
                          TPUSIM_SOURCE_DIR + "/configs/experiments/matmul-teach.yaml";
  auto r = run_in_source_tree(run);
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains("report: runs/matmul-teach/report.json"));
  r = run_in_source_tree(run);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains("report: runs/matmul-teach-2/report.json"));
  CHECK_THAT(r.output, Catch::Contains("runs/matmul-teach/ holds an earlier run"));
  CHECK(std::filesystem::exists(tmp.path / "runs/matmul-teach/report.json"));
  r = run_in_source_tree(run + " --out runs/matmul-teach");
  REQUIRE(r.status == 0);
  CHECK_FALSE(std::filesystem::exists(tmp.path / "runs/matmul-teach-3"));
  // The two runs compare as equal.
  r = run_in_source_tree("cd " + tmp.path.string() + " && " + TPUSIM_BINARY +
                         " compare runs/matmul-teach runs/matmul-teach-2 --json");
  REQUIRE(r.status == 0);
  CHECK(nlohmann::json::parse(r.output)["step_time_delta_s"].get<double>() == 0);
}

}  // namespace test_run_folder
