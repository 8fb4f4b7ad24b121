// What-ifs through the command line: --set on a named chip moves a
// memory-bound matvec as the roofline says, report.json records the chip
// as run, a sweep takes chip keys as axes, and explain chip --diff.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.h"

namespace test_what_if_run {

using testing_cli::read_report;
using testing_cli::run_tpusim;
using testing_cli::TempDir;

TEST_CASE("what-if run: halving v4's HBM bandwidth doubles a memory-bound matvec", "[app][what-if]") {
  TempDir tmp("what-if-matvec");
  const std::string exp = "configs/experiments/matvec-v4.yaml";
  REQUIRE(run_tpusim("run " + exp + " --out " + tmp / "base").status == 0);
  // tpu-v4.yaml: 1.2e12 B/s (docs/reference/tpu-specs.md#v4.hbm_bw).
  const auto r = run_tpusim("run " + exp + " --set chip.hbm.bandwidth=6.0e11 --out " + tmp / "slow");
  INFO(r.output);
  REQUIRE(r.status == 0);
  const nlohmann::json base = read_report(tmp / "base"), slow = read_report(tmp / "slow");
  // The same bytes (the blocking does not depend on the bandwidth); a
  // matvec (m = 8: about 8 FLOP/B, far below v4's ridge of 229) takes
  // bytes / bandwidth, so twice the time at half the bandwidth.
  CHECK(slow["result"]["hbm_bytes"] == base["result"]["hbm_bytes"]);
  const double bytes = slow["result"]["hbm_bytes"].get<double>();
  CHECK(slow["result"]["step_time_s"].get<double>() == Approx(bytes / 6.0e11).epsilon(0.03));
  CHECK(base["result"]["step_time_s"].get<double>() == Approx(bytes / 1.2e12).epsilon(0.04));
  CHECK(slow["experiment"]["chip"] ==
        nlohmann::json::parse(R"({"base": "tpu-v4", "overridden": {"hbm.bandwidth": 6.0e11}})"));
  CHECK_FALSE(base["experiment"].contains("chip"));
  CHECK(slow["pod"]["chip"] == "tpu-v4");
}

TEST_CASE("what-if run: a chip key as a sweep axis", "[app][what-if]") {
  TempDir tmp("what-if-sweep");
  std::ofstream(tmp / "bw.yaml") << "name: bw\nexperiment: " << TPUSIM_SOURCE_DIR
                                 << "/configs/experiments/matvec-v4.yaml\nscaling: none\n"
                                    "sweep:\n  chip.hbm.bandwidth: [3.0e11, 6.0e11, 1.2e12]\nplot: false\n";
  const auto r = run_tpusim("sweep " + tmp / "bw.yaml" + " -j 1 --out " + tmp / "out");
  INFO(r.output);
  REQUIRE(r.status == 0);
  std::vector<double> t;
  for (const char* p : {"p000", "p001", "p002"})
    t.push_back(read_report(tmp / (std::string("out/points/") + p))["result"]["step_time_s"].get<double>());
  // Memory-bound at each: time inversely proportional to the bandwidth.
  CHECK(t[0] / t[1] == Approx(2.0).epsilon(0.03));
  CHECK(t[1] / t[2] == Approx(2.0).epsilon(0.03));
}

namespace {

// The words of the line of `text` whose key (second column) is `key`:
// {mark, key, a, b}, the mark "" when the key is not marked.
std::vector<std::string> diff_row(const std::string& text, const std::string& key) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string x; words >> x;) w.push_back(x);
    if (w.size() == 3 && w[0] == key) return {"", w[0], w[1], w[2]};
    if (w.size() == 4 && w[0] == "*" && w[1] == key) return w;
  }
  return {};
}

}  // namespace

TEST_CASE("what-if run: explain chip --diff marks the keys that differ", "[app][what-if]") {
  const auto r = run_tpusim("explain chip --diff tpu-v5e tpu-v6e");
  INFO(r.output);
  REQUIRE(r.status == 0);
  // v5e 8.1e11 B/s, v6e 1.6e12 B/s (docs/reference/tpu-specs.md#v5e.hbm_bw, #v6e.hbm_bw).
  CHECK(diff_row(r.output, "hbm.bandwidth") == std::vector<std::string>{"*", "hbm.bandwidth", "8.1e11", "1.6e12"});
  // MXUs of 128x128 on v5e, 256x256 on v6e (docs/reference/tpu-specs.md#v6e.mxu).
  CHECK(diff_row(r.output, "mxu.rows") == std::vector<std::string>{"*", "mxu.rows", "128", "256"});
  // The same HBM interleave assumption in both files: not marked.
  CHECK(diff_row(r.output, "hbm.interleave") == std::vector<std::string>{"", "hbm.interleave", "256", "256"});
  CHECK(run_tpusim("explain chip --diff tpu-v5e").status == 2);
  CHECK(run_tpusim("explain chip --diff tpu-v5e tpu-v9z").status == 2);
}

}  // namespace test_what_if_run
