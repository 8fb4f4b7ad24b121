#pragma once
// Step costs for the request schedulers' hand-worked tests: simple
// constants, so that every time in a schedule can be written down by hand.
#include <cstdint>

#include "workloads/inference/request_stream.h"

namespace testing_serving {

// A prefill costs 1 s per batch, a decode step 0.1 s, a KV transfer
// (disaggregated serving only) 0.25 s, whatever the shapes.
inline workloads::StepCosts flat_step_costs() {
  workloads::StepCosts c;
  c.prefill_s = [](std::uint64_t, std::uint64_t) { return 1.0; };
  c.decode_s = [](std::uint64_t, double) { return 0.1; };
  c.kv_transfer_s = [](std::size_t, std::uint64_t) { return 0.25; };
  return c;
}

}  // namespace testing_serving
