#pragma once
// The arithmetic mean of a list, 0 for an empty one: one helper for every
// report that averages per-step or per-pass times (the training step's
// microbatch passes, a cluster job's steps).
#include <vector>

namespace sim {

inline double mean(const std::vector<double>& v) {
  double s = 0;
  for (const double x : v) s += x;
  return v.empty() ? 0.0 : s / double(v.size());
}

}  // namespace sim
