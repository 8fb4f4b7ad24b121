#include "workloads/verdict.h"

#include <algorithm>

namespace workloads {

namespace {

// ASSUMPTION: half the step. A unit busy for more than half of it is the one
// a faster unit of that kind would speed up most; below that no unit sets the
// pace and the step is made of waits (docs/report.md#verdict).
constexpr double kSaturated = 0.5;

}  // namespace

std::string verdict(double mxu_busy, double hbm_busy, double ici_busy, double hbm_efficiency) {
  const double hbm = hbm_busy / hbm_efficiency;
  const double busiest = std::max({mxu_busy, hbm, ici_busy});
  if (busiest >= kSaturated) {
    if (ici_busy == busiest) return "communication";
    return hbm == busiest ? "memory" : "compute";
  }
  return mxu_busy + hbm_busy + ici_busy >= kSaturated ? "latency" : "idle";
}

}  // namespace workloads
