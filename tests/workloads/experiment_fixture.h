#pragma once
// Experiments written by a test and run in-process, the way `tpusim run`
// would load and run them.
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "nominal_chip.h"
#include "workloads/experiment.h"

namespace testing_workloads {

// Writes `text` to <tmp>/tpusim-test-train-<pid>/<name>.yaml and returns the path.
inline std::string write_yaml(const std::string& name, const std::string& text) {
  namespace fs = std::filesystem;
  // Removed when the test program exits.
  struct Folder {
    fs::path path;
    ~Folder() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  };
  static const Folder dir_of_run{fs::temp_directory_path() / ("tpusim-test-train-" + std::to_string(getpid()))};
  const fs::path& dir = dir_of_run.path;
  fs::create_directories(dir);
  const fs::path p = dir / (name + ".yaml");
  std::ofstream(p) << text;
  return p.string();
}

// 8 v4 chips on a ring, data parallel: an MLP of four 2048 x 2048 layers,
// 16384 samples, SGD (the data-parallel and straggler tests' step).
inline std::string dp_mlp_ring_of_8() {
  return write_yaml("dp-mlp-ring-8", "chip: " + nominal_chip::chip("tpu-v4") + R"(
pod: {topology: ring, shape: [8]}
mesh: {data: 8}
workload:
  kind: train
  model: {type: mlp, widths: [2048, 2048, 2048, 2048, 2048]}
  global_batch: 16384
  parallelism: {data: data}
  optimizer: sgd
)");
}

inline nlohmann::json run(const std::string& path, const std::vector<std::string>& sets = {}) {
  auto exp = workloads::load_experiment(path, sets);
  return exp.workload->run(exp, {}).report;
}

}  // namespace testing_workloads
