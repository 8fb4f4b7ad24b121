// Sweep files: how axes expand into points (product, zip, per_chip), and the
// bad-input catalogue: every mistake is a ConfigError located in the sweep
// file (file:line:column and key path), including a value that makes one
// point's experiment invalid.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "sim/error.h"
#include "sweep/points.h"
#include "sweep/spec.h"

namespace test_sweep_spec {

namespace fs = std::filesystem;

namespace {

const std::string kBase = std::string(TPUSIM_SOURCE_DIR) + "/configs/sweeps/amdahl-synthetic.base.yaml";

// This process's scratch folder, removed when the process ends.
fs::path scratch() {
  static const struct Scratch {
    fs::path dir = fs::temp_directory_path() / ("tpusim-test-sweep-spec-" + std::to_string(::getpid()));
    ~Scratch() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } s;
  fs::create_directories(s.dir);
  return s.dir;
}

// Writes a sweep file in the scratch folder; returns its path.
std::string sweep_file(const std::string& name, const std::string& body) {
  const fs::path p = scratch() / name;
  std::ofstream(p) << "experiment: " << kBase << "\n" << body;
  return p.string();
}

std::vector<sweep::SweepPoint> points_of(const std::string& body) {
  return sweep::expand_sweep(sweep::load_sweep_spec(sweep_file("s.yaml", body)));
}

}  // namespace

TEST_CASE("product sweeps: first axis slowest, every combination", "[workloads][sweep]") {
  auto pts = points_of(
      "set: {workload.units: 100}\n"
      "sweep:\n"
      "  pod.shape: [[1], [2], [5]]\n"
      "  workload.serial_fraction: [0.1, 0.2]\n");
  REQUIRE(pts.size() == 6);
  CHECK(pts[0].id == "p000");
  CHECK(pts[5].id == "p005");
  CHECK(pts[0].overrides ==
        std::vector<std::string>{"workload.units=100", "pod.shape=[1]", "workload.serial_fraction=0.1"});
  CHECK(pts[1].values == std::vector<std::string>{"[1]", "0.2"});
  CHECK(pts[2].values == std::vector<std::string>{"[2]", "0.1"});
  CHECK(pts[5].values == std::vector<std::string>{"[5]", "0.2"});
  CHECK(pts[0].chips == 1);
  CHECK(pts[2].chips == 2);
  CHECK(pts[5].chips == 5);
}

TEST_CASE("zip sweeps pair the i-th values and per_chip scales with the pod", "[workloads][sweep]") {
  auto pts = points_of(
      "combine: zip\n"
      "per_chip: {workload.units: 30}\n"
      "sweep:\n"
      "  pod.shape: [[1], [2], [4]]\n"
      "  workload.serial_fraction: [0.1, 0.2, 0.5]\n");
  REQUIRE(pts.size() == 3);
  CHECK(pts[1].overrides ==
        std::vector<std::string>{"pod.shape=[2]", "workload.serial_fraction=0.2", "workload.units=60"});
  CHECK(pts[2].overrides.back() == "workload.units=120");
  CHECK(pts[2].chips == 4);
}

TEST_CASE("whole mappings can be swept and chips follow them", "[workloads][sweep]") {
  auto pts = points_of(
      "sweep:\n"
      "  pod:\n"
      "    - {topology: ring, shape: [3], wraparound: true}\n"
      "    - {topology: torus2d, shape: [2, 3], wraparound: false}\n");
  REQUIRE(pts.size() == 2);
  CHECK(pts[0].overrides[0] == "pod={topology: ring, shape: [3], wraparound: true}");
  CHECK(pts[0].chips == 3);
  CHECK(pts[1].chips == 6);
}

namespace {

struct BadSweep {
  const char* body;
  const char* location;  // "line:column:" after the file name
  const char* key_path;
  const char* says;
};

const BadSweep kBad[] = {
    {"sweep: {pod.shape: [[1]]}\nscalling: strong\n", ":3:1:", "scalling:", "did you mean 'scaling'?"},
    {"scaling: strogn\nsweep: {pod.shape: [[1]]}\n", ":2:10:", "scaling:", "did you mean 'strong'?"},
    {"combine: zip\nsweep:\n  pod.shape: [[1], [2]]\n  workload.units: [10]\n",
     ":5:3:", "sweep.workload.units:", "zip needs lists of equal length"},
    {"sweep:\n  pod.shape: []\n", ":3:14:", "sweep.pod.shape:", "non-empty list"},
    {"sweep: {}\n", ":2:8:", "sweep:", "nothing to sweep"},
    {"set: {workload.units: 10}\nsweep: {workload.units: [10, 20]}\n",
     ":3:25:", "sweep.workload.units:", "already given"},
    {"per_chip: {mesh.x: -1}\nsweep: {pod.shape: [[1]]}\n",
     ":2:20:", "per_chip.mesh.x:", "value -1 is out of range: expected > 0"},
    // One point's experiment is invalid: the blame is on that value.
    {"sweep:\n  pod.shape: [[1], [2, 2]]\n",
     ":3:20:", "sweep.pod.shape[1]:", "point p001 (pod.shape=[2, 2]) is not a valid experiment"},
    {"sweep:\n  workload.unitz: [1, 2]\n", ":3:20:", "sweep.workload.unitz[0]:", "did you mean 'units' or 'unit'?"},
    {"sweep:\n  wrkload.units: [1, 2]\n", ":3:19:", "sweep.wrkload.units[0]:", "did you mean 'workload'?"},
    {"set: {workload.serial_fraction: 2}\nsweep: {pod.shape: [[1]]}\n",
     ":2:33:", "set.workload.serial_fraction:", "out of range"},
    // Published figures: keyed by the swept values, in the metric's range, one swept key.
    {"sweep: {pod.slices: [1, 2, 4]}\npublished: {source: s, points: {1: 0.6, 3: 0.5}}\n",
     ":3:41:", "published.points.3:", "no point has pod.slices=3; the swept values are 1, 2, 4"},
    {"sweep: {pod.slices: [1, 2]}\npublished: {source: s, points: {1: 61.1}}\n",
     ":3:36:", "published.points.1:", "out of range"},
    {"sweep: {pod.slices: [1, 2]}\npublished: {metric: mfu, points: {1: 0.6}}\n",
     ":3:12:", "published.source:", "missing required key"},
    {"sweep: {pod.slices: [1, 2]}\npublished: {metric: step_time, source: s, points: {1: 3}}\n",
     ":3:21:", "published.metric:", "did you mean 'step_time_s'?"},
    {"sweep: {pod.slices: [1, 2], workload.units: [1, 2]}\npublished: {source: s, points: {1: 0.6}}\n",
     ":3:12:", "published:", "published figures need a sweep of one key path; this sweep varies 2"},
};

}  // namespace

TEST_CASE("bad sweep files: located messages", "[workloads][sweep][bad-input]") {
  int i = 0;
  for (const auto& c : kBad) {
    const std::string path = sweep_file("bad" + std::to_string(i++) + ".yaml", c.body);
    INFO(c.body);
    try {
      sweep::expand_sweep(sweep::load_sweep_spec(path));
      FAIL("expected a ConfigError");
    } catch (const sim::ConfigError& e) {
      const std::string msg = e.what();
      INFO(msg);
      CHECK(msg.rfind(path + c.location, 0) == 0);
      CHECK(msg.find(c.key_path) != std::string::npos);
      CHECK(msg.find(c.says) != std::string::npos);
    }
  }
}

TEST_CASE("published figures are read against the swept values", "[workloads][sweep]") {
  const auto spec = sweep::load_sweep_spec(
      sweep_file("published.yaml",
                 "sweep: {pod.slices: [1, 2, 4]}\n"
                 "published: {metric: step_time_s, source: \"a paper, table 2\", points: {4: 10.5, 1: 9.75}}\n"));
  CHECK(spec.published.metric == sweep::PublishedMetric::step_time_s);
  CHECK(spec.published.source == "a paper, table 2");
  REQUIRE(spec.published.points.size() == 2);
  CHECK(spec.published.points[0].at == "4");  // in file order
  CHECK(spec.published.points[0].value == 10.5);
  CHECK(spec.published.points[1].at == "1");
  // Absent: no points, nothing compared.
  CHECK(sweep::load_sweep_spec(sweep_file("plain.yaml", "sweep: {pod.slices: [1, 2]}\n")).published.points.empty());
}

TEST_CASE("a sweep names an experiment that exists", "[workloads][sweep][bad-input]") {
  const fs::path dir = scratch();
  std::ofstream(dir / "missing.yaml") << "experiment: nowhere.yaml\nsweep: {pod.shape: [[1]]}\n";
  try {
    sweep::load_sweep_spec((dir / "missing.yaml").string());
    FAIL("expected a ConfigError");
  } catch (const sim::ConfigError& e) {
    CHECK(std::string(e.what()).find("missing.yaml:1:13: experiment: no experiment file") != std::string::npos);
  }
  CHECK_THROWS_AS(sweep::load_sweep_spec((dir / "absent.yaml").string()), sim::ConfigError);
}

}  // namespace test_sweep_spec
