// The bad-input catalogue: one case per way a user can be wrong, each run
// through the real binary as a user would. Every case asserts the exit
// status, that the message names file:line:column (or the --set it came
// from) and the key path, what it says, that nothing crashed, and that no
// output file was left behind, half-written or not. Bad input is exit 2 and
// also fails `tpusim validate` with the same message; a simulated system
// that cannot do the job (does not fit in HBM) is exit 3 and its message
// says what does not fit (it is about the system, not a line of the file).
// The first cases live in test_bad_input.cpp; docs/hardening.md lists all.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "cli_runner.h"

using testing_cli::run_tpusim;
namespace fs = std::filesystem;

namespace {

struct BadCase {
  const char* mistake;   // the way the user is wrong
  const char* command;   // "run FILE ..." or "sweep FILE ..." (paths from the source dir)
  int status;            // 2 bad input, 3 the simulated system fails
  const char* location;  // expected "file:line:column:" (or "--set ...:") prefix, "" for exit 3
  const char* key_path;  // expected "key.path:" after the location, "" when the whole document is wrong
  const char* says;
  const char* validate_says = nullptr;  // what `tpusim validate` says instead, when it differs
};

const BadCase kCases[] = {
    // Files that are not experiments at all.
    {"an empty file", "run tests/data/bad/empty.yaml", 2, "tests/data/bad/empty.yaml:1:1:", "",
     "an experiment file must be a mapping", "cannot tell what this file is"},
    {"a list instead of a mapping", "run tests/data/bad/not_mapping.yaml", 2, "tests/data/bad/not_mapping.yaml:1:1:",
     "", "an experiment file must be a mapping", "cannot tell what this file is"},
    {"a key given twice (YAML would silently keep one)", "run tests/data/bad/duplicate_key.yaml", 2,
     "tests/data/bad/duplicate_key.yaml:8:3:", "workload.m:", "duplicate key 'm' (first given at line 5)"},
    {"an alias inside the node it names", "run tests/data/bad/alias_cycle.yaml", 2,
     "tests/data/bad/alias_cycle.yaml:8:10:", "workload.block.bn:", "an alias refers to a node that contains it"},
    {"aliases that expand to millions of values", "run tests/data/bad/alias_bomb.yaml", 2,
     "tests/data/bad/alias_bomb.yaml:8:4:", "f:", "aliases expand this document to more than 1000000 values"},
    // Wrong types and values.
    {"a word where a boolean goes", "run tests/data/bad/wrong_bool.yaml", 2,
     "tests/data/bad/wrong_bool.yaml:3:13:", "functional:", "expected true or false, got 'yes please'"},
    {"a word that is not one of the choices", "run tests/data/bad/replicas_value.yaml", 2,
     "tests/data/bad/replicas_value.yaml:3:11:", "replicas:",
     "expected auto (one chip per group of identical replicas"},
    {"a limit out of range", "run tests/data/bad/limits_time.yaml", 2, "tests/data/bad/limits_time.yaml:3:24:",
     "limits.max_sim_time:", "expected simulated seconds between 1e-12 and 1e6"},
    {"an event limit of zero", "run tests/data/bad/limits_events.yaml", 2,
     "tests/data/bad/limits_events.yaml:4:15:", "limits.max_events:", "expected at least 1 event, got 0"},
    {"an unknown collective", "run tests/data/bad/collective_op.yaml", 2,
     "tests/data/bad/collective_op.yaml:6:7:", "workload.op:", "unknown collective 'allreduce'"},
    // Chip and pod files.
    {"an unknown pod file", "run tests/data/bad/unknown_pod.yaml", 2,
     "tests/data/bad/unknown_pod.yaml:3:6:", "pod:", "unknown pod 'v4-4x4x9'; did you mean"},
    {"a chip file with a bad value (named in the chip file)", "run tests/data/bad/bad_chip_file.yaml", 2,
     "tests/data/bad/chips/broken-chip.yaml:7:9:", "mxu.rows:", "expected an integer, got '128.5'"},
    // Topology and mesh.
    {"an unknown topology", "run tests/data/bad/unknown_topology.yaml", 2,
     "tests/data/bad/unknown_topology.yaml:4:13:", "pod.topology:", "unknown topology 'torus4d'"},
    {"a shape of the wrong rank for the topology", "run tests/data/bad/shape_rank.yaml", 2,
     "tests/data/bad/shape_rank.yaml:5:10:", "pod.shape:", "a torus2d needs a list of 2 axis sizes"},
    {"more chips than supported", "run tests/data/bad/too_many_chips.yaml", 2,
     "tests/data/bad/too_many_chips.yaml:5:10:", "pod.shape:", "chips are supported, got 16777216"},
    {"wraparound flags that do not match the axes", "run tests/data/bad/wraparound_length.yaml", 2,
     "tests/data/bad/wraparound_length.yaml:6:15:", "pod.wraparound:", "a list of 3 booleans"},
    {"mesh axes that do not multiply to the chip count", "run tests/data/bad/mesh_product.yaml", 2,
     "tests/data/bad/mesh_product.yaml:6:7:", "mesh:", "mesh axes multiply to 8 chips but the pod has 16"},
    {"a mesh axis that does not map onto whole physical axes", "run tests/data/bad/mesh_split.yaml", 2,
     "tests/data/bad/mesh_split.yaml:6:14:", "mesh.data:", "does not map onto whole physical axes"},
    // Shardings and parallelism.
    {"a sharding that does not divide the dimension", "run tests/data/bad/shard_indivisible.yaml", 2,
     "tests/data/bad/shard_indivisible.yaml:9:3:", "workload:", "1001 is not divisible by 4"},
    {"a mesh axis no parallelism uses (degrees vs chips)", "run tests/data/bad/train_unused_axis.yaml", 2,
     "tests/data/bad/train_unused_axis.yaml:12:16:", "workload.parallelism:",
     "data x tensor x pipeline = 2 x 1 x 1 = 2 chips, but the pod has 8"},
    {"a parallel degree no mesh axis has", "run tests/data/bad/train_degree.yaml", 2,
     "tests/data/bad/train_degree.yaml:12:37:", "workload.parallelism.tensor:", "no unused mesh axis has 3 chips"},
    {"pipeline stages that do not divide the layers", "run tests/data/bad/train_stages.yaml", 2,
     "tests/data/bad/train_stages.yaml:10:27:", "workload.parallelism.pipeline:",
     "4 pipeline stages do not divide the 6 Transformer blocks"},
    {"microbatches that do not divide the batch", "run tests/data/bad/train_microbatches.yaml", 2,
     "tests/data/bad/train_microbatches.yaml:10:47:", "workload.parallelism.microbatches:",
     "3 microbatches do not divide the per-replica batch of 16"},
    {"a global batch that does not divide over data parallelism", "run tests/data/bad/train_batch.yaml", 2,
     "tests/data/bad/train_batch.yaml:8:17:", "workload.global_batch:",
     "global_batch 10 does not divide over data parallelism of 4"},
    {"attention heads that do not split over tensor parallelism", "run tests/data/bad/train_heads.yaml", 2,
     "tests/data/bad/train_heads.yaml:7:74:", "workload.model.heads:",
     "10 does not split evenly over tensor parallelism of 4"},
    // Memory that does not fit: the simulated system fails (exit 3).
    {"training state that does not fit in HBM", "run tests/data/bad/train_oom.yaml", 3, "", "",
     "does not fit in HBM: chip 0"},
    {"matmul operands that do not fit in HBM", "run tests/data/bad/matmul_oom.yaml", 3, "", "",
     "does not fit: A, B and C need 25.8 GB of HBM but teach-8x8 has 1.07 GB"},
    // --set overrides.
    {"a --set path that does not exist", "run configs/experiments/matmul-v4.yaml --set limits.max_events=5", 2,
     "--set limits.max_events=5:", "limits.max_events:", "the path does not exist: no key 'limits'"},
    {"a --set value that is not YAML", "run configs/experiments/matmul-v4.yaml --set workload.m=[1,", 2,
     "--set workload.m=[1,:", "workload.m:", "value is not valid YAML"},
    {"a --set value with a key twice",
     "run configs/experiments/allreduce-v4-4x4x4.yaml --set \"pod={topology: ring, shape: [4], shape: [8]}\"", 2,
     "--set pod={topology: ring, shape: [4], shape: [8]}:", "pod.shape:", "duplicate key 'shape'"},
    {"a --set value of the wrong type", "run configs/experiments/matmul-v4.yaml --set workload.k=lots", 2,
     "--set workload.k=lots:", "workload.k:", "expected a number, got 'lots'"},
    // Sweeps.
    {"a misspelt sweep key", "sweep tests/data/bad/sweep_unknown_key.yaml", 2,
     "tests/data/bad/sweep_unknown_key.yaml:4:1:", "sweeps:", "did you mean 'sweep'?"},
    {"a swept value that makes a point invalid", "sweep tests/data/bad/sweep_bad_point.yaml", 2,
     "tests/data/bad/sweep_bad_point.yaml:5:25:", "sweep.pod.shape[2]:", "point p002 (pod.shape=[0])"},
};

// Every regular file under `dir` (none when it does not exist).
std::vector<std::string> files_under(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec))
    if (e.is_regular_file()) out.push_back(e.path().string());
  return out;
}

}  // namespace

TEST_CASE("bad-input catalogue: exit status, located message, nothing written", "[app][bad-input]") {
  for (const auto& c : kCases) {
    DYNAMIC_SECTION(c.mistake) {
      const std::string out_dir = "build-test-out/catalogue/" + std::to_string(&c - kCases);
      const fs::path out_abs = fs::path(TPUSIM_SOURCE_DIR) / out_dir;
      fs::remove_all(out_abs);
      const auto r = run_tpusim(std::string(c.command) + " --out " + out_dir);
      INFO(c.mistake << "\n$ tpusim " << c.command << "\n" << r.output);
      CHECK(r.status == c.status);
      if (c.status == 2) {
        // "error: LOCATION: KEY.PATH: message" on one line.
        const std::string head = std::string("error: ") + c.location + " " + c.key_path;
        CHECK(r.output.find(head) != std::string::npos);
      } else {
        CHECK(r.output.find("simulation failed: ") != std::string::npos);
      }
      CHECK(r.output.find(c.says) != std::string::npos);
      for (const char* crash : {"terminate", "Aborted", "internal error", "Segmentation", "what():"})
        CHECK(r.output.find(crash) == std::string::npos);
      CHECK(files_under(out_abs).empty());
    }
  }
}

TEST_CASE("bad-input catalogue: validate reports what run reports", "[app][bad-input]") {
  for (const auto& c : kCases) {
    const std::string cmd = c.command;
    if (c.status != 2 || cmd.find("--set") != std::string::npos) continue;
    DYNAMIC_SECTION(c.mistake) {
      const std::string file = cmd.substr(cmd.find(' ') + 1);
      const auto r = run_tpusim("validate " + file);
      INFO(c.mistake << "\n$ tpusim validate " << file << "\n" << r.output);
      CHECK(r.status == 2);
      CHECK(r.output.find(std::string("error: ") + c.location + " " + c.key_path) != std::string::npos);
      CHECK(r.output.find(c.validate_says ? c.validate_says : c.says) != std::string::npos);
    }
  }
}

TEST_CASE("bad-input catalogue: a failed run keeps an earlier report whole", "[app][bad-input]") {
  // A good run writes report.json; a later run into the same folder that
  // fails (bad input, or a system that does not fit) leaves it as it was.
  const std::string out_dir = "build-test-out/catalogue/keep";
  const fs::path report = fs::path(TPUSIM_SOURCE_DIR) / out_dir / "report.json";
  fs::remove_all(report.parent_path());
  const auto good = run_tpusim("run configs/experiments/matmul-teach.yaml --out " + out_dir);
  REQUIRE(good.status == 0);
  const auto before = fs::file_size(report);
  const auto files_before = files_under(report.parent_path());
  CHECK(run_tpusim("run tests/data/bad/duplicate_key.yaml --out " + out_dir).status == 2);
  CHECK(run_tpusim("run tests/data/bad/matmul_oom.yaml --out " + out_dir).status == 3);
  CHECK(fs::file_size(report) == before);
  CHECK(files_under(report.parent_path()) == files_before);
}
