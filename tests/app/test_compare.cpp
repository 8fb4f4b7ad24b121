// `tpusim compare A B`: signed deltas from A to B and the largest
// contributor, checked on two hand-written reports whose differences are
// worked out here by hand; the --html page; bad input.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "app/compare.h"
#include "cli_runner.h"

namespace test_compare {

using testing_cli::run_tpusim;
using testing_cli::TempDir;

namespace {

// A two-chip training step: 1.0 s, forward 0.4, backward 0.5, optimizer
// 0.1, 0.1 s of exposed communication; each chip's MXU busy 0.5 and 0.7 s.
nlohmann::json report_a() {
  return nlohmann::json::parse(R"({
    "experiment": {"name": "a"},
    "result": {"step_time_s": 1.0,
               "phases": {"forward_s": 0.4, "backward_s": 0.5, "optimizer_s": 0.1},
               "communication": {"exposed_time_s": 0.1, "collective_time_s": 0.3, "compute_time_s": 0.9},
               "memory": {"params_bytes": 1000, "activations_bytes": 4000, "fits": true},
               "mfu": 0.5},
    "per_chip": [{"busy": {"mxu_s": 0.5}}, {"busy": {"mxu_s": 0.7}}]})");
}

// The same step 0.5 s slower: backward +0.4, forward +0.05, exposed
// communication +0.05; activations doubled; the MXUs 0.9 s busy each.
nlohmann::json report_b() {
  return nlohmann::json::parse(R"({
    "experiment": {"name": "b"},
    "result": {"step_time_s": 1.5,
               "phases": {"forward_s": 0.45, "backward_s": 0.9, "optimizer_s": 0.1},
               "communication": {"exposed_time_s": 0.15, "collective_time_s": 0.3, "compute_time_s": 1.35},
               "memory": {"params_bytes": 1000, "activations_bytes": 8000, "fits": true},
               "mfu": 0.4},
    "per_chip": [{"busy": {"mxu_s": 0.9}}, {"busy": {"mxu_s": 0.9}}]})");
}

const nlohmann::json& row(const nlohmann::json& cmp, const std::string& key) {
  for (const auto& r : cmp["rows"])
    if (r["key"] == key) return r;
  throw std::runtime_error("no row " + key);
}

void write(const std::string& path, const nlohmann::json& j) { std::ofstream(path) << j.dump(2); }

}  // namespace

TEST_CASE("compare: signed deltas and the largest contributor, by hand", "[app][compare]") {
  const nlohmann::json cmp = app::compare_reports(report_a(), report_b(), "A", "B");
  CHECK(cmp["step_time_delta_s"].get<double>() == Approx(0.5));
  CHECK(row(cmp, "result.phases.backward_s")["delta"].get<double>() == Approx(0.4));
  CHECK(row(cmp, "result.phases.forward_s")["delta"].get<double>() == Approx(0.05));
  CHECK(row(cmp, "result.phases.optimizer_s")["delta"].get<double>() == 0);
  CHECK(row(cmp, "result.communication.exposed_time_s")["delta"].get<double>() == Approx(0.05));
  CHECK(row(cmp, "result.memory.activations_bytes")["delta"].get<double>() == 4000);
  CHECK(row(cmp, "result.memory.activations_bytes")["relative"].get<double>() == Approx(1.0));
  CHECK(row(cmp, "result.memory.params_bytes")["delta"].get<double>() == 0);
  // Busy fraction: mean MXU busy over the step: (0.5+0.7)/2/1.0 = 0.6 and 0.9/1.5 = 0.6.
  CHECK(row(cmp, "busy_fraction.mxu")["a"].get<double>() == Approx(0.6));
  CHECK(row(cmp, "busy_fraction.mxu")["b"].get<double>() == Approx(0.6));
  CHECK(cmp["largest_contributor"]["delta_s"].get<double>() == Approx(0.4));
  CHECK(row(cmp, "result.mfu")["delta"].get<double>() == Approx(-0.1));
  // backward: 0.4 of the 0.5 s the step grew.
  REQUIRE(cmp["largest_contributor"].is_object());
  CHECK(cmp["largest_contributor"]["key"] == "result.phases.backward_s");
  CHECK(cmp["largest_contributor"]["share"].get<double>() == Approx(0.8));
  // A run against itself: nothing moved, nothing to name.
  const nlohmann::json same = app::compare_reports(report_a(), report_a(), "A", "A");
  CHECK(same["step_time_delta_s"].get<double>() == 0);
  CHECK(same["largest_contributor"].is_null());
}

TEST_CASE("compare: a large pod's busy fractions from per_chip_summary, not its listed chips", "[app][compare]") {
  // Report A as a summary-detail report of a large pod: per_chip lists only
  // chip 0 (MXU 0.5 s busy), per_chip_summary says the mean over every chip
  // is 0.6 s. B unchanged.
  nlohmann::json a = report_a();
  a["per_chip"] = nlohmann::json::parse(R"([{"chip": 0, "busy": {"mxu_s": 0.5}}])");
  a["per_chip_summary"] = nlohmann::json::parse(R"({"chips": 1000, "fields": {"busy.mxu_s":
      {"count": 1000, "min": 0.5, "min_chip": 0, "mean": 0.6, "max": 0.7, "max_chip": 1}}})");
  const nlohmann::json cmp = app::compare_reports(a, report_b(), "A", "B");
  CHECK(row(cmp, "busy_fraction.mxu")["a"].get<double>() == Approx(0.6));  // 0.6 s / 1.0 s, not chip 0's 0.5
  CHECK(row(cmp, "busy_fraction.mxu")["b"].get<double>() == Approx(0.6));
}

TEST_CASE("compare: the command, its --json and --html, run folders and files", "[app][compare]") {
  TempDir tmp("compare");
  std::filesystem::create_directories(tmp.path / "run-a");
  write(tmp / "run-a/report.json", report_a());
  write(tmp / "b.json", report_b());
  auto r = run_tpusim("compare " + tmp / "run-a" + " " + tmp / "b.json");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.output,
             Catch::Contains("largest contributor: result.phases.backward_s +400 ms (80% of the step's change)"));
  CHECK_THAT(r.output, Catch::Contains("+500 ms"));
  r = run_tpusim("compare " + tmp / "run-a" + " " + tmp / "b.json --json --html " + tmp / "cmp.html");
  REQUIRE(r.status == 0);
  const nlohmann::json j = nlohmann::json::parse(r.output);
  CHECK(j["largest_contributor"]["key"] == "result.phases.backward_s");
  std::ifstream page(tmp / "cmp.html");
  const std::string html((std::istreambuf_iterator<char>(page)), std::istreambuf_iterator<char>());
  CHECK_THAT(html, Catch::Contains("result.phases.backward_s"));
  CHECK_THAT(html, Catch::Contains("<!DOCTYPE html>"));
}

TEST_CASE("compare: a missing run or a file that is no report is exit 2 naming it", "[app][compare]") {
  TempDir tmp("compare-bad");
  write(tmp / "b.json", report_b());
  auto r = run_tpusim("compare " + tmp / "nothing" + " " + tmp / "b.json");
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("nothing: no report to read"));
  std::ofstream(tmp / "x.json") << "{\"a\": 1}";
  r = run_tpusim("compare " + tmp / "x.json" + " " + tmp / "b.json");
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("x.json: not a tpusim report.json"));
  CHECK(run_tpusim("compare " + tmp / "b.json").status == 2);
}

}  // namespace test_compare
