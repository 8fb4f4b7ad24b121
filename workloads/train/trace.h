#pragma once
// The Perfetto trace of a training step (docs/report.md#traces).
#include <string>

#include "sim/trace.h"
#include "workloads/report.h"
#include "workloads/train/report.h"

namespace workloads {

// One process per chip (named with its ranks), a track per engine and ICI
// queue, and a "pipeline" track with one slice per task (F3, B3) and the
// optimizer, so a schedule reads at a glance; the chips `request` names
// (by default the simulated ones), bounded as sim::TraceWriter is
// (summary: what it holds).
std::string train_trace(const TrainRun& r, const sim::TraceRequest& request, TraceSummary& summary);

}  // namespace workloads
