// Simulated time is 64-bit picoseconds (sim/sim_time.h). A duration that
// does not fit used to wrap around and report a time far shorter than the
// bytes can take, with exit 0. Now every such run either gives a time no
// shorter than bytes / bandwidth or ends with exit 3 saying why, whatever
// the bandwidth (1e-30 to 1e15 B/s, link and HBM).
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace test_time_range {

using testing_cli::run_tpusim;
using testing_cli::TempDir;

namespace {

// `tpusim run ARGS --out DIR`; the step time of its report, or NaN when the
// run did not end with exit 0.
struct Outcome {
  testing_cli::CliResult run;
  double step_s = std::nan("");
};

Outcome run_step(const std::string& args, const std::string& out) {
  Outcome o{run_tpusim("run " + args + " --out " + out), std::nan("")};
  if (o.run.status == 0) {
    std::ifstream in(out + "/report.json");
    o.step_s = nlohmann::json::parse(in)["result"]["step_time_s"].get<double>();
  }
  return o;
}

// An exit 3 says why, in one "simulation failed: ..." message (beyond
// simulated time, or a limit reached with work left).
void check_exit_3_with_reason(const testing_cli::CliResult& r) {
  CHECK(r.status == 3);
  CHECK(r.output.find("simulation failed: ") != std::string::npos);
  CHECK(r.output.find("internal error") == std::string::npos);
}

// tpu-v4.yaml with another HBM bandwidth, as a chip file.
std::string chip_with_hbm_bandwidth(const TempDir& dir, double bandwidth) {
  std::ifstream in(std::string(TPUSIM_SOURCE_DIR) + "/configs/chips/tpu-v4.yaml");
  std::ostringstream text;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("  bandwidth:", 0) == 0) {
      std::ostringstream v;
      v << "  bandwidth: " << bandwidth;
      line = v.str();
    }
    text << line << "\n";
  }
  const std::string path = dir / "chip.yaml";
  std::ofstream(path) << text.str();
  return path;
}

}  // namespace

TEST_CASE("time range: the issue's examples end with exit 3 or 2, never a wrapped time", "[app][time]") {
  const TempDir dir("time-examples");
  SECTION("64 MiB all-gather on 0.1 B/s links (was 15 us)") {
    const auto o = run_step("configs/experiments/allgather-ring-v5e-16.yaml --set pod.link_bandwidth=0.1", dir / "ag");
    INFO(o.run.output);
    check_exit_3_with_reason(o.run);
    // Names the transfer.
    CHECK(o.run.output.find("the ICI message from chip 0 (0) to chip 1 (1) (4194304 bytes at 0.1 B/s per link") !=
          std::string::npos);
    CHECK(o.run.output.find("beyond what simulated time can hold") != std::string::npos);
    // No SystemC chatter before the message.
    CHECK(o.run.output.find("Simulation stopped by user") == std::string::npos);
  }
  SECTION("a sharded matmul on 1 B/s links (was faster than real links)") {
    const auto o = run_step("configs/experiments/sharded-matmul-v5e-2x4.yaml --set pod.link_bandwidth=1", dir / "sm");
    INFO(o.run.output);
    check_exit_3_with_reason(o.run);
    CHECK(o.run.output.find("sc_stop has already been called") == std::string::npos);
  }
  SECTION("a link latency of 1e8 s (was a 1 us step): out of the chip's range, located") {
    const auto o = run_step("configs/experiments/allgather-ring-v5e-16.yaml --set pod.link_latency=1e8", dir / "lat");
    INFO(o.run.output);
    CHECK(o.run.status == 2);
    CHECK(o.run.output.find("error: --set pod.link_latency=1e8: pod.link_latency: value 1e8 is out of range: expected "
                            "between 0 and 0.01 s") != std::string::npos);
  }
}

TEST_CASE("time range: link bandwidth 1e-30 .. 1e15 B/s, every point plausible or exit 3", "[app][time]") {
  const TempDir dir("time-links");
  // A 1 MiB all-gather over the 16-chip ring: every chip receives 15/16 of
  // the bytes, through at most 4 links (the closed-form floor, whatever the
  // algorithm).
  const double bytes = 1 << 20, chips = 16, links = 4;
  int plausible = 0;
  for (int e = -30; e <= 15; e += 5) {
    const double bw = std::pow(10.0, e);
    std::ostringstream set;
    set << " --set workload.bytes=1048576 --set pod.link_bandwidth=" << bw;
    const auto o = run_step("configs/experiments/allgather-ring-v5e-16.yaml" + set.str(), dir / std::to_string(e + 30));
    INFO("link bandwidth " << bw << " B/s\n" << o.run.output);
    if (o.run.status == 0) {
      ++plausible;
      CHECK(o.step_s >= bytes * (chips - 1) / chips / (links * bw));
    } else {
      check_exit_3_with_reason(o.run);
    }
  }
  CHECK(plausible >= 3);  // 1e5 B/s and up run to the end
}

TEST_CASE("time range: HBM bandwidth 1e-30 .. 1e15 B/s, every point plausible or exit 3", "[app][time]") {
  const TempDir dir("time-hbm");
  // A 512^3 BF16 matmul reads A and B and writes C at least once.
  const double n = 512, bytes = 3 * n * n * 2;
  int plausible = 0;
  for (const char* fidelity : {"kernel", "tile"}) {
    for (int e = -30; e <= 15; e += 5) {
      const double bw = std::pow(10.0, e);
      const std::string chip = chip_with_hbm_bandwidth(dir, bw);
      const auto o =
          run_step("configs/experiments/matmul-v4.yaml --set chip=" + chip +
                       " --set workload.m=512 --set workload.k=512 --set workload.n=512 --set fidelity=" + fidelity,
                   dir / (std::string(fidelity) + std::to_string(e + 30)));
      INFO(fidelity << " fidelity, HBM bandwidth " << bw << " B/s\n" << o.run.output);
      if (o.run.status == 0) {
        ++plausible;
        CHECK(o.step_s >= bytes / bw);
      } else {
        check_exit_3_with_reason(o.run);
      }
    }
  }
  CHECK(plausible >= 4);
}

}  // namespace test_time_range
