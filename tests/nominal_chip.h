#pragma once
// A shipped chip as its specs give it, the constants scripts/calibrate fits
// from measured training steps and serving runs set aside (compute_efficiency
// on chips with no matmul microbenchmark, host.dcn_sync: docs/calibration.md#fit;
// host.serve_step: docs/calibration.md#serve-step). The
// tests that check one mechanism against its closed form run on it, so a
// refit does not move their expectations; v5e keeps its measured
// compute_efficiency (docs/calibration.md#compute-efficiency).
#include <string>

namespace nominal_chip {

// A `chip:` value (YAML flow mapping) for `name`, e.g. "tpu-v4".
inline std::string chip(const std::string& name) {
  return "{base: " + name + (name == "tpu-v5e" ? "" : ", compute_efficiency: 1") +
         ", host: {dcn_sync: 0, serve_step: 0}}";
}

// The override that puts it in an experiment: "chip={base: ...}".
inline std::string set(const std::string& name) { return "chip=" + chip(name); }

}  // namespace nominal_chip
