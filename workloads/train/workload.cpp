#include "workloads/train/workload.h"

#include <optional>

#include "sim/host.h"
#include "workloads/train/functional.h"
#include "workloads/train/layout.h"
#include "workloads/train/measure.h"
#include "workloads/train/memory.h"
#include "workloads/train/program_builder.h"
#include "workloads/train/report.h"
#include "workloads/train/trace.h"

namespace workloads {

namespace {

class TrainWorkload : public Workload {
 public:
  explicit TrainWorkload(TrainSpec s) : spec_(std::move(s)) {}
  std::string kind() const override { return "train"; }
  RunOutput run(const Experiment& exp, const RunOptions& opts) const override { return run_train(exp, spec_, opts); }

 private:
  TrainSpec spec_;
};

}  // namespace

std::unique_ptr<Workload> load_train_workload(const sim::YamlNode& node, const Experiment& exp) {
  TrainSpec spec = load_train_spec(node, exp);
  load_functional_training(node, exp, spec);
  return std::make_unique<TrainWorkload>(std::move(spec));
}

RunOutput run_train(const Experiment& exp, const TrainSpec& spec, const RunOptions& opts,
                    const std::function<void(Report&)>& extend) {
  sim::WallTimer wall;
  const models::ModelSpec micro = models::build_model(spec.chip_model(), spec.microbatch_size());
  const TrainLayout layout = make_train_layout(exp, spec.parallelism, micro);
  const std::vector<ChipMemory> memory = train_memory(spec, layout, micro);
  if (!spec.simulate_anyway) {
    check_memory_fits(memory, layout, exp.chip.hbm.capacity_bytes);
    check_host_memory_fits(memory, exp.chip.host);
  }
  TrainProgram program = build_train_program(exp, spec, layout, micro);
  std::optional<FunctionalTrainResult> functional;  // functional: one pod run per step
  runtime::PodRunResult run;
  if (spec.functional.enabled) {
    functional = run_train_functional(exp, spec, layout, program);
    run = std::move(functional->last_run);
  } else {
    runtime::PodConfig config = pod_config(exp);
    config.chip = program.chip;
    // The trace is written here (train_trace), from the run's timings and
    // the links' rates the run keeps for it.
    sim::TraceRequest links = opts.trace;
    links.json = false;
    run = runtime::run_pod(config, program.pod, links);
  }
  const TrainMeasurement measured = measure_train(program, run, layout);
  TrainRun r{exp, spec, layout, micro, memory, program, run, measured, 0.0};
  r.wall_time_s = wall.seconds();
  RunOutput out;
  Report report = train_report(r);
  if (functional) report.result.functional = functional_train_report(*functional, spec);
  if (extend) extend(report);
  if (opts.trace) {
    TraceSummary summary;
    out.trace_json = train_trace(r, opts.trace, summary);
    report.simulator.trace = summary;
  }
  out.table = train_table(r, report);
  out.report = to_json(report);
  return out;
}

}  // namespace workloads
