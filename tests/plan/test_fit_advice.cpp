// Does-not-fit advice in `tpusim run` (plan/fit_advice.h): the largest item
// is the one a hand count of the model names, every change offered runs
// (the --set arguments as printed, simulated to the end), a lever the step
// already pulls is never offered, and a step no lever saves is told so.
#include <catch2/catch.hpp>

#include <regex>
#include <string>
#include <vector>

#include "app/cli_runner.h"

namespace test_fit_advice {

using testing_cli::run_tpusim;
using testing_cli::TempDir;

namespace {

// The --set arguments of each change the message offers, as a shell would
// pass them ("--set a=b --set \"c={d: e}\"" -> one string per change).
std::vector<std::string> offered_sets(const std::string& message) {
  std::vector<std::string> out;
  const std::regex change(R"(\(\d\) [^:]+:((?: --set (?:"[^"]*"|[^ "]+))+) \()");
  for (auto it = std::sregex_iterator(message.begin(), message.end(), change); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1]);
  return out;
}

}  // namespace

TEST_CASE("fit advice: a replicated 1.3 B model is told to shard its optimizer state, and each change runs",
          "[plan][fit]") {
  TempDir dir("fit-dp");
  const std::string file = "tests/data/plan/dp-too-big-v5e-4.yaml";
  const auto r = run_tpusim("run " + file + " --out " + dir.path.string());
  REQUIRE(r.status == 3);
  // By hand: a block holds 4 d^2 (attention, 16 heads x 128 = d) + 2 d f
  // (GELU MLP) + 4 d (two norms' scale and bias) = 50,339,840 parameters;
  // 24 blocks, the tied 32000 x 2048 embedding and the final norm make
  // 1,273,696,256. Adam's FP32 moments and master copy are 12 B each:
  // 15.28 GB = 14.2 GiB, the largest item (activations are 6.3 GiB).
  CHECK(r.output.find("Largest item: optimizer state, 14.2 GiB.") != std::string::npos);
  const std::vector<std::string> sets = offered_sets(r.output);
  REQUIRE(!sets.empty());
  CHECK(r.output.find(
            "FSDP over the data axes: --set workload.parallelism.fsdp=data --set workload.parallelism.data=1") !=
        std::string::npos);
  for (const std::string& s : sets) {
    INFO("offered:" << s);
    TempDir run("fit-dp-change");
    CHECK(run_tpusim("run " + file + s + " --out " + run.path.string()).status == 0);
  }
}

TEST_CASE("fit advice: a step with FSDP and full remat is not told to use them, offloading its inputs runs",
          "[plan][fit]") {
  TempDir dir("fit-fsdp");
  const std::string file = "tests/data/plan/fsdp-remat-too-big-v5e-4.yaml";
  const auto r = run_tpusim("run " + file + " --out " + dir.path.string());
  REQUIRE(r.status == 3);
  CHECK(r.output.find("Largest item: activations") != std::string::npos);
  CHECK(r.output.find("FSDP over") == std::string::npos);
  CHECK(r.output.find("remat: full") == std::string::npos);
  CHECK(r.output.find("blocks' inputs to host memory") != std::string::npos);
  const std::vector<std::string> sets = offered_sets(r.output);
  REQUIRE(!sets.empty());
  for (const std::string& s : sets) {
    INFO("offered:" << s);
    TempDir run("fit-fsdp-change");
    CHECK(run_tpusim("run " + file + s + " --out " + run.path.string()).status == 0);
  }
}

TEST_CASE("fit advice: a model too big for its chips by any lever is told it needs more chips", "[plan][fit]") {
  TempDir dir("fit-none");
  // 16x the blocks: 20 B parameters on 4 chips of 16 GiB; even sharded,
  // their parameters, gradients and Adam state are 80 GB per chip.
  const auto r = run_tpusim("run tests/data/plan/dp-too-big-v5e-4.yaml --set workload.model.layers=384 --out " +
                            dir.path.string());
  REQUIRE(r.status == 3);
  CHECK(r.output.find("Largest item: optimizer state") != std::string::npos);
  CHECK(r.output.find("it needs more chips") != std::string::npos);
  CHECK(offered_sets(r.output).empty());
}

}  // namespace test_fit_advice
