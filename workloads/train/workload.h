#pragma once
// `kind: train`: one training step of a model on the pod with data, tensor
// and pipeline parallelism (docs/training.md). Memory is checked before
// anything is simulated; a step that does not fit stops with
// sim::SimFailure (exit 3) unless `simulate_anyway: true`.
#include <functional>
#include <memory>

#include "workloads/experiment.h"
#include "workloads/report.h"
#include "workloads/train/spec.h"

namespace workloads {

std::unique_ptr<Workload> load_train_workload(const sim::YamlNode& node, const Experiment& exp);

// `extend` adds a kind's own section to the report before it is written
// (kind: maxtext's result.maxtext).
RunOutput run_train(const Experiment& exp, const TrainSpec& spec, const RunOptions& opts,
                    const std::function<void(Report&)>& extend = {});

}  // namespace workloads
