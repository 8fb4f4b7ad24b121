// tpusim plan (plan/): the planner's best equals brute-force simulation of
// every candidate, its lower bound is below every simulated step, what it
// reports does not depend on -j, its does-not-fit reasons count memory as a
// hand count does, and bad plan files are located errors (exit 2).
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include <unistd.h>

#include "app/cli_runner.h"
#include "plan/candidates.h"
#include "plan/estimate.h"
#include "plan/experiment_text.h"
#include "plan/slice.h"
#include "plan/spec.h"
#include "plan_json.h"

namespace test_plan {

using testing_cli::run_tpusim;
using testing_cli::TempDir;
using testing_plan::plan_json;

namespace {

const char* kPlan = "tests/data/plan/small-v5e-4.yaml";

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

const nlohmann::json& candidate(const nlohmann::json& plan, const std::string& id) {
  for (const auto& c : plan["candidates"])
    if (c["id"] == id) return c;
  FAIL("no candidate " << id);
  return plan;
}

// The number before `unit` after `label` in a reason ("parameters 508.0 MiB").
double mib_after(const std::string& text, const std::string& label) {
  const std::regex re(label + " ([0-9.]+) (MiB|GiB)");
  std::smatch m;
  REQUIRE(std::regex_search(text, m, re));
  return std::stod(m[1]) * (m[2] == "GiB" ? 1024.0 : 1.0);
}

}  // namespace

TEST_CASE("plan: the best equals brute force, the bound is below every step, and -j changes nothing", "[plan][slow]") {
  TempDir pruned("plan-pruned"), pruned_j2("plan-pruned-j2"), brute("plan-brute");
  const auto a = run_tpusim(std::string("plan ") + kPlan + " --no-plot -j 1 --out " + pruned.path.string());
  REQUIRE(a.status == 0);
  const auto b = run_tpusim(std::string("plan ") + kPlan + " --no-plot -j 2 --out " + pruned_j2.path.string());
  REQUIRE(b.status == 0);
  const auto c = run_tpusim(std::string("plan ") + kPlan + " --no-plot -j 2 --exhaustive --out " + brute.path.string());
  REQUIRE(c.status == 0);
  const nlohmann::json p = plan_json(pruned), e = plan_json(brute);

  // Brute force: the shortest step of every candidate that fits, simulated.
  std::string fastest;
  double fastest_s = INFINITY;
  std::size_t simulated = 0;
  for (const auto& cand : e["candidates"]) {
    if (cand["outcome"] != "simulated") continue;
    ++simulated;
    if (cand["step_time_s"].get<double>() < fastest_s) fastest_s = cand["step_time_s"], fastest = cand["id"];
    // The bound is a lower bound of the simulated step (plan/estimate.h).
    INFO(cand["id"] << " " << cand["mesh"] << " remat " << cand["remat"] << " m " << cand["microbatches"]);
    CHECK(cand["lower_bound_s"].get<double>() <= cand["step_time_s"].get<double>());
  }
  CHECK(simulated == e["counts"]["candidates"].get<std::size_t>() - e["counts"]["does_not_fit"].get<std::size_t>());
  REQUIRE(simulated > 10);
  CHECK(p["best"]["id"] == fastest);
  CHECK(p["best"]["step_time_s"].get<double>() == fastest_s);
  // Pruning did prune, and only what could not win.
  REQUIRE(p["counts"]["pruned_by_bound"].get<int>() > 0);
  for (const auto& cand : p["candidates"])
    if (cand["outcome"] == "pruned_by_bound") CHECK(candidate(e, cand["id"])["step_time_s"].get<double>() >= fastest_s);

  // A mesh over part of the 4-chip line (max_axis_splits 1) is among them:
  // fsdp 2 on the inner pairs of chips (0-1, 2-3), data 2 across them, remat
  // none, 2 microbatches. The pruned plan ranks it where brute force does,
  // and the same mesh written by hand runs to the same step.
  const auto is_split = [](const nlohmann::json& cand, const std::string& mesh) {
    return cand["mesh"] == mesh && cand["remat"] == "none" && cand["microbatches"] == 2;
  };
  double split_s = INFINITY;
  std::size_t split_rank = 1;
  for (const auto& cand : e["candidates"])
    if (is_split(cand, "fsdp 2 x data 2")) split_s = cand["step_time_s"];
  REQUIRE(std::isfinite(split_s));
  for (const auto& cand : e["candidates"])
    if (cand["outcome"] == "simulated" && cand["step_time_s"].get<double>() < split_s) ++split_rank;
  for (const auto& cand : p["candidates"])
    if (is_split(cand, "fsdp 2 x data 2")) CHECK(cand["rank"] == split_rank);
  TempDir hand("plan-hand-split");
  std::ofstream(hand / "split.yaml")
      << "name: hand-split\nchip: tpu-v5e\npod: {topology: ring, shape: [4], wraparound: [false]}\n"
         "mesh: {fsdp: 2, data: 2}\nworkload:\n  kind: train\n  global_batch: 16\n"
         "  model: {type: transformer, layers: 4, d_model: 1024, d_ff: 4096, heads: 8, head_dim: 128, seq_len: 2048, "
         "vocab: 32000, tied_embeddings: true, attention: flash}\n"
         "  parallelism: {fsdp: fsdp, data: data, microbatches: 2}\n  remat: none\n";
  const auto h = run_tpusim("run " + (hand / "split.yaml") + " --out " + (hand / "out"));
  REQUIRE(h.status == 0);
  CHECK(testing_cli::read_report((hand / "out"))["result"]["step_time_s"].get<double>() == split_s);

  // -j 1 and -j 2 report the same bytes (plan.json's execution section aside).
  CHECK(file_text(pruned / "plan.csv") == file_text(pruned_j2 / "plan.csv"));
  nlohmann::json p2 = plan_json(pruned_j2), p1 = p;
  p1.erase("execution");
  p2.erase("execution");
  CHECK(p1 == p2);
  // The best is a runnable experiment: the same step again.
  TempDir rerun("plan-rerun");
  const auto r = run_tpusim("run " + (pruned / "best-1.yaml") + " --out " + rerun.path.string());
  REQUIRE(r.status == 0);
  CHECK(testing_cli::read_report(rerun.path.string())["result"]["step_time_s"].get<double>() == fastest_s);
}

TEST_CASE("plan: under mpirun -np 2 it reports what one process reports", "[plan][mpi]") {
  // Each rank simulates every other candidate and prunes by the best it has
  // seen; rank 0 gathers the outcomes (plan/search.h): the ranking, the
  // outcomes and the reasons are those of one process.
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0)
    FAIL("mpirun not found: scripts/setup installs openmpi-bin");
  TempDir one("plan-one"), many("plan-mpi");
  REQUIRE(run_tpusim(std::string("plan ") + kPlan + " --no-plot -j 1 --out " + one.path.string()).status == 0);
  const auto r = testing_cli::run_in_source_tree(std::string("SC_COPYRIGHT_MESSAGE=DISABLE mpirun --oversubscribe ") +
                                                 (::geteuid() == 0 ? "--allow-run-as-root " : "") + "-np 2 " +
                                                 TPUSIM_BINARY + " plan " + kPlan + " --no-plot -j 1 --out " +
                                                 many.path.string() + " < /dev/null");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(file_text(many / "plan.csv") == file_text(one / "plan.csv"));
  nlohmann::json a = plan_json(one), b = plan_json(many);
  CHECK(b["execution"]["mpi_ranks"] == 2);
  a.erase("execution");
  b.erase("execution");
  CHECK(a == b);
  CHECK(file_text(many / "best-1.yaml") == file_text(one / "best-1.yaml"));
}

TEST_CASE("plan: a replicated candidate does not fit by what a hand count of its memory says", "[plan]") {
  TempDir dir("plan-fit");
  // max_simulations 1: only the memory is under test here.
  std::ofstream(dir / "p.yaml") << file_text(std::string(TPUSIM_SOURCE_DIR) + "/" + kPlan) << "max_simulations: 1\n";
  const auto r = run_tpusim("plan " + (dir / "p.yaml") + " --no-plot -j 1 --out " + (dir / "out"));
  REQUIRE(r.status == 0);
  std::ifstream in(dir / "out/plan.json");
  const nlohmann::json p = nlohmann::json::parse(in);
  // c0000: data 4, remat none, 1 microbatch: every chip holds the whole
  // model. Parameters by hand (models/transformer.h's GPT block: Q, K, V,
  // O of d x heads x head_dim, up and down of d x d_ff, two layer norms of
  // scale and bias; a tied embedding of vocab x d; the final norm):
  const double L = 4, D = 1024, F = 4096, HQ = 8 * 128, V = 32000;
  const double params = L * (4 * D * HQ + 2 * D * F + 4 * D) + V * D + 2 * D;
  const nlohmann::json& c = candidate(p, "c0000");
  REQUIRE(c["outcome"] == "does_not_fit");
  const std::string why = c["reason"];
  INFO(why);
  // ZeRO's count for Adam with BF16 parameters: 2 + 2 + 12 bytes each
  // (docs/training.md, the optimizer table), printed to 0.1 MiB.
  CHECK(std::abs(mib_after(why, "parameters") - 2 * params / 1048576) < 0.06);
  CHECK(std::abs(mib_after(why, "gradients") - 2 * params / 1048576) < 0.06);
  CHECK(std::abs(mib_after(why, "optimizer") - 12 * params / 1048576) < 0.06);
  // The capacity is max_memory_fraction of the v5e's 16 GiB
  // (docs/reference/tpu-specs.md#v5e.hbm_capacity), and the excess the
  // reason leads with is the estimate over it.
  CHECK(c["memory_capacity_bytes"].get<double>() == std::floor(0.1 * 16.0 * 1073741824.0));
  const double over = c["memory_estimate_bytes"].get<double>() - c["memory_capacity_bytes"].get<double>();
  // (printed in GiB to 0.1: within half of that)
  CHECK(std::abs(mib_after(why, "does not fit by") - over / 1048576) < 0.05 * 1024);
}

TEST_CASE("plan: a candidate over its host memory does not fit by the host's excess, not a negative HBM one",
          "[plan]") {
  // FSDP over 4 v5e chips with every block's stash offloaded (remat:
  // offload): HBM holds the rest, the host holds the stashes. A host of
  // 1 GiB for its 8 chips gives each 128 MiB.
  const std::string text = R"(name: host-over
chip: {base: tpu-v5e, host: {memory: 1073741824}}
pod: {topology: torus2d, shape: [2, 2], wraparound: false}
mesh: {data: 4}
workload:
  kind: train
  model: {type: transformer, layers: 4, d_model: 1024, d_ff: 4096, heads: 8, head_dim: 128, seq_len: 8192,
          vocab: 32000, tied_embeddings: true, attention: flash}
  global_batch: 4
  parallelism: {fsdp: data}
  remat: offload
)";
  const std::string path = std::string(TPUSIM_SOURCE_DIR) + "/tests/data/plan/host-over.yaml";
  const plan::Estimate e = plan::estimate_candidate(text, path, 1.0);
  INFO(e.message);
  REQUIRE(e.status == plan::Estimate::Status::does_not_fit);
  CHECK(e.memory == "host memory");
  CHECK(e.capacity_bytes == 1073741824 / 8);
  CHECK(e.memory_bytes > e.capacity_bytes);
  CHECK(e.message.find("does not fit in host memory") != std::string::npos);
}

TEST_CASE("plan: candidate_wall_time bounds each candidate's simulation by its limits", "[plan]") {
  // Each candidate file carries the bound as its limits.max_wall_time, so
  // a simulation past it stops as a runaway (exit 3) and the plan reports
  // the candidate failed, with that message (docs/plan.md, "Candidates").
  const std::string path = std::string(TPUSIM_SOURCE_DIR) + "/" + kPlan;
  const plan::PlanSpec spec = plan::load_plan_text(file_text(path) + "candidate_wall_time: 90\n", path);
  const plan::Slice slice = plan::plan_slice(spec);
  const plan::CandidateSet set = plan::enumerate_candidates(spec, slice.shape, slice.alike_wraparound, false, true);
  REQUIRE(!set.candidates.empty());
  const plan::Candidate& c = set.candidates.back();
  const std::string text = plan::experiment_text(spec, slice, "tpu-v5e", set.families[c.family], c);
  INFO(text);
  const plan::TrainStep step = plan::train_step_of(text, path, {});
  CHECK(step.exp.limits.max_wall_time_s == 90.0);
  // Without it, the run's default (runtime/limits.h: 3600 s).
  const plan::PlanSpec plain = plan::load_plan_file(path);
  const std::string text0 = plan::experiment_text(plain, slice, "tpu-v5e", set.families[c.family], c);
  CHECK(plan::train_step_of(text0, path, {}).exp.limits.max_wall_time_s == 3600.0);
}

TEST_CASE("plan: bad plans are located errors with exit 2", "[plan]") {
  TempDir dir("plan-bad");
  const std::string base = "chip: tpu-v5e\nchips: 4\nglobal_batch: 16\n";
  struct Case {
    std::string text, where, says;
  };
  const Case cases[] = {
      {"model: llama3.1-70c\nseq_len: 8192\n" + base, "p.yaml:1:8: model:", "did you mean 'llama3.1-70b'"},
      {"model: llama3.1-8b\nseq_len: 8192\n" + base + "axes: [data, tensr]\n", "p.yaml:6:14: axes[1]:", "tensor"},
      {"model: llama3.1-8b\nseq_len: 8192\n" + base + "fixed: {tensor: 3}\n",
       "p.yaml:6:17: fixed.tensor:", "does not divide the 4 chips"},
      {"model: llama3.1-8b\n" + base, "p.yaml:1:1", "seq_len"},
      {"model: llama3.1-8b\nseq_len: 8192\nchip: tpu-v5e\nchips: 4\n", "p.yaml:1:1", "global_batch"},
      {"model: llama3.1-8b\nseq_len: 8192\n" + base + "remat: [full, offload]\n",
       "p.yaml:6:15: remat[1]:", "minimal_offloaded"},
  };
  for (const Case& k : cases) {
    std::ofstream(dir / "p.yaml") << k.text;
    const auto r = run_tpusim("plan " + (dir / "p.yaml") + " --out " + (dir / "out"));
    INFO(k.text << "\n-> " << r.output);
    CHECK(r.status == 2);
    CHECK(r.output.find(k.where) != std::string::npos);
    CHECK(r.output.find(k.says) != std::string::npos);
  }
}

TEST_CASE("plan: every shipped plan file loads", "[plan]") {
  int loaded = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(TPUSIM_SOURCE_DIR) + "/configs/plans")) {
    INFO(e.path().string());
    CHECK_NOTHROW(plan::load_plan_file(e.path().string()));
    ++loaded;
  }
  CHECK(loaded >= 1);
}

}  // namespace test_plan
