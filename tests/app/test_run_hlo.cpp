// `tpusim run --hlo FILE --chip NAME --pod POD --mesh MESH`: the same run
// as the experiment file those flags stand for, and its flags' misuse
// refused with exit 2.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <string>

#include "cli_runner.h"

namespace test_run_hlo {

using testing_cli::run_tpusim;
using testing_cli::TempDir;

TEST_CASE("run --hlo: the flags run what the equivalent experiment file runs", "[app][hlo]") {
  TempDir tmp("run-hlo");
  const auto file = run_tpusim("run configs/experiments/hlo-sharded-matmul-v5e-2x4.yaml --out " + tmp / "file");
  REQUIRE(file.status == 0);
  const auto flags = run_tpusim(
      "run --hlo configs/hlo/sharded-matmul-v5e-2x4.hlo.txt --chip tpu-v5e"
      " --pod '{topology: torus2d, shape: [2, 4], wraparound: [false, false]}' --mesh '{model: 2, data: 4}' --out " +
      tmp / "flags");
  INFO(flags.output);
  REQUIRE(flags.status == 0);
  const nlohmann::json a = testing_cli::read_report(tmp / "file"), b = testing_cli::read_report(tmp / "flags");
  CHECK(b["result"]["step_time_s"] == a["result"]["step_time_s"]);
  CHECK(b["result"]["hlo"]["flops_per_device"] == a["result"]["hlo"]["flops_per_device"]);
  CHECK(b["experiment"]["name"] == "sharded-matmul-v5e-2x4");
  // The file as given, relative (an absolute path told of the machine).
  CHECK(b["result"]["hlo"]["file"] == "configs/hlo/sharded-matmul-v5e-2x4.hlo.txt");
}

TEST_CASE("run --hlo: misused flags exit 2 with a message", "[app][hlo]") {
  struct Bad {
    const char* args;
    const char* says;
  };
  const Bad cases[] = {
      {"run --hlo configs/hlo/sharded-matmul-v5e-2x4.hlo.txt", "--hlo needs --chip"},
      {"run configs/experiments/matmul-v5e.yaml --hlo configs/hlo/sharded-matmul-v5e-2x4.hlo.txt --chip tpu-v5e",
       "give one or the other"},
      {"run configs/experiments/matmul-v5e.yaml --chip tpu-v5e", "--chip goes with --hlo"},
      {"run --hlo configs/hlo/sharded-matmul-v5e-2x4.hlo.txt --chip tpu-v9", "unknown chip 'tpu-v9'"},
      {"run --hlo configs/hlo/no-such.hlo.txt --chip tpu-v5e", "no HLO file"},
  };
  for (const Bad& c : cases) {
    const auto r = run_tpusim(std::string(c.args) + " --out /dev/null/x");
    INFO(c.args << " said: " << r.output);
    CHECK(r.status == 2);
    CHECK(r.output.find(c.says) != std::string::npos);
  }
}

}  // namespace test_run_hlo
