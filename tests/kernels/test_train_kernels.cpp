// The lean matmul programs of training steps (train_kernels.h) against the
// full blocked kernel they are cut from (plan_matmul, every block step its
// own ops) and the roofline, run on one simulated chip: same HBM bytes and
// FLOPs, time between the roofline and the full kernel's (plus the stated
// fill bound), fewer ops.
#include <catch2/catch.hpp>

#include "kernels/matmul_kernel.h"
#include "kernels/train_kernels.h"
#include "runtime/pod_run.h"
#include "workloads/experiment.h"

namespace {

struct Ran {
  double time_s = 0, flops = 0;
  std::uint64_t hbm_bytes = 0;
  std::size_t ops = 0;
};

Ran run_on_one_chip(const workloads::Experiment& exp, const hw::Program& prog) {
  runtime::PodProgram pp;
  pp.add_chip(prog);
  const runtime::PodRunResult r = runtime::run_pod(workloads::pod_config(exp), pp, false);
  Ran out{r.step_time_s, 0, static_cast<std::uint64_t>(r.chip_stats(0).value("hbm_bytes")), prog.ops.size()};
  for (const auto& op : prog.ops) out.flops += op.flops;
  return out;
}

workloads::Experiment one_chip(const std::string& chip) {
  return workloads::load_experiment(std::string(TPUSIM_SOURCE_DIR) + "/configs/experiments/matmul-v4.yaml",
                                    {"chip=" + chip});
}

}  // namespace

TEST_CASE("lean matmul: same bytes and FLOPs as the full kernel, time within the fill bound, fewer ops",
          "[workloads][train]") {
  struct Shape {
    const char* chip;
    std::uint64_t count, m, k, n;
    bool folds;  // more block steps than the slice keeps, and blocks small enough to move several per DMA
  };
  // A Transformer's shapes: linear layers, attention score and context
  // (count = sequences x heads; head_dim 64 and 128).
  const Shape shapes[] = {{"tpu-v4", 1, 8192, 1024, 4096, false}, {"tpu-v4", 1, 65536, 2048, 2048, false},
                          {"tpu-v4", 96, 1024, 64, 1024, true},   {"tpu-v4", 96, 1024, 1024, 64, true},
                          {"tpu-v4", 16, 1024, 1024, 128, true},  {"tpu-v5e", 1, 8192, 2048, 2048, false},
                          {"tpu-v5e", 64, 1024, 128, 1024, true}};
  for (const auto& s : shapes) {
    const auto exp = one_chip(s.chip);
    kernels::MatmulPrograms lean_programs(exp.chip, hw::Fidelity::tile);
    const Ran lean = run_on_one_chip(exp, lean_programs.get(s.count, s.m, s.k, s.n));
    const std::uint64_t rows = s.count * s.m;
    const auto full_plan =
        kernels::plan_matmul(exp.chip, rows, s.k, s.n, kernels::choose_blocking(exp.chip, s.m, s.k, s.n));
    const Ran full = run_on_one_chip(exp, full_plan.program);
    INFO(s.chip << " " << s.count << " x " << s.m << "x" << s.k << "x" << s.n << ": lean " << lean.time_s << " s in "
                << lean.ops << " ops, full " << full.time_s << " s in " << full.ops << " ops");
    CHECK(lean.hbm_bytes == full.hbm_bytes);
    CHECK(lean.flops == Approx(2.0 * s.count * s.m * s.k * s.n));
    // Never faster than the roofline, never slower than the unfolded kernel
    // beyond the fill of one folded step.
    CHECK(lean.time_s >= std::max(lean.flops / exp.chip.peak_flops_per_s(),
                                  double(lean.hbm_bytes) / exp.chip.hbm.bandwidth_bytes_per_s));
    CHECK(lean.time_s <= full.time_s * (1.0 + 1.0 / kernels::kMinStepsPerCore));
    if (!s.folds) CHECK(lean.time_s == full.time_s);
    if (s.folds) {
      CHECK(lean.ops < full.ops);
    } else {
      CHECK(lean.ops == full.ops);
    }
  }
}
