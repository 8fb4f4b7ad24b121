// Bad `kind: train` input: exit 2 and one message naming file:line:column,
// the key path and what is wrong, no report. Each case changes one thing in
// a valid 2 x 2 x 2 data x tensor x pipeline experiment.
#include <catch2/catch.hpp>

#include <unistd.h>
#include <filesystem>
#include <fstream>

#include "app/cli_runner.h"
#include "workloads/experiment_fixture.h"

namespace test_config {

namespace {

namespace fs = std::filesystem;

const std::string kValid = R"(chip: tpu-v4
pod: {topology: torus3d, shape: [2, 2, 2], wraparound: false}
mesh: {data: 2, model: 2, pipe: 2}
workload:
  kind: train
  model: {type: transformer, layers: 4, d_model: 256, d_ff: 1024, heads: 4, head_dim: 64, seq_len: 64, vocab: 1024}
  global_batch: 16
  parallelism: {data: data, tensor: model, pipeline: pipe, microbatches: 4, schedule: 1f1b}
  optimizer: adam
)";

struct BadCase {
  const char* name;
  const char* from;  // replaced in kValid...
  const char* to;    // ...by this; the message is located at the start of `at` in the result
  const char* at;
  const char* key_path;
  const char* says;
};

const BadCase kCases[] = {
    {"stages-do-not-divide-layers", "layers: 4", "layers: 3", "pipe,",
     "workload.parallelism.pipeline:", "2 pipeline stages do not divide the 3 Transformer blocks"},
    {"microbatches-do-not-divide-batch", "microbatches: 4", "microbatches: 3", "3, schedule",
     "workload.parallelism.microbatches:", "3 microbatches do not divide the per-replica batch of 8"},
    {"degrees-do-not-multiply-to-chips", "pipeline: pipe, ", "", "{data: data, tensor",
     "workload.parallelism:", "2 x 2 x 1 = 4 chips, but the pod has 8: mesh axis 'pipe'"},
    {"unknown-axis", "tensor: model", "tensor: modl", "modl", "workload.parallelism.tensor:",
     "'modl' is not a mesh axis; the mesh has data 2, model 2, pipe 2 (did you mean 'model'?)"},
    {"axis-used-twice", "pipeline: pipe", "pipeline: data", "data, microbatches",
     "workload.parallelism.pipeline:", "mesh axis 'data' is already used by data parallelism"},
    {"degree-without-an-axis", "tensor: model", "tensor: 3", "3, pipeline",
     "workload.parallelism.tensor:", "no unused mesh axis has 3 chips"},
    {"ambiguous-degree", "data: data, tensor: model", "data: 2, tensor: 2", "2, tensor",
     "workload.parallelism.data:", "ambiguous: mesh axes 'data' and 'model' both have 2 chips"},
    {"batch-does-not-divide-over-data", "global_batch: 16", "global_batch: 15", "15",
     "workload.global_batch:", "global_batch 15 does not divide over data parallelism of 2"},
    {"heads-do-not-split", "heads: 4", "heads: 3", "3, head_dim",
     "workload.model.heads:", "3 does not split evenly over tensor parallelism of 2"},
    {"unknown-schedule", "schedule: 1f1b", "schedule: 1f1f", "1f1f", "workload.parallelism.schedule:",
     "unknown pipeline schedule '1f1f'; expected one of: gpipe (all forwards, then all backwards), 1f1b"},
    {"unknown-optimizer", "optimizer: adam", "optimizer: adamw", "adamw", "workload.optimizer:",
     "unknown optimizer 'adamw'; expected one of: adam (two moments per parameter), sgd (no moments); did you mean "
     "'adam'?"},
    {"virtual-stages-do-not-divide-a-stage", "schedule: 1f1b", "schedule: interleaved, virtual_stages: 3", "3}",
     "workload.parallelism.virtual_stages:", "3 virtual stages do not divide the 2 layers of each pipeline stage"},
    {"interleaved-microbatches-not-a-multiple-of-stages", "microbatches: 4, schedule: 1f1b",
     "microbatches: 1, schedule: interleaved, virtual_stages: 2", "1, schedule",
     "workload.parallelism.microbatches:", "1 microbatches are not a multiple of the 2 pipeline stages"},
    {"virtual-stages-without-interleaving", "schedule: 1f1b", "schedule: 1f1b, virtual_stages: 2", "2}\n  optimizer",
     "workload.parallelism.virtual_stages:", "2 virtual stages need schedule: interleaved (the schedule is 1f1b)"},
    {"interleaved-without-virtual-stages", "schedule: 1f1b", "schedule: interleaved", "interleaved",
     "workload.parallelism.schedule:", "the interleaved schedule needs virtual_stages of 2 or more"},
    {"parallelism-typo", "microbatches: 4", "microbatch: 4",
     "microbatch:", "workload.parallelism.microbatch:", "did you mean 'microbatches'?"},
};

// 1-based line and column of the first occurrence of `what`.
std::string location_of(const std::string& text, const std::string& what) {
  const std::size_t at = text.find(what);
  REQUIRE(at != std::string::npos);
  const std::size_t line_start = text.rfind('\n', at);
  const std::size_t line = 1 + std::count(text.begin(), text.begin() + at, '\n');
  const std::size_t column = at - (line_start == std::string::npos ? 0 : line_start + 1) + 1;
  return std::to_string(line) + ":" + std::to_string(column) + ":";
}

}  // namespace

TEST_CASE("bad train experiments: located message, exit 2, no report", "[workloads][train]") {
  const fs::path dir = fs::path(testing_workloads::write_yaml("valid", kValid)).parent_path();
  {
    const fs::path valid = dir / "valid.yaml";
    const auto r = testing_cli::run_tpusim("validate " + valid.string());
    INFO(r.output);
    REQUIRE(r.status == 0);
  }
  for (const auto& c : kCases) {
    std::string text = kValid;
    const std::size_t at = text.find(c.from);
    REQUIRE(at != std::string::npos);
    text.replace(at, std::string(c.from).size(), c.to);
    const fs::path file = dir / (std::string(c.name) + ".yaml");
    std::ofstream(file) << text;
    const fs::path out = dir / (std::string(c.name) + ".out");
    const auto r = testing_cli::run_tpusim("run " + file.string() + " --out " + out.string());
    INFO(c.name << " said: " << r.output);
    CHECK(r.status == 2);
    CHECK(r.output.find(file.string() + ":" + location_of(text, c.at) + " " + c.key_path) != std::string::npos);
    CHECK(r.output.find(c.says) != std::string::npos);
    CHECK_FALSE(fs::exists(out / "report.json"));
  }
}

}  // namespace test_config
