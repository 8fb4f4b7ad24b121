#pragma once
// What set a run's time, in one word (docs/report.md#verdict): the saturated
// unit, or "latency" or "idle" when none is.
#include <string>

namespace workloads {

// compute | memory | communication when the busiest unit (HBM against what
// it sustains, `hbm_efficiency`) is busy at least half the step; otherwise
// latency when the three together are busy half the step or more (they take
// turns, each op waiting for the one before), idle when they are not.
std::string verdict(double mxu_busy, double hbm_busy, double ici_busy, double hbm_efficiency);

}  // namespace workloads
