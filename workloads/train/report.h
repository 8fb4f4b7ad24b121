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
// The text table on stdout (table.cpp).
std::string train_table(const TrainRun& r, const Report& report);

}  // namespace workloads
