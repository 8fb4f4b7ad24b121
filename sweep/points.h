#pragma once
// The points of a sweep: each one a list of `--set` overrides on the base
// experiment. Every point's experiment is loaded (validated) before anything
// runs, so a bad value fails at once, located at that value in the sweep file.
#include <cstdint>
#include <string>
#include <vector>

#include "sweep/spec.h"

namespace sweep {

struct SweepPoint {
  std::size_t index = 0;
  std::string id;                      // p000, p001, ...: its folder under DIR/points/
  std::vector<std::string> values;     // one-line YAML, one per axis
  std::vector<std::string> overrides;  // KEY=VALUE for `tpusim run --set`: set, the axes, then per_chip
  std::uint32_t chips = 0;             // of its pod; 0 when the loader could not tell
  std::vector<std::string> inputs;     // every file its experiment reads (workloads::Experiment::inputs)
  std::string digest;                  // inputs_digest (record.h), set by the sweep command
  std::string experiment;              // its own experiment file (tpusim plan's candidates); empty: the sweep's
};

// product: the first axis varies slowest; zip: the i-th values together.
// per_chip keys get value x the point's chip count. Throws sim::ConfigError.
std::vector<SweepPoint> expand_sweep(const SweepSpec& spec);

// "pod.shape=[2, 1, 1] workload.m=4096": the swept values of a point, for messages.
std::string describe_point(const SweepSpec& spec, const SweepPoint& p);

}  // namespace sweep
