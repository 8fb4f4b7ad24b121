#pragma once
// What the simulated step did, read from the ops' timings (nothing here is a
// formula): how long each chip spent in its pipeline tasks, how long the
// stages sat idle over the pipeline's span (the bubble), how many
// microbatches each stage really held at once, and the forward, backward
// and optimizer phases.
#include <cstdint>
#include <vector>

#include "runtime/pod_run.h"
#include "workloads/train/layout.h"
#include "workloads/train/train_program.h"

namespace workloads {

struct TrainMeasurement {
  // The pipeline's span: the first task's start to the last task's end, any chip.
  double span_start_s = 0, span_end_s = 0;
  double span_s() const { return span_end_s - span_start_s; }
  // Idle stage-time / total stage-time over the span: sum over chips of
  // (span - time inside its tasks) / (chips x span).
  double bubble_fraction = 0;
  std::vector<double> stage_busy_s;           // per stage: mean time inside tasks
  std::vector<std::uint32_t> peak_in_flight;  // per stage: most microbatches between forward start and backward end
  // Per chip: time inside forward tasks, backward tasks, and the optimizer's
  // first op start to last op end.
  std::vector<double> forward_s, backward_s, optimizer_s;
};

TrainMeasurement measure_train(const TrainProgram& program, const runtime::PodRunResult& run,
                               const TrainLayout& layout);

}  // namespace workloads
