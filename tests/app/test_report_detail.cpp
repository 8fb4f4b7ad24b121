// `tpusim run --report-detail`: report.json summarises the collectives by
// default (collective_summary) and lists each one only with `full`; the
// summary of a step with several kinds of collective counts what the full
// list of the same run lists.
#include <catch2/catch.hpp>

#include <map>
#include <tuple>

#include "cli_runner.h"

namespace test_report_detail {

using testing_cli::read_report;
using testing_cli::run_tpusim;
using testing_cli::TempDir;

TEST_CASE("report detail: the summary by default, the list with --report-detail full", "[app][report]") {
  const TempDir tmp("report-detail");
  // Tensor and data parallelism: all-reduces over two axes, of two sizes.
  const std::string exp = "configs/experiments/train-hybrid-v4.yaml";
  REQUIRE(run_tpusim("run " + exp + " --out " + tmp / "summary").status == 0);
  REQUIRE(run_tpusim("run " + exp + " --report-detail full --out " + tmp / "full").status == 0);
  const auto summary = read_report(tmp / "summary"), full = read_report(tmp / "full");
  CHECK(summary["report_detail"] == "summary");
  CHECK_FALSE(summary.contains("collectives"));
  CHECK(full["report_detail"] == "full");
  REQUIRE(full["collectives"].size() > 1);
  CHECK(summary["collective_summary"] == full["collective_summary"]);
  // Each entry counts the listed collectives of its op, axes and size.
  using Key = std::tuple<std::string, std::string, double>;
  std::map<Key, double> listed;
  for (const auto& c : full["collectives"]) listed[{c["op"], c["axes"].dump(), c["bytes"].get<double>()}] += 1;
  std::map<Key, double> summarised;
  for (const auto& g : summary["collective_summary"]) {
    summarised[{g["op"], g["axes"].dump(), g["bytes"].get<double>()}] += g["count"].get<double>();
    CHECK(g["total_bytes"].get<double>() == g["count"].get<double>() * g["bytes"].get<double>());
  }
  CHECK(summarised == listed);
  CHECK(summarised.size() > 1);
}

}  // namespace test_report_detail
