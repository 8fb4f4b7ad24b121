// The terminal table explains itself (issue 48): busy and idle fractions with
// a verdict that can say "idle", phases that overlap said to, the late-chip
// line in words, the BF16 error a teaching run promises, and a collective
// matmul's plan naming its permutes. Each check reads the run's own
// report.json, a second account of the same run, and compares.
#include <catch2/catch.hpp>

#include <cstdio>
#include <regex>
#include <string>

#include "cli_runner.h"
#include "workloads/verdict.h"

namespace test_terminal_explains {

using testing_cli::read_report;
using testing_cli::run_tpusim;
using testing_cli::TempDir;

namespace {

// The first group of `pattern` in `text`, or "" (with the text in the failure).
std::string match(const std::string& text, const std::string& pattern) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(pattern))) return "";
  return m[1].str();
}

}  // namespace

TEST_CASE("verdict: hand-worked busy fractions", "[app][terminal]") {
  // The three units' limits: a saturated one names the bound; else the sum says
  // whether they take turns (latency) or mostly wait (idle).
  CHECK(workloads::verdict(0.85, 0.30, 0.0, 1.0) == "compute");
  CHECK(workloads::verdict(0.20, 0.45, 0.0, 0.8) == "memory");  // 0.45 / 0.8 = 0.56 of what HBM sustains
  CHECK(workloads::verdict(0.20, 0.10, 0.70, 1.0) == "communication");
  CHECK(workloads::verdict(0.30, 0.25, 0.0, 1.0) == "latency");  // 55 % together, none half
  CHECK(workloads::verdict(0.098, 0.02, 0.05, 1.0) == "idle");   // train-functional-mlp-v5e's MXU 9.8 %
}

TEST_CASE("terminal: a step where nothing is busy is not called compute-bound", "[app][terminal]") {
  TempDir dir("verdict-idle");
  const auto r = run_tpusim("run configs/experiments/train-functional-mlp-v5e.yaml --out " + dir.path.string());
  INFO(r.output);
  REQUIRE(r.status == 0);
  const auto rep = read_report(dir.path.string());
  const auto& roof = rep["result"]["roofline"];
  const double mxu = roof["busy_fraction"]["mxu"], hbm = roof["busy_fraction"]["hbm"],
               ici = roof["busy_fraction"]["ici"];
  REQUIRE(mxu < 0.5);
  REQUIRE(hbm < 0.5);
  REQUIRE(ici < 0.5);
  const std::string expected = mxu + hbm + ici >= 0.5 ? "latency" : "idle";
  CHECK(roof["verdict"] == expected);
  CHECK(r.output.find("verdict") != std::string::npos);
  CHECK(r.output.find(expected + ": no unit is busy half the step") != std::string::npos);
  CHECK(r.output.find("compute-bound") == std::string::npos);
  // The busy row prints the report's fractions, and idle as their complement.
  char busy[64], idle[64];
  std::snprintf(busy, sizeof busy, "%.1f / %.1f / %.1f", 100 * mxu, 100 * hbm, 100 * ici);
  std::snprintf(idle, sizeof idle, "idle %.1f / %.1f / %.1f %%", 100 - 100 * mxu, 100 - 100 * hbm, 100 - 100 * ici);
  CHECK(r.output.find(busy) != std::string::npos);
  CHECK(r.output.find(idle) != std::string::npos);
}

TEST_CASE("terminal: a matvec is memory-bound in words", "[app][terminal]") {
  TempDir dir("verdict-memory");
  const auto r = run_tpusim("run configs/tutorial/ch2-matvec.yaml --out " + dir.path.string());
  REQUIRE(r.status == 0);
  INFO(r.output);
  // One multiply-add per weight fetched: the roofline says memory (docs/tutorial/02-roofline.md).
  CHECK(read_report(dir.path.string())["result"]["roofline"]["verdict"] == "memory");
  CHECK(r.output.find("memory-bound: HBM moves data") != std::string::npos);
}

TEST_CASE("terminal: phases that sum past the step say they overlap", "[app][terminal]") {
  TempDir dir("phases");
  const auto r = run_tpusim("run configs/tutorial/ch3-one-chip.yaml --out " + dir.path.string());
  REQUIRE(r.status == 0);
  INFO(r.output);
  const auto res = read_report(dir.path.string())["result"];
  const double sum =
      double(res["phases"]["forward_s"]) + double(res["phases"]["backward_s"]) + double(res["phases"]["optimizer_s"]);
  const double step = res["step_time_s"];
  REQUIRE(sum > step);  // the case issue 48 found: 446 us + 829 us + 1.29 ms against a 2.31 ms step
  CHECK(r.output.find("(phases overlap: they sum to ") != std::string::npos);
  // A step whose phases do not overlap does not say so: the ring all-reduce has none.
  const auto ring = run_tpusim("run configs/tutorial/ch4-ring.yaml --out " + dir.path.string());
  CHECK(ring.output.find("phases overlap") == std::string::npos);
}

TEST_CASE("terminal: the late chip's line in words", "[app][terminal]") {
  TempDir dir("late-chip");
  const auto r = run_tpusim("run configs/tutorial/ch12-dp.yaml --set 'stragglers=[{chips: [3], compute: 0.5}]' --out " +
                            dir.path.string());
  REQUIRE(r.status == 0);
  INFO(r.output);
  const auto waiting = read_report(dir.path.string())["result"]["communication"]["waiting"];
  REQUIRE(waiting.size() >= 1);
  const auto& w = waiting[0];
  REQUIRE(w["gated_by"].size() >= 1);
  const auto& first = w["gated_by"][0];
  CHECK(first["chip"] == 3);  // the chip the --set slowed
  const std::string line = "chip 3 made " + std::to_string(int(first["gated"])) + " of the " +
                           std::to_string(int(w["collectives"])) + " all-reduces wait, ";
  CHECK(r.output.find(line) != std::string::npos);
  CHECK(match(r.output, "chip 3, 0: ").empty());  // the old cryptic form
}

TEST_CASE("terminal: the BF16 teaching run prints its error", "[app][terminal]") {
  TempDir dir("bf16");
  const auto r = run_tpusim("run configs/tutorial/ch1-bf16-teach.yaml --out " + dir.path.string());
  REQUIRE(r.status == 0);
  INFO(r.output);
  const double err = read_report(dir.path.string())["result"]["functional"]["max_abs_error"];
  char text[64];
  std::snprintf(text, sizeof text, "max |error| %.3g", err);
  CHECK(r.output.find(text) != std::string::npos);
  // docs/tutorial/concepts.md quotes it to two figures: BF16's 8-bit mantissa over a 64-term sum.
  CHECK(err > 0);
  CHECK(err < 1e-5);
}

TEST_CASE("terminal: a collective matmul's plan names its permutes", "[app][terminal]") {
  TempDir dir("cm");
  const auto r = run_tpusim(
      "run configs/tutorial/ch8-overlap.yaml --set workload.n=32768 --set "
      "workload.collective_matmul=true --out " +
      dir.path.string());
  REQUIRE(r.status == 0);
  INFO(r.output);
  int permutes = 0;
  const auto rep = read_report(dir.path.string());
  for (const auto& g : rep["collective_summary"])
    if (g["op"] == "permute") permutes += g["count"].get<int>();
  REQUIRE(permutes > 0);
  CHECK(r.output.find("all-gather first") == std::string::npos);
  CHECK(r.output.find("collective matmul: " + std::to_string(permutes) + " permutes of ") != std::string::npos);
  // Without collective_matmul the same sharding does gather first.
  const auto seq =
      run_tpusim("run configs/tutorial/ch8-overlap.yaml --set workload.n=32768 --out " + dir.path.string());
  CHECK(seq.output.find("all-gather first") != std::string::npos);
}

}  // namespace test_terminal_explains
