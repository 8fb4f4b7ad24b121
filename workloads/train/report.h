#pragma once
// report.json (docs/interface.md), the text table and the Perfetto trace of a
// training step. docs/training.md explains every field.
#include <string>
#include <vector>

#include "models/model_spec.h"
#include "runtime/pod_run.h"
#include "sim/trace.h"
#include "workloads/experiment.h"
#include "workloads/report.h"
#include "workloads/train/layout.h"
#include "workloads/train/measure.h"
#include "workloads/train/memory.h"
#include "workloads/train/spec.h"
#include "workloads/train/train_program.h"

namespace workloads {

// Everything a finished step left behind.
struct TrainRun {
  const Experiment& exp;
  const TrainSpec& spec;
  const TrainLayout& layout;
  const models::ModelSpec& micro;  // one microbatch
  const std::vector<ChipMemory>& memory;
  const TrainProgram& program;
  const runtime::PodRunResult& run;
  const TrainMeasurement& measured;
  double wall_time_s = 0;
};

Report train_report(const TrainRun& r);
std::string train_table(const TrainRun& r, const Report& report);
// One process per chip (named with its ranks), a track per engine and ICI
// queue, and a "pipeline" track with one slice per task (F3, B3) and the
// optimizer, so a schedule reads at a glance; the chips `request` names
// (by default the simulated ones), bounded as sim::TraceWriter is
// (summary: what it holds).
std::string train_trace(const TrainRun& r, const sim::TraceRequest& request, TraceSummary& summary);

}  // namespace workloads
