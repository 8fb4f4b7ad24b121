// Determinism: the same experiment run twice gives a byte-identical
// report.json apart from the host's wall-clock and memory fields
// (wall_time_s, events_per_s, peak_rss_bytes), for every workload kind, and
// a sweep run twice with -j 2 (and once with -j 1) writes the same
// sweep.csv, summary.json and per-point reports.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "host_fields.h"

namespace test_determinism {

using testing_cli::run_tpusim;
namespace fs = std::filesystem;

namespace {

const fs::path kOut = fs::path(TPUSIM_SOURCE_DIR) / "build-test-out" / "determinism";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The file without the lines of host-dependent fields (report.json and
// summary.json are written one field per line).
std::string without_host_fields(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    bool host = false;
    for (const char* f : testing_cli::kHostFields)
      host = host || line.find('"' + std::string(f) + "\":") != std::string::npos;
    if (!host) out += line + "\n";
  }
  return out;
}

// Runs `args` twice into fresh folders; returns the two folders.
std::pair<fs::path, fs::path> run_twice(const std::string& name, const std::string& command) {
  std::pair<fs::path, fs::path> dirs{kOut / (name + "-1"), kOut / (name + "-2")};
  for (const fs::path& d : {dirs.first, dirs.second}) {
    fs::remove_all(d);
    const auto r = run_tpusim(command + " --out " + d.string());
    INFO("$ tpusim " << command << "\n" << r.output);
    REQUIRE(r.status == 0);
  }
  return dirs;
}

void check_same(const fs::path& a, const fs::path& b) {
  INFO(a.string() << " vs " << b.string());
  const std::string x = slurp(a), y = slurp(b);
  CHECK(x.size() > 100);
  CHECK(without_host_fields(x) == without_host_fields(y));
}

struct KindCase {
  const char* kind;
  const char* command;
};

const KindCase kKinds[] = {
    {"matmul", "run configs/experiments/matmul-teach.yaml --set fidelity=pe --trace"},
    {"matmul-functional", "run configs/experiments/matmul-teach.yaml --set functional=true"},
    {"collective", "run configs/experiments/allgather-ring-v5e-16.yaml"},
    {"sharded_matmul",
     "run configs/experiments/sharded-matmul-v5e-2x4.yaml --set workload.collective_matmul=true --trace"},
    {"train-data", "run configs/experiments/train-dp-v5e.yaml"},
    {"train-pipeline", "run configs/experiments/train-pp-v5e.yaml --trace"},
    {"synthetic",
     "run configs/sweeps/amdahl-synthetic.base.yaml --set pod.shape=[4] --set workload.units=40 "
     "--set 'workload.unit={m: 512, k: 512, n: 512}'"},
    {"conv", "run configs/experiments/conv-resnet18-head-v4.yaml --set workload.batch=1 --trace"},
    {"maxtext", "run configs/experiments/maxtext-llama3.1-70b-v6e-64.yaml"},
    {"cluster", "run configs/experiments/cluster-two-trainers-v5e.yaml"},
};

}  // namespace

TEST_CASE("determinism: every workload kind gives the same report.json twice", "[app][determinism]") {
  for (const auto& k : kKinds) {
    DYNAMIC_SECTION(k.kind) {
      const auto [a, b] = run_twice(k.kind, k.command);
      check_same(a / "report.json", b / "report.json");
      if (std::string(k.command).find("--trace") != std::string::npos) check_same(a / "trace.json", b / "trace.json");
    }
  }
}

TEST_CASE("determinism: a sweep with -j 2 writes the same results twice, and as -j 1 does",
          "[app][determinism][sweep]") {
  // A small strong-scaling sweep of the synthetic Amdahl workload.
  fs::create_directories(kOut);
  const fs::path sweep = kOut / "small-sweep.yaml";
  {
    std::ofstream f(sweep);
    f << "name: small-sweep\n"
      << "experiment: " << (fs::path(TPUSIM_SOURCE_DIR) / "configs/sweeps/amdahl-synthetic.base.yaml").string() << "\n"
      << "scaling: strong\n"
      << "plot: false\n"
      << "set: {workload.units: 40, workload.unit: {m: 512, k: 512, n: 512}}\n"
      << "sweep:\n  pod.shape: [[1], [2], [4], [5]]\n";
  }
  const auto [a, b] = run_twice("sweep-j2", "sweep " + sweep.string() + " -j 2");
  const fs::path c = kOut / "sweep-j1";
  fs::remove_all(c);
  REQUIRE(run_tpusim("sweep " + sweep.string() + " -j 1 --out " + c.string()).status == 0);
  check_same(a / "summary.json", b / "summary.json");  // (its execution section records -j)
  for (const fs::path& other : {b, c}) {
    CHECK(slurp(a / "sweep.csv") == slurp(other / "sweep.csv"));
    int points = 0;
    for (const auto& e : fs::directory_iterator(a / "points")) {
      check_same(e.path() / "report.json", other / "points" / e.path().filename() / "report.json");
      ++points;
    }
    CHECK(points == 4);
  }
}

}  // namespace test_determinism
