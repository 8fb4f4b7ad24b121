// `tpusim run --report-detail`: report.json summarises the collectives by
// default (collective_summary) and lists each one only with `full`; the
// summary of a step with several kinds of collective counts what the full
// list of the same run lists. Past 64 chips per_chip lists chip 0 and the
// outliers beside per_chip_summary, whose distribution is checked against
// the full list's own minimum, maximum and mean.
#include <catch2/catch.hpp>

#include <limits>
#include <map>
#include <set>
#include <sstream>
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

namespace {

// The number at a dotted key of a per_chip entry ("memory.total_bytes"), or
// nullptr when the entry has none.
const nlohmann::json* at_key(const nlohmann::json& entry, const std::string& key) {
  const nlohmann::json* node = &entry;
  std::stringstream parts(key);
  for (std::string part; std::getline(parts, part, '.');) {
    if (!node->is_object() || !node->contains(part)) return nullptr;
    node = &(*node)[part];
  }
  return node;
}

}  // namespace

TEST_CASE("report detail: past 64 chips per_chip lists chip 0 and the summary's outliers", "[app][report]") {
  const TempDir tmp("report-detail-chips");
  // 4 pipeline stages x 32 data replicas on 128 v4 chips: the first stage
  // holds the embedding, the last the logits, so the chips differ by stage.
  const std::string run =
      "run configs/experiments/train-pp-v4.yaml --set \"pod={topology: torus3d, shape: [4, 4, 8], "
      "wraparound: true}\" --set \"mesh={pipe: 4, data: 32}\" --set workload.global_batch=512 "
      "--set \"workload.parallelism={pipeline: pipe, data: data, microbatches: 8, schedule: 1f1b}\" "
      "--set workload.model.layers=8";
  REQUIRE(run_tpusim(run + " --out " + tmp / "summary").status == 0);
  REQUIRE(run_tpusim(run + " --report-detail full --out " + tmp / "full").status == 0);
  const auto summary = read_report(tmp / "summary"), full = read_report(tmp / "full");
  const nlohmann::json& all = full["per_chip"];
  REQUIRE(all.size() == 128);
  CHECK(summary["per_chip_summary"] == full["per_chip_summary"]);
  const nlohmann::json& fields = summary["per_chip_summary"]["fields"];
  CHECK(summary["per_chip_summary"]["chips"] == 128);

  // Each field's distribution, walked here over the full list.
  std::set<std::uint64_t> named{0};
  for (const auto& [key, d] : fields.items()) {
    INFO(key);
    double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0;
    std::uint64_t lo_chip = 0, hi_chip = 0, count = 0;
    for (const auto& entry : all) {
      const nlohmann::json* v = at_key(entry, key);
      if (!v) continue;
      const double x = v->get<double>();
      const std::uint64_t chip = entry["chip"];
      if (x < lo || (x == lo && chip < lo_chip)) {
        lo = x;
        lo_chip = chip;
      }
      if (x > hi || (x == hi && chip < hi_chip)) {
        hi = x;
        hi_chip = chip;
      }
      sum += x;
      ++count;
    }
    CHECK(d["count"] == count);
    CHECK(d["min"].get<double>() == lo);
    CHECK(d["max"].get<double>() == hi);
    CHECK(d["min_chip"] == lo_chip);
    CHECK(d["max_chip"] == hi_chip);
    CHECK(d["mean"].get<double>() == Approx(sum / double(count)).epsilon(1e-12));
    named.insert(lo_chip);
    named.insert(hi_chip);
  }
  // The stages differ: the fullest chip is the report's per-chip memory, and not every chip's.
  CHECK(fields["memory.total_bytes"]["max"] == summary["result"]["memory"]["per_chip_bytes"]);
  CHECK(fields["memory.total_bytes"]["min"] < fields["memory.total_bytes"]["max"]);

  // Summary detail lists exactly chip 0 and the named chips, each as the full list has it.
  std::set<std::uint64_t> listed;
  for (const auto& entry : summary["per_chip"]) {
    const std::uint64_t chip = entry["chip"];
    listed.insert(chip);
    CHECK(entry == all[chip]);
  }
  CHECK(listed == named);
  CHECK(listed.size() < 128);
}

}  // namespace test_report_detail
