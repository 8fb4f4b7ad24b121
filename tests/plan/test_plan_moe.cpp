// tpusim plan with a mixture of experts (docs/plan.md, "Pruning"): the
// lower bound counts only a chip's own experts (1 / e of them with expert
// parallelism of e), whose gradients are reduced over the data axes and not
// the expert axis, checked against a hand count of the bytes; and on a small
// MoE plan the planner's best equals brute-force simulation of every
// candidate, every simulated step above its bound, so pruning loses nothing.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "app/cli_runner.h"
#include "plan/estimate.h"
#include "plan_json.h"

namespace test_plan_moe {

using testing_cli::run_tpusim;
using testing_cli::TempDir;
using testing_plan::plan_json;

namespace {

const char* kPlan = "tests/data/plan/small-moe-v5e-4.yaml";

// The plan's model as kind: train on a ring of 4 v5e chips over `mesh`.
std::string experiment(const std::string& mesh, const std::string& parallelism) {
  return "name: moe\nchip: tpu-v5e\npod: {topology: ring, shape: [4], wraparound: [false]}\nmesh: " + mesh +
         "\nworkload:\n  kind: train\n  global_batch: 16\n"
         "  model: {type: transformer, layers: 4, d_model: 1024, d_ff: 4096, heads: 8, head_dim: 128, seq_len: 512, "
         "vocab: 4096, mlp: relu, experts: 4, top_k: 2}\n  parallelism: " +
         parallelism + "\n  remat: none\n";
}

}  // namespace

TEST_CASE("plan moe: the gradient reduction bound counts a chip's own experts by hand", "[plan]") {
  const std::string path = std::string(TPUSIM_SOURCE_DIR) + "/tests/data/plan/moe.yaml";
  // A block's weights by hand (models/transformer.h's GPT block): Q, K, V,
  // O of d x heads x head_dim and two layer norms of scale and bias, all
  // replicated over the expert axis; the router d x experts; the experts,
  // up and down of d x d_ff each.
  const double L = 4, D = 1024, F = 4096, HQ = 8 * 128, E = 4;
  const double dense = L * (4 * D * HQ + 4 * D + D * E), experts = L * E * 2 * D * F;
  struct Case {
    std::string mesh, parallelism;
    double bytes;  // BF16 gradient bytes one chip sends: (N - 1)/N of what it holds, N the chips reducing it
  };
  const Case cases[] = {
      // data 2 x expert 2: the dense weights over the 4 chips, the chip's 2
      // experts over the 2 data ranks.
      {"{data: 2, expert: 2}", "{data: data, expert: expert}", 2 * (dense * 3 / 4 + experts / 2 / 2)},
      // expert 4: only the dense weights are reduced, the experts not at all.
      {"{expert: 4}", "{expert: expert}", 2 * dense * 3 / 4},
      // data 4: everything over 4.
      {"{data: 4}", "{data: data}", 2 * (dense + experts) * 3 / 4},
  };
  for (const Case& c : cases) {
    const std::string text = experiment(c.mesh, c.parallelism);
    INFO(c.mesh);
    const plan::Estimate e = plan::estimate_candidate(text, path, 1.0);
    REQUIRE(e.status == plan::Estimate::Status::fits);
    const hw::ChipConfig& chip = plan::train_step_of(text, path, {}).exp.chip;
    const double bandwidth = double(chip.ici.links_per_chip) * chip.ici.link_bandwidth;
    CHECK(e.communication_by == "gradient reduction");
    CHECK(e.communication_s * bandwidth == Approx(c.bytes).epsilon(1e-9));
  }
}

TEST_CASE("plan moe: the best equals brute force and the bound is below every step", "[plan][slow]") {
  TempDir pruned("plan-moe-pruned"), brute("plan-moe-brute");
  REQUIRE(run_tpusim(std::string("plan ") + kPlan + " --no-plot -j 2 --out " + pruned.path.string()).status == 0);
  REQUIRE(
      run_tpusim(std::string("plan ") + kPlan + " --no-plot -j 2 --exhaustive --out " + brute.path.string()).status ==
      0);
  const nlohmann::json p = plan_json(pruned), e = plan_json(brute);
  std::string fastest;
  double fastest_s = INFINITY;
  std::size_t simulated = 0, expert_meshes = 0;
  for (const auto& cand : e["candidates"]) {
    if (cand["outcome"] != "simulated") continue;
    ++simulated;
    if (cand["mesh"].get<std::string>().find("expert") != std::string::npos) ++expert_meshes;
    if (cand["step_time_s"].get<double>() < fastest_s) fastest_s = cand["step_time_s"], fastest = cand["id"];
    INFO(cand["id"] << " " << cand["mesh"] << " remat " << cand["remat"] << " m " << cand["microbatches"]);
    CHECK(cand["lower_bound_s"].get<double>() <= cand["step_time_s"].get<double>());
  }
  // Every candidate that loads and fits was simulated, expert meshes among them.
  CHECK(simulated == e["counts"]["candidates"].get<std::size_t>() - e["counts"]["does_not_fit"].get<std::size_t>() -
                         e["counts"]["invalid"].get<std::size_t>());
  REQUIRE(simulated > 10);
  CHECK(expert_meshes > 4);
  CHECK(p["best"]["id"] == fastest);
  CHECK(p["best"]["step_time_s"].get<double>() == fastest_s);
  // Pruning did prune, and only what could not win.
  CHECK(p["counts"]["pruned_by_bound"].get<int>() > 0);
  for (const auto& cand : p["candidates"])
    if (cand["outcome"] == "pruned_by_bound")
      for (const auto& b : e["candidates"])
        if (b["id"] == cand["id"]) CHECK(b["step_time_s"].get<double>() >= fastest_s);
}

}  // namespace test_plan_moe
