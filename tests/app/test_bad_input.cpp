// The bad-input catalogue for single-chip experiments: every way a user can
// be wrong gets exit status 2, one message naming file:line:column and the
// key path, and no report on disk.
#include <catch2/catch.hpp>

#include <filesystem>

#include "cli_runner.h"

namespace test_bad_input {

using testing_cli::run_tpusim;

namespace {

struct BadCase {
  const char* file;
  const char* location;  // file:line:column prefix expected in the message
  const char* key_path;
  const char* says;
};

const BadCase kCases[] = {
    {"syntax.yaml", "syntax.yaml:6:4:", "", "YAML syntax error"},
    {"wrong_type.yaml", "wrong_type.yaml:5:6:", "workload.m:", "expected a number, got 'lots'"},
    {"negative.yaml", "negative.yaml:6:6:", "workload.k:", "value -3 is out of range: expected between 1 and 1048576"},
    {"zero.yaml", "zero.yaml:7:6:", "workload.n:", "value 0 is out of range"},
    {"unknown_key.yaml", "unknown_key.yaml:8:3:", "workload.blok:", "did you mean 'block'?"},
    {"top_level_typo.yaml", "top_level_typo.yaml:3:1:", "fidelty:", "did you mean 'fidelity'?"},
    {"unknown_chip.yaml", "unknown_chip.yaml:2:7:", "chip:", "unknown chip 'tpu-v4x'; did you mean 'tpu-v4'?"},
    {"unknown_kind.yaml", "unknown_kind.yaml:4:9:", "workload.kind:", "did you mean 'matmul'?"},
    {"missing_key.yaml", "missing_key.yaml:4:3:", "workload.k:", "missing required key"},
    {"bad_inline_chip.yaml", "bad_inline_chip.yaml:4:15:", "chip.mxu.rows:", "expected between 2 and 256"},
    {"mxu_schedule_typo.yaml", "mxu_schedule_typo.yaml:5:41:", "chip.mxu.schedule:", "did you mean 'fold_serial'?"},
    {"huge_blocks.yaml", "huge_blocks.yaml:8:10:", "workload.block:", "bytes of VMEM per core"},
};

}  // namespace

TEST_CASE("bad experiment files: located message, exit 2, no report", "[app][bad-input]") {
  for (const auto& c : kCases) {
    const std::string out_dir = "build-test-out/bad/" + std::string(c.file);
    std::filesystem::remove_all(std::string(TPUSIM_SOURCE_DIR) + "/" + out_dir);
    auto r = run_tpusim("run tests/data/bad/" + std::string(c.file) + " --out " + out_dir);
    INFO(c.file << " said: " << r.output);
    CHECK(r.status == 2);
    CHECK(r.output.find(std::string("tests/data/bad/") + c.location) != std::string::npos);
    CHECK(r.output.find(c.key_path) != std::string::npos);
    CHECK(r.output.find(c.says) != std::string::npos);
    CHECK(r.output.find("terminate") == std::string::npos);
    CHECK(r.output.find("Aborted") == std::string::npos);
    CHECK_FALSE(std::filesystem::exists(std::string(TPUSIM_SOURCE_DIR) + "/" + out_dir + "/report.json"));
  }
}

TEST_CASE("bad --set overrides name the override", "[app][bad-input]") {
  auto typo = run_tpusim("run configs/experiments/matmul-v4.yaml --set wrkload.m=3 --out build-test-out/x");
  CHECK(typo.status == 2);
  CHECK(typo.output.find("--set wrkload.m=3: wrkload.m: the path does not exist") != std::string::npos);
  CHECK(typo.output.find("did you mean 'workload'?") != std::string::npos);

  auto range = run_tpusim("run configs/experiments/matmul-v4.yaml --set workload.m=-3 --out build-test-out/x");
  CHECK(range.status == 2);
  CHECK(range.output.find("--set workload.m=-3: workload.m: value -3 is out of range") != std::string::npos);

  auto form = run_tpusim("run configs/experiments/matmul-v4.yaml --set workload.m --out build-test-out/x");
  CHECK(form.status == 2);
  CHECK(form.output.find("expected KEY.PATH=VALUE") != std::string::npos);
}

TEST_CASE("command-line misuse exits 2 with usage", "[app][bad-input]") {
  CHECK(run_tpusim("").status == 2);
  CHECK(run_tpusim("frobnicate").status == 2);
  CHECK(run_tpusim("run").status == 2);
  CHECK(run_tpusim("run configs/experiments/matmul-v4.yaml --no-such-flag").status == 2);
  // A misspelt, abbreviated or lengthened option names the one meant.
  for (const auto& [given, meant] : {std::pair<std::string, std::string>{"--tarce", "--trace"},
                                     {"-o /tmp/x", "--out"},
                                     {"--output /tmp/x", "--out"},
                                     {"--trace-chps 0", "--trace-chips"},
                                     {"--trace-chip 0", "--trace-chips"}}) {
    INFO(given);
    const auto r = run_tpusim("run configs/experiments/matmul-v4.yaml " + given);
    CHECK(r.status == 2);
    CHECK(r.output.find("did you mean '" + meant + "'?") != std::string::npos);
  }
  auto missing = run_tpusim("run no/such/file.yaml");
  CHECK(missing.status == 2);
  CHECK(missing.output.find("no/such/file.yaml: cannot open file") != std::string::npos);
  CHECK(run_tpusim("--log-level chatty run configs/experiments/matmul-v4.yaml").status == 2);
  CHECK(run_tpusim("explain mxu --rows 1").status == 2);
  CHECK(run_tpusim("explain mxu --fidelity exact").status == 2);
  const auto schedule = run_tpusim("explain mxu --schedule fold_seral");
  CHECK(schedule.status == 2);
  CHECK(schedule.output.find("did you mean 'fold_serial'?") != std::string::npos);
  const auto detail = run_tpusim("run configs/experiments/matmul-v4.yaml --report-detail ful");
  CHECK(detail.status == 2);
  CHECK(detail.output.find("did you mean 'full'?") != std::string::npos);
  const auto dataflow = run_tpusim("explain mxu --dataflow oss");
  CHECK(dataflow.status == 2);
  CHECK(dataflow.output.find("did you mean 'os'?") != std::string::npos);
  // The walk-through and the VCD draw the weight-stationary array only.
  CHECK(run_tpusim("explain mxu --walk --no-pager --rows 2 --cols 2 --m 2 --k 2 --n 2 --dataflow os").status == 2);
  CHECK(run_tpusim("explain mxu --vcd /dev/null --rows 2 --cols 2 --m 2 --k 2 --n 2 --dataflow is").status == 2);
}

TEST_CASE("help, version and validate succeed", "[app]") {
  auto help = run_tpusim("--help");
  CHECK(help.status == 0);
  CHECK(help.output.find("tpusim run EXPERIMENT.yaml") == std::string::npos);  // usage shows 'run EXPERIMENT.yaml'
  CHECK(help.output.find("run EXPERIMENT.yaml") != std::string::npos);
  auto version = run_tpusim("--version");
  CHECK(version.status == 0);
  CHECK(version.output.rfind("tpusim ", 0) == 0);
  auto ok = run_tpusim("validate configs/experiments/matmul-v4.yaml configs/chips/tpu-v5e.yaml");
  CHECK(ok.status == 0);
  CHECK(ok.output.find("matmul-v4.yaml: ok (experiment)") != std::string::npos);
  CHECK(ok.output.find("tpu-v5e.yaml: ok (chip)") != std::string::npos);
  auto more = run_tpusim("validate configs/pods/v4-4x4x4.yaml configs/sweeps/amdahl-synthetic.yaml");
  CHECK(more.status == 0);
  CHECK(more.output.find("v4-4x4x4.yaml: ok (pod)") != std::string::npos);
  CHECK(more.output.find("amdahl-synthetic.yaml: ok (sweep)") != std::string::npos);
  CHECK(run_tpusim("validate tests/data/bad/zero.yaml").status == 2);
}

}  // namespace test_bad_input
