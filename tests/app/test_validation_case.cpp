// Validation case files as runs (workloads/validation_case.h): `tpusim run
// validation/cases/X.yaml` runs the case's experiment with its overrides,
// which must equal running that experiment with the same --set by hand (as
// scripts/validate does); every shipped case either loads as a run or is a
// located exit 2 naming what it lacks; and each run carries its
// validation group (result.validation) and prints it beside its figures.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_runner.h"

namespace test_validation_case {

using testing_cli::run_tpusim;
namespace fs = std::filesystem;

namespace {

std::string text_of(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("validation case: tpusim run of a case equals its experiment run with its overrides by hand",
          "[app][validation]") {
  testing_cli::TempDir tmp("validation-case");
  const auto c = run_tpusim("run validation/cases/matmul-v5e-xla-1024.yaml --out " + (tmp / "case"));
  INFO(c.output);
  REQUIRE(c.status == 0);
  const auto h = run_tpusim(
      "run validation/experiments/matmul-v5e.yaml --set workload.m=1024 --set workload.k=1024 --set workload.n=1024 "
      "--out " +
      (tmp / "hand"));
  INFO(h.output);
  REQUIRE(h.status == 0);
  const nlohmann::json rc = testing_cli::read_report(tmp / "case"), rh = testing_cli::read_report(tmp / "hand");
  CHECK(rc["experiment"]["name"] == "matmul-v5e-xla-1024");  // named after the case
  CHECK(rc["result"]["kernel"]["m"] == 1024);
  CHECK(rc["result"]["step_time_s"] == rh["result"]["step_time_s"]);
  CHECK(rc["experiment"]["workload"] == rh["experiment"]["workload"]);
  // A v5e matmul: validated on the measured v5e matmuls, printed beside step time and MFU.
  CHECK(rc["result"]["validation"]["group"] == "matmul/v5e");
  CHECK(rc["result"]["validation"]["cases"].get<int>() >= 1);
  CHECK(c.output.find("step time") != std::string::npos);
  CHECK(c.output.find("(validated on ") != std::string::npos);
  // Overrides on the command line come after the case's own.
  const auto o =
      run_tpusim("run validation/cases/matmul-v5e-xla-1024.yaml --set workload.m=2048 --out " + (tmp / "override"));
  INFO(o.output);
  REQUIRE(o.status == 0);
  CHECK(testing_cli::read_report(tmp / "override")["result"]["kernel"]["m"] == 2048);
}

TEST_CASE("validation case: every case loads as a run, or names what tpusim lacks at its missing: key",
          "[app][validation]") {
  int runnable = 0;
  for (const auto& e : fs::directory_iterator(fs::path(TPUSIM_SOURCE_DIR) / "validation" / "cases")) {
    if (e.path().extension() != ".yaml") continue;
    const std::string rel = "validation/cases/" + e.path().filename().string();
    const auto r = run_tpusim("validate " + rel);
    INFO(rel << ":\n" << r.output);
    if (text_of(e.path()).find("\nmissing:") == std::string::npos) {
      CHECK(r.status == 0);
      CHECK(r.output.find("ok (validation case)") != std::string::npos);
      ++runnable;
    } else {
      // Located at the missing: key, e.g. "validation/cases/X.yaml:19:10: missing: ...".
      CHECK(r.status == 2);
      CHECK(r.output.find(rel + ":") != std::string::npos);
      CHECK(r.output.find(": missing: this case needs what tpusim cannot do yet (") != std::string::npos);
    }
  }
  // Every shipped case runs today; the next test keeps a case with missing: in a copy.
  CHECK(runnable > 0);
}

TEST_CASE("validation case: a case that lacks a capability is exit 2 naming it", "[app][validation]") {
  // Every shipped case runs now: DeepSeek-V3's, with its SparseCore offload
  // marked missing again, in a copy.
  testing_cli::TempDir tmp("validation-case-missing");
  std::string text = text_of(fs::path(TPUSIM_SOURCE_DIR) / "validation/cases/maxtext-recipe-v5p-dsv3-512.yaml");
  text.replace(text.find("\nexperiment:"), 12, "\nmissing: [sparsecore_collective_offload]\nexperiment:");
  std::ofstream(tmp / "missing.yaml") << text;
  const auto r = run_tpusim("run " + std::string(tmp / "missing.yaml") + " --out /dev/null/never");
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("missing.yaml:") != std::string::npos);
  CHECK(r.output.find("sparsecore_collective_offload") != std::string::npos);
}

TEST_CASE("validation case: a misspelt case key is a located error with a suggestion", "[app][validation]") {
  testing_cli::TempDir tmp("validation-case-bad");
  std::string text = text_of(fs::path(TPUSIM_SOURCE_DIR) / "validation/cases/matmul-v5e-xla-1024.yaml");
  text.replace(text.find("\ncompare:"), 9, "\ncompair:");
  std::ofstream(tmp / "bad.yaml") << text;
  const auto r = run_tpusim("run " + (tmp / "bad.yaml") + " --out " + (tmp / "out"));
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("compair") != std::string::npos);
  CHECK(r.output.find("did you mean 'compare'?") != std::string::npos);
}

}  // namespace test_validation_case
