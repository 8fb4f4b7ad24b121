// One chip per group of replicas and replayed collectives (pod_runtime.h,
// collective_replay.h) against simulating every chip and every collective:
// the same step, to the picosecond where replicas finish their collectives
// together, and within the reported spread where they do not.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "runtime/pod_run.h"
#include "runtime/ring_all_reduces.h"
#include "workloads/experiment.h"

namespace test_replicas {

namespace {

const std::string kSrc = TPUSIM_SOURCE_DIR;

nlohmann::json run(const std::string& config, std::vector<std::string> sets, const std::string& replicas) {
  sets.push_back("replicas=" + replicas);
  auto exp = workloads::load_experiment(kSrc + config, sets);
  return exp.workload->run(exp, {}).report;
}

// Data-parallel MLP training on a v4 slice of `shape` (the shipped strong-
// scaling sweep's base), 8 samples per chip.
std::vector<std::string> dp_mlp(const std::string& shape, int chips, bool wrap) {
  return {"pod={topology: torus3d, shape: " + shape + ", wraparound: " + (wrap ? "true" : "false") + "}",
          "mesh.data=" + std::to_string(chips), "workload.global_batch=" + std::to_string(8 * chips)};
}

std::vector<std::string> with(std::vector<std::string> sets, const std::string& more) {
  sets.push_back(more);
  return sets;
}

using testing_runtime::ring_experiment;

// Every chip of `exp`'s pod: a matmul, then all-reduces of `bytes` on the
// ICI queues given.
runtime::PodProgram replicated(const workloads::Experiment& exp, const std::vector<std::uint32_t>& queues,
                               std::uint64_t bytes) {
  return testing_runtime::replicated_all_reduces(exp.pod.chips(), queues, bytes);
}

// `pp` on an 8-chip ring with the shortcuts (fast) and with every chip and
// collective simulated (full).
struct Runs {
  runtime::PodRunResult fast, full;
};

// At tile fidelity: at kernel fidelity a reducing collective is not replayed
// (its reductions are flows on the chip's HBM), see the test below.
Runs run_both(const runtime::PodProgram& pp) {
  workloads::Experiment exp = ring_experiment(8);
  exp.fidelity = hw::Fidelity::tile;
  workloads::Experiment all = ring_experiment(8);
  all.fidelity = hw::Fidelity::tile;
  all.replicas = workloads::Replicas::all;
  return {runtime::run_pod(workloads::pod_config(exp), pp, false),
          runtime::run_pod(workloads::pod_config(all), pp, false)};
}

// The same step, and every collective started and ended at the same time.
void check_same_times(const Runs& r) {
  CHECK(r.fast.step_time_s == r.full.step_time_s);
  REQUIRE(r.fast.collectives.size() == r.full.collectives.size());
  for (std::size_t i = 0; i < r.fast.collectives.size(); ++i) {
    CHECK(r.fast.collectives[i].start_s == r.full.collectives[i].start_s);
    CHECK(r.fast.collectives[i].end_s == r.full.collectives[i].end_s);
  }
}

}  // namespace

TEST_CASE("replicas: one chip per group gives the step every chip gives, within the reported spread",
          "[workloads][replicas]") {
  struct Case {
    const char* what;
    std::string config;
    std::vector<std::string> sets;
  };
  const std::string mlp = "/configs/sweeps/dp-v4-strong.base.yaml";
  const std::vector<Case> cases = {
      {"transformer, 2x2x2 mesh", "/configs/experiments/train-dp-v4.yaml", {}},
      {"transformer, tensor x data on a 2x2x2 mesh", "/configs/experiments/train-tp-v4.yaml", {}},
      // Without wraparound a chip's share of the reductions depends on its
      // place on the line: at kernel fidelity the replicas cannot stand for
      // each other (the next test), at tile fidelity they can.
      {"MLP, 4x4x2 mesh, tile fidelity", mlp, with(dp_mlp("[4, 4, 2]", 32, false), "fidelity=tile")},
      {"MLP, 4x4x4 torus", mlp, dp_mlp("[4, 4, 4]", 64, true)},
      // Two slices joined by DCN: data parallelism inside each slice and
      // across them (the hierarchical all-reduce, docs/interconnect.md#dcn);
      // mesh slices, so tile fidelity as above.
      {"MLP, 2 slices of a 2x2x2 mesh over DCN",
       mlp,
       {"pod={slices: 2, slice: {topology: torus3d, shape: [2, 2, 2], wraparound: false}, dcn_axes: [replica]}",
        "mesh={data: 8, replica: 2}", "workload.parallelism={data: [data, replica]}", "workload.global_batch=128",
        "fidelity=tile"}},
      // Four slices: slice shifts along the DCN axis stand for slices 1-3
      // (Translations along DCN axes).
      {"MLP, 4 slices of a 2x2x2 mesh over DCN",
       mlp,
       {"pod={slices: 4, slice: {topology: torus3d, shape: [2, 2, 2], wraparound: false}, dcn_axes: [replica]}",
        "mesh={data: 8, replica: 4}", "workload.parallelism={data: [data, replica]}", "workload.global_batch=256",
        "fidelity=tile"}},
      {"transformer, 4 slices of a 4-chip ring over DCN",
       "/configs/experiments/train-dp-v4.yaml",
       {"pod={slices: 4, slice: {topology: ring, shape: [4], wraparound: true}, dcn_axes: [replica]}",
        "mesh={data: 4, replica: 4}", "workload.parallelism={data: [data, replica]}", "workload.global_batch=48",
        "workload.model.layers=2", "fidelity=tile"}},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    const nlohmann::json one = run(c.config, c.sets, "auto");
    const nlohmann::json all = run(c.config, c.sets, "all");
    const double chips = one["pod"]["chips"].get<double>();
    CHECK(one["simulator"]["replicas"] == "one per group");
    CHECK(one["simulator"]["chips_simulated"] == 1);
    CHECK(all["simulator"]["chips_simulated"].get<double>() == chips);
    const double spread = one["simulator"]["replica_spread_s"];
    const double a = one["result"]["step_time_s"], b = all["result"]["step_time_s"];
    INFO("one per group " << a << " s, every chip " << b << " s, spread " << spread << " s");
    CHECK(std::abs(a - b) <= spread + 1e-12);
    CHECK(spread <= 1e-2 * b);
    INFO("symmetric axes " << one["simulator"]["symmetric_axes"]);
    if (one["pod"]["slices"].get<int>() > 1) CHECK(one["simulator"]["symmetric_axes"].size() == 1);
    // With symmetric axes a chip's bytes are its orbit chip's: where chunks
    // are uneven, an element more or less per collective step
    // (interconnect/translations.h), here a few KB of hundreds of GB.
    const double rel = one["simulator"]["symmetric_axes"].empty() ? 0.0 : 1e-6;
    CHECK(one["result"]["hbm_bytes"].get<double>() == Approx(all["result"]["hbm_bytes"].get<double>()).epsilon(rel));
    CHECK(one["result"]["ici_bytes"].get<double>() == Approx(all["result"]["ici_bytes"].get<double>()).epsilon(rel));
    CHECK(one["result"]["flops"] == all["result"]["flops"]);
    // The same between slices: a slice's DCN ring chunks are slice 0's.
    if (one["result"].contains("dcn"))
      CHECK(one["result"]["dcn"]["bytes"].get<double>() ==
            Approx(all["result"]["dcn"]["bytes"].get<double>()).epsilon(rel));
  }
}

TEST_CASE(
    "replicas: a Transformer's data-parallel step at kernel fidelity, whichever way it is run, gives every chip's "
    "end within the reported spread and drift",
    "[workloads][replicas]") {
  // The 1.3 B step of configs/experiments/train-dp-v4-1b.yaml cut to 8
  // blocks on a 4x4x4 torus. Its gradient all-reduces overlap the backward:
  // each block's reductions are flows on the chip's HBM beside the next
  // block's kernels. Simulated chip by chip, the chips leave each all-reduce
  // at slightly different times (buffers do not divide evenly over the ring
  // chunks), and a chip that is late meets the whole pod's reduction traffic
  // at the start of its next block while the early ones computed alone: the
  // gap grows block by block (4.8 us after 8 blocks, 0.67 ms after 24,
  // against a spread of 0.05 and 0.13 us). The run with the shortcuts must
  // report bounds every chip's end (as simulating every chip gives it) lies
  // within.
  const std::string config = "/configs/experiments/train-dp-v4-1b.yaml";
  const std::vector<std::string> sets = {"pod={topology: torus3d, shape: [4, 4, 4], wraparound: true}", "mesh.data=64",
                                         "workload.global_batch=64", "workload.model.layers=8"};
  const nlohmann::json one = run(config, sets, "auto");
  const nlohmann::json all = run(config, sets, "all");
  REQUIRE(all["simulator"]["chips_simulated"] == 64);
  CHECK(one["simulator"]["replicas"] == "one per group");
  // Where the chips run in step the spread bounds the gap; past that, the
  // drift bound does (what the chips' reductions take alone).
  const double spread = one["simulator"]["replica_spread_s"];
  const double drift = one["simulator"]["replica_drift_s"];
  const double a = one["result"]["step_time_s"], b = all["result"]["step_time_s"];
  INFO("one per group " << a << " s, every chip " << b << " s, spread " << spread << " s, drift " << drift << " s");
  CHECK(drift > 0);
  CHECK(std::abs(a - b) <= spread + drift + 1e-12);
  REQUIRE(one["per_chip"].size() == 64);
  for (std::size_t c = 0; c < 64; ++c) {
    INFO("chip " << c);
    CHECK(std::abs(one["per_chip"][c]["end_s"].get<double>() - all["per_chip"][c]["end_s"].get<double>()) <=
          spread + drift + 1e-12);
  }
  // Without compute beside the reductions (an all-reduce alone) nothing
  // couples them: no drift, and the spread alone bounds every chip's end.
  const nlohmann::json alone = run("/configs/experiments/allreduce-v4-4x4x4.yaml", {}, "auto");
  CHECK(alone["simulator"]["replicas"] == "one per group");
  CHECK(alone["simulator"]["replica_drift_s"] == 0);
}

TEST_CASE("replicas: with translations every chip's collective ends when simulating every chip says",
          "[workloads][replicas]") {
  // One orbit chip stands for all 64 chips of the torus; each chip's end is
  // read from its orbit chip's (PodCollectives::finish_times). Against the
  // run that simulates every chip: every chip took part, at the same time.
  // 96 MiB divide evenly over the 6 streams and 4-chip rings, so the
  // translated run is exact (spread 0).
  const std::string config = "/configs/experiments/allreduce-v4-4x4x4.yaml";
  const std::vector<std::string> sets = {"workload.bytes=100663296"};
  const nlohmann::json one = run(config, sets, "auto");
  const nlohmann::json all = run(config, sets, "all");
  CHECK(one["simulator"]["symmetric_axes"].get<std::vector<std::string>>() == std::vector<std::string>{"x", "y", "z"});
  CHECK(one["simulator"]["chips_simulated"] == 1);
  CHECK(one["simulator"]["replica_spread_s"] == 0);
  REQUIRE(one["per_chip"].size() == 64);
  REQUIRE(all["per_chip"].size() == 64);
  for (std::size_t c = 0; c < 64; ++c) {
    INFO("chip " << c);
    CHECK(all["per_chip"][c]["busy"]["ici_s"].get<double>() > 0);
    CHECK(one["per_chip"][c]["busy"]["ici_s"] == all["per_chip"][c]["busy"]["ici_s"]);
  }
}

TEST_CASE("replicas: uneven chunks at kernel fidelity leave every chip's collective end within the reported spread",
          "[workloads][replicas]") {
  // Buffers that do not divide evenly over the streams and ring chunks:
  // chips' transfers differ by an element per step. A chip's concurrent
  // reductions share its HBM, so on the orbit chip (all streams' tails land
  // at one instant) they take longer than on a chip whose tails land apart,
  // and that gap grows along the steps far past the bytes' own time (the
  // 4x4x4 case: 16 ns apart against the 10.7 ns the uneven bytes bound
  // alone; the ring: chips 46 ns apart against 3 ns). The reported spread
  // must cover it (PodSimulation::check_replicas, docs/performance.md).
  struct Case {
    const char* what;
    std::vector<std::string> sets;
  };
  const std::vector<Case> cases = {
      {"1 GiB torus all-reduce on 4x4x4", {"workload.bytes=1073741824"}},
      {"bidirectional ring of 16, 100000004 bytes",
       {"pod={topology: ring, shape: [16], wraparound: true}", "workload.algorithm=bidirectional_ring",
        "workload.bytes=100000004"}},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    std::vector<std::string> sets = c.sets;
    sets.push_back("fidelity=kernel");
    const nlohmann::json one = run("/configs/experiments/allreduce-v4-4x4x4.yaml", sets, "auto");
    const nlohmann::json all = run("/configs/experiments/allreduce-v4-4x4x4.yaml", sets, "all");
    REQUIRE(one["simulator"]["replicas"] == "one per group");
    REQUIRE_FALSE(one["simulator"]["symmetric_axes"].empty());
    const double spread = one["simulator"]["replica_spread_s"];
    const double a = one["result"]["step_time_s"], b = all["result"]["step_time_s"];
    INFO("one per group " << a << " s, every chip " << b << " s, spread " << spread << " s");
    CHECK(spread > 0);
    CHECK(std::abs(a - b) <= spread + 1e-12);
    const std::size_t chips = all["per_chip"].size();
    REQUIRE(one["per_chip"].size() == chips);
    double apart = 0;  // how far the chips simulated one by one ended from each other
    for (std::size_t k = 0; k < chips; ++k) {
      INFO("chip " << k);
      const double mine = all["per_chip"][k]["busy"]["ici_s"].get<double>();
      CHECK(std::abs(one["per_chip"][k]["busy"]["ici_s"].get<double>() - mine) <= spread + 1e-12);
      apart = std::max(apart, std::abs(mine - all["per_chip"][0]["busy"]["ici_s"].get<double>()));
    }
    // The case is one that needs the HBM term: the chips end further apart
    // than the uneven bytes' link and reduction time (what the spread held
    // before) would allow.
    CHECK(apart > 1e-9);
  }
}

TEST_CASE("replicas: where they cannot stand for each other, every chip is simulated and the report says why",
          "[workloads][replicas]") {
  // A mesh without wraparound at kernel fidelity: replicas reduce on the
  // calendar, their representative on its HBM, and an end chip of a line
  // reduces less than a middle one.
  const nlohmann::json mesh = run("/configs/sweeps/dp-v4-strong.base.yaml", dp_mlp("[4, 4, 2]", 32, false), "auto");
  CHECK_THAT(mesh["simulator"]["replicas"].get<std::string>(),
             Catch::Contains("HBM bytes in collective reductions, its representative chip 0"));
  // One chip per pipeline stage: no two chips share a program.
  const nlohmann::json pp = run("/configs/experiments/train-pp-v4.yaml", {}, "auto");
  CHECK(pp["simulator"]["replicas"] == "all (no two chips share a program)");
  const nlohmann::json functional = run("/configs/experiments/train-functional-mlp-v5e.yaml", {}, "auto");
  CHECK(functional["simulator"]["replicas"] == "all (functional run)");
  const nlohmann::json asked = run("/configs/experiments/train-dp-v4.yaml", {}, "all");
  CHECK(asked["simulator"]["replicas"] == "all (replicas: all)");
}

TEST_CASE("collective replays: the same times as simulating every collective again", "[workloads][replicas]") {
  // On a ring with wraparound and a buffer that divides evenly every chip
  // finishes together, so the reduced run must match to the picosecond.
  const workloads::Experiment exp = ring_experiment(8);
  SECTION("one after another on one queue: all but the first replayed") {
    const Runs r = run_both(replicated(exp, {1, 1, 1, 1}, 8 * 4096 * 2));
    const runtime::PodRunResult &fast = r.fast, &full = r.full;
    CHECK(fast.collectives_replayed == 3);
    CHECK(full.collectives_replayed == 0);
    CHECK(fast.replica_spread_s == 0);
    check_same_times(r);
    CHECK(fast.messages_carried == full.messages);
    CHECK(fast.link_utilization_max == full.link_utilization_max);
    for (std::size_t c = 0; c < full.representative.size(); ++c) {
      CHECK(fast.ici_bytes_out[c] == full.ici_bytes_out[c]);
      CHECK(fast.ici_bytes_in[c] == full.ici_bytes_in[c]);
    }
  }
  SECTION("at kernel fidelity an all-reduce is not replayed: its reductions run on the chip's HBM") {
    const workloads::Experiment kernel = ring_experiment(8);
    REQUIRE(kernel.fidelity == hw::Fidelity::kernel);
    const runtime::PodRunResult r =
        runtime::run_pod(workloads::pod_config(kernel), replicated(kernel, {1, 1, 1, 1}, 8 * 4096 * 2), false);
    CHECK(r.collectives_replayed == 0);
  }
  SECTION("two at once on two queues share the links: simulated, not replayed, same times") {
    const Runs r = run_both(replicated(exp, {0, 1, 0, 1}, 8 * 4096 * 2));
    CHECK(r.fast.chips_simulated == 1);
    check_same_times(r);
  }
  SECTION("one that starts while a replayed one would still run: simulated again without replays") {
    // all-reduce 0 (recorded), then all-reduce 1 (replayable) on queue 1;
    // a short matmul after all-reduce 0, then all-reduce 2 on queue 0,
    // which starts in the middle of all-reduce 1.
    runtime::PodProgram pp;
    hw::Program prog;
    for (int i = 0; i < 3; ++i) {
      interconnect::CollectiveSpec c;
      c.op = interconnect::CollectiveOp::all_reduce;
      c.bytes = i < 2 ? 8 * 1024 * 1024 : 8 * 4096;
      c.element_bytes = 2;
      pp.collectives.push_back(c);
    }
    hw::MatmulOp mm;
    mm.m = mm.k = mm.n = 256;
    const std::uint32_t ar0 = prog.add({"ar0", {hw::EngineKind::ici, 1}, hw::CommOp{0}, {}, 0});
    prog.add({"ar1", {hw::EngineKind::ici, 1}, hw::CommOp{1}, {ar0}, 0});
    const std::uint32_t m = prog.add({"matmul", {hw::EngineKind::mxu, 0}, mm, {ar0}, 0});
    prog.add({"ar2", {hw::EngineKind::ici, 0}, hw::CommOp{2}, {m}, 0});
    pp.add_replicas(std::move(prog), exp.pod.chips());
    const Runs r = run_both(pp);
    CHECK(r.fast.chips_simulated == 1);
    CHECK(r.fast.collectives_replayed == 0);
    CHECK(r.fast.collectives[2].start_s < r.fast.collectives[1].end_s);
    check_same_times(r);
  }
}

namespace {

// A replicated pipeline run against the same run with every chip simulated:
// the same step within the reported spread, the same bytes on every chip.
// `symmetric`: the axes along which the network simulates one chip per
// orbit (runtime/pod_run.h, "Symmetric pods").
void check_pipeline_replicas(const std::string& config, const std::vector<std::string>& sets, int stages,
                             const std::vector<std::string>& symmetric = {}) {
  const nlohmann::json one = run(config, sets, "auto");
  const nlohmann::json all = run(config, sets, "all");
  CHECK(one["simulator"]["symmetric_axes"].get<std::vector<std::string>>() == symmetric);
  const double chips = one["pod"]["chips"].get<double>();
  CHECK(one["simulator"]["replicas"] == "one per group");
  CHECK(one["simulator"]["chips_simulated"] == stages);
  CHECK(all["simulator"]["chips_simulated"].get<double>() == chips);
  const double spread = one["simulator"]["replica_spread_s"];
  const double a = one["result"]["step_time_s"], b = all["result"]["step_time_s"];
  INFO("one per stage " << a << " s, every chip " << b << " s, spread " << spread << " s");
  CHECK(std::abs(a - b) <= spread + 1e-12);
  CHECK(spread <= 1e-2 * b);
  for (const char* key : {"hbm_bytes", "ici_bytes", "flops", "model_flops"}) {
    INFO(key);
    CHECK(one["result"][key] == all["result"][key]);
  }
  const auto &pa = one["result"]["pipeline"], &pb = all["result"]["pipeline"];
  CHECK(pa["stages"] == stages);
  CHECK(std::abs(pa["span_s"].get<double>() - pb["span_s"].get<double>()) <= spread + 1e-12);
  CHECK(std::abs(pa["bubble_fraction"].get<double>() - pb["bubble_fraction"].get<double>()) <= spread / a + 1e-9);
  CHECK(pa["peak_microbatches_in_flight"] == pb["peak_microbatches_in_flight"]);
  REQUIRE(one["per_chip"].size() == all["per_chip"].size());
  for (std::size_t c = 0; c < one["per_chip"].size(); ++c) {
    INFO("chip " << c);
    CHECK(one["per_chip"][c]["ici_bytes_out"] == all["per_chip"][c]["ici_bytes_out"]);
    CHECK(one["per_chip"][c]["ici_bytes_in"] == all["per_chip"][c]["ici_bytes_in"]);
    CHECK(one["per_chip"][c]["hbm_bytes"] == all["per_chip"][c]["hbm_bytes"]);
    CHECK(std::abs(one["per_chip"][c]["end_s"].get<double>() - all["per_chip"][c]["end_s"].get<double>()) <=
          spread + 1e-12);
  }
}

// 4 pipeline stages x 4 data-parallel replicas of an MLP on a 4x4 v4 torus.
const std::vector<std::string> kDataPipe = {"pod={topology: torus2d, shape: [4, 4], wraparound: true}",
                                            "mesh={pipe: 4, data: 4}",
                                            "workload.model={type: mlp, widths: [1024, 1024, 1024, 1024, 1024, "
                                            "1024, 1024, 1024, 1024]}",
                                            "workload.global_batch=1024",
                                            "workload.parallelism={data: data, pipeline: pipe, microbatches: 8}",
                                            "workload.optimizer=sgd"};

}  // namespace

TEST_CASE("replicas: a pipeline stage's chips share a program, one chip per stage gives the step every chip gives",
          "[workloads][replicas]") {
  const std::string dp = "/configs/experiments/train-pp-v5e.yaml";
  SECTION("data 4 x pipeline 4, interleaved over 2 virtual stages (the pipeline wraps around)") {
    std::vector<std::string> sets = kDataPipe;
    sets.push_back("workload.parallelism.schedule=interleaved");
    sets.push_back("workload.parallelism.virtual_stages=2");
    check_pipeline_replicas(dp, sets, 4, {"y"});  // the data axis
  }
  for (const char* schedule : {"gpipe", "1f1b"}) {
    INFO(schedule);
    SECTION(std::string("data 4 x pipeline 4, ") + schedule) {
      std::vector<std::string> sets = kDataPipe;
      sets.push_back(std::string("workload.parallelism.schedule=") + schedule);
      check_pipeline_replicas(dp, sets, 4, {"y"});  // the data axis
    }
    SECTION(std::string("tensor 4 x pipeline 4 on a 4x4 torus, ") + schedule) {
      check_pipeline_replicas("/configs/experiments/train-hybrid-v4.yaml",
                              {"pod={topology: torus2d, shape: [4, 4], wraparound: true}", "mesh={model: 4, pipe: 4}",
                               "workload.model.layers=4", "workload.global_batch=8",
                               "workload.parallelism={tensor: model, pipeline: pipe, microbatches: 4}",
                               std::string("workload.parallelism.schedule=") + schedule},
                              4, {"x"});
    }
    SECTION(std::string("data x tensor x pipeline on a 2x2x2 mesh, ") + schedule) {
      check_pipeline_replicas("/configs/experiments/train-hybrid-v4.yaml",
                              {std::string("workload.parallelism.schedule=") + schedule}, 2);
    }
    SECTION(std::string("data 2 x tensor 2 x pipeline 4 on a 4x2x2 torus, ") + schedule) {
      check_pipeline_replicas("/configs/experiments/train-hybrid-v4.yaml",
                              {"pod={topology: torus3d, shape: [4, 2, 2], wraparound: [true, false, false]}",
                               "mesh={pipe: 4, model: 2, data: 2}", "workload.model.layers=4",
                               std::string("workload.parallelism.schedule=") + schedule},
                              4);
    }
  }
}

TEST_CASE("replicas: slices that run different programs are not folded, each slice is simulated",
          "[workloads][replicas][dcn]") {
  // A pipeline of two stages across two slices (dcn_axes: [pipe]), data
  // parallelism inside each: slice 1 runs stage 1's program, so the shift
  // along the DCN axis is no symmetry (no dcn0 among the symmetric axes)
  // and one chip per slice is simulated, giving what every chip gives.
  const std::vector<std::string> sets = {
      "pod={slices: 2, slice: {topology: ring, shape: [4], wraparound: true}, dcn_axes: [pipe]}",
      "mesh={data: 4, pipe: 2}",
      "workload.parallelism={data: data, pipeline: pipe, microbatches: 4, schedule: 1f1b}",
      "workload.model.layers=4",
      "workload.global_batch=32",
      "fidelity=tile"};
  check_pipeline_replicas("/configs/experiments/train-pp-v4.yaml", sets, 2);
  const nlohmann::json one = run("/configs/experiments/train-pp-v4.yaml", sets, "auto");
  CHECK(one["pod"]["slices"] == 2);
  CHECK(one["result"]["dcn"]["bytes"].get<double>() > 0);  // the stages' messages cross DCN
}

namespace {

// PaLM's layout (configs/experiments/train-palm-540b-v4-2x3072.yaml) in
// miniature: two slices of a 4x4 torus joined by DCN, tensor parallelism
// with sequence-sharded activations over x, fully sharded data parallelism
// over y, data parallelism across the slices; a 2-layer Transformer at
// kernel fidelity.
std::vector<std::string> mini_palm(const std::string& chip) {
  return {"chip=" + chip,
          "pod={slices: 2, slice: {topology: torus2d, shape: [4, 4], wraparound: true}, dcn_axes: [pods]}",
          "mesh={model: 4, fsdp: 4, pods: 2}",
          "workload.parallelism={data: pods, fsdp: fsdp, tensor: model, sequence: true}",
          "workload.remat=full",
          "workload.model.layers=2",
          "workload.global_batch=16"};
}

// Folded against every chip simulated: the step, each chip's end, the
// bytes of each network (ICI per chip, DCN, HBM) and each chip's memory.
void check_multislice_fold(const std::vector<std::string>& sets, const std::vector<std::string>& symmetric) {
  const std::string config = "/configs/experiments/train-dp-v4.yaml";
  const nlohmann::json one = run(config, sets, "auto");
  const nlohmann::json all = run(config, sets, "all");
  CHECK(one["simulator"]["symmetric_axes"].get<std::vector<std::string>>() == symmetric);
  CHECK(one["simulator"]["replicas"] == "one per group");
  CHECK(one["simulator"]["chips_simulated"] == 1);
  CHECK(all["simulator"]["chips_simulated"] == 32);
  CHECK(all["simulator"]["symmetric_axes"].empty());
  const double spread = one["simulator"]["replica_spread_s"];
  const double a = one["result"]["step_time_s"], b = all["result"]["step_time_s"];
  INFO("folded " << a << " s, every chip " << b << " s, spread " << spread << " s");
  CHECK(std::abs(a - b) <= spread + 1e-12);
  CHECK(spread <= 1e-2 * b);
  // Each simulated message stands for its orbit's (docs/interconnect.md,
  // "Symmetric pods"): as many carried, orbit-size times fewer simulated.
  const double order = symmetric.size() == 1 ? 2 : 8;  // dcn0; y (4) x dcn0 (2)
  CHECK(one["stats"]["network"]["messages"] == all["stats"]["network"]["messages"]);
  CHECK(one["simulator"]["messages"].get<double>() * order <= all["simulator"]["messages"].get<double>());
  // Bytes per network: a chip's are its orbit chip's, exact where chunks
  // divide evenly, else an element more or less per collective step
  // (interconnect/translations.h): at most 1e-6 here.
  for (const char* key : {"hbm_bytes", "ici_bytes"}) {
    INFO(key);
    CHECK(one["result"][key].get<double>() == Approx(all["result"][key].get<double>()).epsilon(1e-6));
  }
  CHECK(one["result"]["flops"] == all["result"]["flops"]);
  CHECK(one["result"]["dcn"]["bytes"].get<double>() > 0);
  CHECK(one["result"]["dcn"]["bytes"].get<double>() ==
        Approx(all["result"]["dcn"]["bytes"].get<double>()).epsilon(1e-6));
  CHECK(std::abs(one["result"]["dcn"]["time_s"].get<double>() - all["result"]["dcn"]["time_s"].get<double>()) <=
        spread + 1e-12);
  CHECK(one["result"]["dcn"]["nic_busy_max_s"].get<double>() ==
        Approx(all["result"]["dcn"]["nic_busy_max_s"].get<double>()).epsilon(1e-6));
  CHECK(one["result"]["memory"] == all["result"]["memory"]);
  REQUIRE(one["per_chip"].size() == all["per_chip"].size());
  for (std::size_t c = 0; c < one["per_chip"].size(); ++c) {
    INFO("chip " << c);
    const nlohmann::json &p = one["per_chip"][c], &q = all["per_chip"][c];
    CHECK(p["memory"] == q["memory"]);
    for (const char* key : {"ici_bytes_out", "ici_bytes_in", "hbm_bytes"})
      CHECK(p[key].get<double>() == Approx(q[key].get<double>()).epsilon(1e-6));
    CHECK(std::abs(p["end_s"].get<double>() - q["end_s"].get<double>()) <= spread + 1e-12);
  }
}

}  // namespace

TEST_CASE(
    "replicas: multislice-ici-symmetry, ICI axes inside the slices fold with the slice shift where hosts move "
    "onto hosts, and give what every chip gives",
    "[workloads][replicas][dcn]") {
  SECTION("v4, hosts of 4 chips (an x row): y and the slice shift fold") {
    check_multislice_fold(mini_palm("tpu-v4"), {"y", "dcn0"});
  }
  SECTION("the same with the fabric core oversubscribed 4 times: it binds, each flow weighs its 4 y images there") {
    std::vector<std::string> sets = mini_palm("tpu-v4");
    sets[1] =
        "pod={slices: 2, slice: {topology: torus2d, shape: [4, 4], wraparound: true}, dcn_axes: [pods], "
        "dcn: {oversubscription: 4}}";
    check_multislice_fold(sets, {"y", "dcn0"});
  }
  SECTION("v5e, hosts of 8 chips (two x rows): refused on y, the slice shift alone folds") {
    check_multislice_fold(mini_palm("tpu-v5e"), {"dcn0"});
  }
}

TEST_CASE("replicas: multislice-ici-symmetry, an ICI axis whose chips run different programs is not folded",
          "[workloads][replicas][dcn]") {
  // Pipeline stages along y of each slice: y is no symmetry (its chips run
  // different stages), x moves a host's chips onto other hosts' (v4: an x
  // row is a host); the slice shift alone folds, one chip per stage.
  const std::vector<std::string> sets = {
      "pod={slices: 2, slice: {topology: torus2d, shape: [4, 4], wraparound: true}, dcn_axes: [replica]}",
      "mesh={data: 4, pipe: 4, replica: 2}",
      "workload.model={type: mlp, widths: [1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024]}",
      "workload.global_batch=1024",
      "workload.parallelism={data: [data, replica], pipeline: pipe, microbatches: 8}",
      "workload.optimizer=sgd",
      "fidelity=tile"};
  check_pipeline_replicas("/configs/experiments/train-pp-v4.yaml", sets, 4, {"dcn0"});
}

TEST_CASE("replicas: a replicated pipeline's bubble still matches (p-1)/(m+p-1)", "[workloads][replicas]") {
  // 4 uniform stages (8 dense layers of 1024 each), 8 microbatches, links so
  // fast that communication is negligible: as tests/workloads/train's
  // single-pipeline test, with 4 data-parallel replicas of the pipeline.
  std::vector<std::string> sets = kDataPipe;
  std::string widths = "[1024";
  for (int i = 0; i < 32; ++i) widths += ", 1024";
  sets[0] = "pod={topology: torus2d, shape: [4, 4], wraparound: true, link_bandwidth: 1.0e15, link_latency: 0}";
  sets[2] = "workload.model={type: mlp, widths: " + widths + "]}";
  sets[3] = "workload.global_batch=8192";
  // At tile fidelity, where the gradients' reductions are on the calendar:
  // at kernel fidelity they are flows on the chips' HBM beside the
  // backward's kernels, which links this fast do not hide.
  sets.push_back("fidelity=tile");
  const double ideal = 3.0 / 11.0;
  for (const char* schedule : {"gpipe", "1f1b"}) {
    std::vector<std::string> s = sets;
    s.push_back(std::string("workload.parallelism.schedule=") + schedule);
    const nlohmann::json r = run("/configs/experiments/train-pp-v5e.yaml", s, "auto");
    INFO(schedule << ": measured bubble " << r["result"]["pipeline"]["bubble_fraction"]);
    CHECK(r["simulator"]["replicas"] == "one per group");
    CHECK(r["simulator"]["chips_simulated"] == 4);
    CHECK(r["result"]["pipeline"]["bubble_fraction_ideal"].get<double>() == Approx(ideal));
    CHECK(std::abs(r["result"]["pipeline"]["bubble_fraction"].get<double>() - ideal) <= 0.05 * ideal);
  }
}

namespace {

// 4 chips on a ring: chips 0 and 2 run a matmul and send its result to the
// peer their table names; chips 1 and 3 receive it from theirs, then run a
// matmul. `peers` is the pod's peer table; with `split`, chip 3 runs a copy
// of chip 1's program of its own.
runtime::PodProgram senders_and_receivers(std::vector<std::vector<std::uint32_t>> peers, bool split = false) {
  runtime::PodProgram pp;
  hw::MatmulOp mm;
  mm.m = mm.k = mm.n = 512;
  hw::Program send, recv;
  const std::uint32_t first = send.add({"matmul", {hw::EngineKind::mxu, 0}, mm, {}, 2.0 * 512 * 512 * 512});
  send.add({"send", {hw::EngineKind::ici, 0}, hw::SendOp{0, 7, 1 << 20}, {first}, 0});
  const std::uint32_t got = recv.add({"recv", {hw::EngineKind::ici, 1}, hw::RecvOp{0, 7}, {}, 0});
  recv.add({"matmul", {hw::EngineKind::mxu, 0}, mm, {got}, 2.0 * 512 * 512 * 512});
  const std::uint32_t s = pp.add_program(std::move(send)), r = pp.add_program(recv);
  pp.program_of = {s, r, s, split ? pp.add_program(std::move(recv)) : r};
  pp.peers = std::move(peers);
  return pp;
}

runtime::PodRunResult run_ring4(const runtime::PodProgram& pp, bool every_chip) {
  workloads::Experiment exp = ring_experiment(4);
  if (every_chip) exp.replicas = workloads::Replicas::all;
  return runtime::run_pod(workloads::pod_config(exp), pp, false);
}

}  // namespace

TEST_CASE("replicas: point-to-point peers by place, representatives only where the groups line up",
          "[workloads][replicas]") {
  SECTION("0 -> 1 and 2 -> 3: one chip per group, every message on the network") {
    const runtime::PodProgram pp = senders_and_receivers({{1}, {0}, {3}, {2}});
    const runtime::PodRunResult fast = run_ring4(pp, false), full = run_ring4(pp, true);
    CHECK(fast.replicas == "one per group");
    CHECK(fast.chips_simulated == 2);
    CHECK(full.chips_simulated == 4);
    CHECK(fast.replica_spread_s == 0);
    CHECK(fast.step_time_s == full.step_time_s);
    CHECK(fast.messages == full.messages);
    CHECK(fast.messages == 2);
    for (std::size_t c = 0; c < 4; ++c) {
      INFO("chip " << c);
      CHECK(fast.ici_bytes_out[c] == full.ici_bytes_out[c]);
      CHECK(fast.ici_bytes_in[c] == full.ici_bytes_in[c]);
      CHECK(fast.end_s[c] == full.end_s[c]);
    }
    CHECK(fast.ici_bytes_out[2] == 1 << 20);
    CHECK(fast.ici_bytes_in[3] == 1 << 20);
  }
  SECTION("0 -> 3 and 2 -> 1: the representative's peer is not its group's lowest chip") {
    const runtime::PodProgram pp = senders_and_receivers({{3}, {2}, {1}, {0}});
    const runtime::PodRunResult fast = run_ring4(pp, false), full = run_ring4(pp, true);
    CHECK(fast.replicas == "all (point-to-point messages: peer 0 of chip 0 is not its group's lowest chip)");
    CHECK(fast.chips_simulated == 4);
    CHECK(fast.step_time_s == full.step_time_s);
    CHECK(fast.ici_bytes_in[1] == 1 << 20);
  }
  SECTION("0 -> 1 and 2 -> 3, 1 and 3 running programs of their own: the senders' peers are in two groups") {
    const runtime::PodProgram pp = senders_and_receivers({{1}, {0}, {3}, {2}}, true);
    const runtime::PodRunResult fast = run_ring4(pp, false), full = run_ring4(pp, true);
    CHECK(fast.replicas == "all (point-to-point messages: peer 0 of chip 2 does not line up with peer 0 of chip 0)");
    CHECK(fast.chips_simulated == 4);
    CHECK(fast.step_time_s == full.step_time_s);
  }
  SECTION("0 -> 1 and 2 -> 1: not one to one, and a deadlock with every chip simulated") {
    // Chip 3 waits for a message from 2, which sends to 1 (that never
    // receives it): the full run cannot finish, nor can the reduced one.
    const runtime::PodProgram pp = senders_and_receivers({{1}, {0}, {1}, {2}});
    CHECK_THROWS_WITH(run_ring4(pp, false), Catch::Contains("deadlock") && Catch::Contains("chip 3 waits in 'recv'"));
  }
  SECTION("a peer the table does not name") {
    runtime::PodProgram pp = senders_and_receivers({{1}, {0}, {3}, {}});
    CHECK_THROWS_WITH(run_ring4(pp, false), Catch::Contains("chip 3 names peer 0 of its peer table"));
  }
}

}  // namespace test_replicas
