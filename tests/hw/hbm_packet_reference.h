#pragma once
// Burst-by-burst reference for the HBM timing model, for tests on small
// scenarios (docs/hbm.md). Each channel serves one burst at a time at its
// share of the bandwidth and takes turns round-robin between the transfers
// that have bursts waiting on it; a transfer ends one access latency after its
// last burst. Cost grows with bytes, so it is never the simulator's engine.
#include <cstdint>
#include <vector>

#include "hw/hbm_config.h"

namespace hw {

struct HbmRequest {
  double start_s = 0.0;
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
};

// Completion time (s) of each request, in the order given. Bursts are
// aligned to multiples of burst_bytes and never cross an interleave block; a
// burst of b bytes occupies its channel for b / (bandwidth / channels).
std::vector<double> hbm_packet_completions(const HbmConfig& config, std::uint64_t burst_bytes,
                                           const std::vector<HbmRequest>& requests);

}  // namespace hw
