// The host cost of a run, refused before it is built (runtime/run_budget.h):
// memory above limits.max_memory (default half the machine's) and PE-array
// cycles above limits.max_pe_cycles end the run with exit 3 and the
// estimate; the trace shows the simulated chips only; a model of 4096
// blocks that does not fit says so at once (no search quadratic in layers).
// A training step is refused while its programs are built, a trace of many
// chips counts their events, the resident size is checked between slices,
// and a matmul no chip could finish is not blamed on VMEM.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace test_run_budget {

using testing_cli::run_tpusim;
using testing_cli::TempDir;

namespace {

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in);
  return nlohmann::json::parse(in);
}

// The 1.3 B data-parallel step on 64 v4 chips, every chip simulated.
const std::string kPod64 =
    "run configs/experiments/train-dp-v4-1b.yaml --set 'pod={topology: torus3d, shape: [4, 4, 4], wraparound: "
    "true}' --set mesh.data=64 --set workload.global_batch=64 --set replicas=all";

}  // namespace

TEST_CASE("run budget: the memory estimate is within 4x of the measured peak RSS", "[app][budget]") {
  // Measured, independent of the estimate: the run's own peak RSS. Then a
  // limit a quarter of it must refuse the run (the estimate is not a wild
  // underestimate) and one 4x above it must let it run (nor a wild
  // overestimate).
  TempDir dir("budget-rss");
  const auto ok = run_tpusim(kPod64 + " --out " + dir / "a");
  INFO(ok.output);
  REQUIRE(ok.status == 0);
  const double rss = read_json(dir / "a/report.json")["simulator"]["peak_rss_bytes"].get<double>();
  REQUIRE(rss > 0);

  const auto low =
      run_tpusim(kPod64 + " --set 'limits={max_memory: " + std::to_string(rss / 4) + "}' --out " + dir / "b");
  INFO(low.output);
  CHECK(low.status == 3);
  CHECK(low.output.find("memory: the simulation would need about ") != std::string::npos);
  CHECK(low.output.find("64 chips simulated x ") != std::string::npos);
  CHECK(low.output.find("above limits.max_memory (") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "b/report.json"));

  const auto high =
      run_tpusim(kPod64 + " --set 'limits={max_memory: " + std::to_string(rss * 4) + "}' --out " + dir / "c");
  INFO(high.output);
  CHECK(high.status == 0);
}

TEST_CASE("run budget: explain mxu at pe fidelity refuses operands beyond memory, exit 3", "[app][budget]") {
  // A (10^6 x 10^6 BF16) alone is 2 TB: more than half of any machine this
  // runs on; it took 19.5 GB in seconds at 10^5 before the check.
  const auto r = run_tpusim("explain mxu --fidelity pe --m 1000000 --k 1000000 --n 1");
  INFO(r.output);
  CHECK(r.status == 3);
  CHECK(r.output.find("memory: explain mxu --fidelity pe would need about 2 TB (A, B and C: 2 TB)") !=
        std::string::npos);
}

TEST_CASE("run budget: fidelity pe above the PE-cycle budget is refused before it runs, exit 3", "[app][budget]") {
  // 32768^3 at pe took about 3 hours. Each MAC takes one PE one cycle, so
  // the PE cycles are at least m k n = 3.5e13, far above the default
  // budget (2e12, some ten minutes).
  TempDir dir("budget-pe");
  const auto r = run_tpusim(
      "run configs/experiments/matmul-v4.yaml --set fidelity=pe --set workload.m=32768 --set workload.k=32768 "
      "--set workload.n=32768 --out " +
      dir / "o");
  INFO(r.output);
  CHECK(r.status == 3);
  CHECK(r.output.find("PE budget: the simulation would simulate ") != std::string::npos);
  CHECK(r.output.find("above limits.max_pe_cycles (2000000000000)") != std::string::npos);
  // Raised budget, smaller shape: it runs.
  const auto small = run_tpusim(
      "run configs/experiments/matmul-v4.yaml --set fidelity=pe --set workload.m=256 --set workload.k=256 "
      "--set workload.n=256 --out " +
      dir / "p");
  INFO(small.output);
  CHECK(small.status == 0);
  const auto lowered = run_tpusim(
      "run configs/experiments/matmul-v4.yaml --set fidelity=pe --set workload.m=256 --set workload.k=256 "
      "--set workload.n=256 --set 'limits={max_pe_cycles: 1.0e+6}' --out " +
      dir / "q");
  INFO(lowered.output);
  // 256^3 = 1.7e7 MACs: at least that many PE cycles, above 1e6.
  CHECK(lowered.status == 3);
}

TEST_CASE("run budget: the trace shows the simulated chips only, with a note", "[app][budget][trace]") {
  // 64 chips, one simulated (they share one program): the trace had all 64.
  TempDir dir("budget-trace");
  const auto r = run_tpusim(
      "run configs/experiments/train-dp-v4-1b.yaml --set 'pod={topology: torus3d, shape: [4, 4, 4], wraparound: "
      "true}' --set mesh.data=64 --set workload.global_batch=64 --trace --out " +
      dir / "o");
  INFO(r.output);
  REQUIRE(r.status == 0);
  const nlohmann::json rep = read_json(dir / "o/report.json");
  const nlohmann::json trace = read_json(dir / "o/trace.json");
  std::set<int> pids;
  std::size_t events = 0;
  for (const auto& e : trace["traceEvents"]) {
    pids.insert(e["pid"].get<int>());
    if (e["ph"] == "X" || e["ph"] == "C") ++events;  // ops and counter samples
  }
  const int simulated = rep["simulator"]["chips_simulated"].get<int>();
  CHECK(simulated == 1);
  CHECK(pids.size() == std::size_t(simulated));
  CHECK(rep["simulator"]["trace"]["chips"] == simulated);
  CHECK(rep["simulator"]["trace"]["events"].get<std::size_t>() == events);
  CHECK(rep["simulator"]["trace"]["dropped"] == 0);
  CHECK(rep["simulator"]["trace"]["note"] ==
        "shows 1 of the 64 chips (each simulated chip stands for its replicas; see written)");
  CHECK(rep["simulator"]["trace"]["written"] == nlohmann::json::parse(R"([{"chip": 0, "represents": 64}])"));
}

TEST_CASE("run budget: 4096 blocks that do not fit say so at once, exit 3", "[app][budget]") {
  // The check runs before planning. A linear search of every layer's
  // parameters per matmul once made 16384 blocks take 40 s (O(L^2));
  // scripts/bench (plan) times 16384 blocks, the advice's pairs of levers
  // included, which this test's 4096 cost a quarter of.
  const auto r = run_tpusim("run configs/experiments/train-dp-v4-1b.yaml --set workload.model.layers=4096");
  INFO(r.output.substr(0, 2000));
  CHECK(r.status == 3);
  CHECK(r.output.find("does not fit in HBM: chip 0") != std::string::npos);
}

TEST_CASE("run budget: a training step too big to build stops while building, not after", "[app][budget]") {
  // GPT-3 175B on 1024 v4 chips builds 16 stage programs, 1,001,228 ops in
  // all (about 725 MB at 724 B an op); under a 100 MB limit it used to
  // build every one (2.15x the limit) before the estimate refused it.
  TempDir dir("budget-build");
  const auto r = run_tpusim(
      "run configs/experiments/train-gpt3-175b-v4-1024.yaml --set 'limits={max_memory: 1.0e+8}' --out " + dir / "o");
  INFO(r.output);
  CHECK(r.status == 3);
  const std::regex built("building the training step's programs would need about [^(]+\\(([0-9]+) ops built x 724 B");
  std::smatch m;
  REQUIRE(std::regex_search(r.output, m, built));
  const double ops = std::stod(m[1]);
  CHECK(ops * 724 > 1e8);      // past the limit when it stopped
  CHECK(ops < 1001228.0 / 2);  // and well before building everything
}

TEST_CASE("run budget: --trace-chips over every chip counts their events before the run", "[app][budget][trace]") {
  // 512 chips traced, one simulated: each traced chip writes its
  // representative's 1,376 ops, 704,512 events at 750 B, 528 MB (the run
  // itself peaks at 780 MB: the messages' events fill the trace to its
  // 1,000,000 cap); estimated from the simulated chip alone, such a trace
  // ran to exit 0 at 2.7 GB on 4096 chips under a 1 GB limit.
  const std::string pod =
      "run configs/experiments/train-dp-v4.yaml --set pod.shape=[8,8,8] --set pod.wraparound=true --set mesh.data=512 "
      "--set workload.global_batch=512 --set 'limits={max_memory: 5.0e+8}'";
  TempDir dir("budget-trace-chips");
  const auto all = run_tpusim(pod + " --trace-chips 0-511 --out " + dir / "a");
  INFO(all.output);
  CHECK(all.status == 3);
  CHECK(all.output.find("704512 trace events x 750 B") != std::string::npos);
  const auto one = run_tpusim(pod + " --trace-chips 0 --out " + dir / "b");
  INFO(one.output);
  CHECK(one.status == 0);
}

TEST_CASE("run budget: a run past max_memory stops inside the simulation, exit 3", "[app][budget]") {
  // The estimate of an 8192^3 matmul is well under 5 MB; the process itself
  // (SystemC and the loaded configs) is resident at more than that, so the
  // check between slices of simulated time is what stops it.
  TempDir dir("budget-rss-guard");
  const auto r =
      run_tpusim("run configs/experiments/matmul-v4.yaml --set 'limits={max_memory: 5.0e+6}' --out " + dir / "o");
  INFO(r.output);
  CHECK(r.status == 3);
  CHECK(r.output.find("memory: the simulation's host memory passed limits.max_memory (5 MB)") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "o/report.json"));
}

TEST_CASE("run budget: a chip too slow for any blocking says so, not that VMEM is too small", "[app][budget]") {
  // 1e-300 B/s: every blocking fits VMEM, and every estimate overflows.
  TempDir dir("budget-slow-chip");
  const auto r =
      run_tpusim("run configs/experiments/matmul-v4.yaml --set chip.hbm.bandwidth=1e-300 --out " + dir / "o");
  INFO(r.output);
  CHECK(r.status == 3);
  CHECK(r.output.find("has a finite time on this chip") != std::string::npos);
  CHECK(r.output.find("fits VMEM (") == std::string::npos);
}

}  // namespace test_run_budget
