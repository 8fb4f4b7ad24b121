#pragma once
// PE-fidelity engine of the MXU: steps every processing element of the
// weight-, output- or input-stationary array (MxuConfig::dataflow) every cycle with real BF16 operands and FP32
// partial sums. Its cycle count comes from observing the array, never from
// the closed form in mxu_timing.h (a property test checks that they agree).
#include <cstdint>
#include <functional>
#include <vector>

#include "hw/bf16.h"
#include "hw/mxu_config.h"
#include "hw/mxu_state_view.h"

namespace hw {

struct MxuPeResult {
  std::uint64_t cycles = 0;  // cycle of the last useful output leaving row R-1, plus one
  std::vector<float> y;      // m x n, row-major
};

// Called once per simulated cycle (slow: for small teaching runs and VCD).
using MxuObserver = std::function<void(const ArrayStateView&)>;

// Keeps its buffers between runs, so one instance per MXU avoids
// reallocating for every op.
class SystolicArray {
 public:
  // a: m x k row-major, b: k x n row-major (both required). Throws
  // sim::ConfigError on a bad config or shape, or for an observer of an os
  // array (the view draws weight registers). An is array's observer sees the
  // ws array it is: A^T in the weight banks, B's columns as activations.
  MxuPeResult run(const MxuConfig& config, const MxuShape& shape, const bf16* a, const bf16* b,
                  const MxuObserver& observer = {});

 private:
  std::vector<float> psums_;        // two (R+1) x C buffers; row 0 is the top edge (+0.0)
  std::vector<float> weights_;      // two banks of R x C
  std::vector<float> activations_;  // R activation delay lines
};

}  // namespace hw
