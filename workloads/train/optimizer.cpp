#include "workloads/train/optimizer.h"

#include "sim/params.h"

namespace workloads {

const sim::EnumNames<Optimizer>& optimizer_names() {
  static const sim::EnumNames<Optimizer> names("optimizer",
                                               {{Optimizer::adam, "adam", "12 bytes of state per parameter"},
                                                {Optimizer::sgd, "sgd", "4 bytes of state per parameter"}});
  return names;
}

const char* to_string(Optimizer o) { return optimizer_names().name(o); }

const OptimizerCost& optimizer_cost(Optimizer o) {
  static const std::vector<OptimizerCost> costs = {
      // Adam (Kingma & Ba 2015, Algorithm 1) in mixed precision. State: FP32
      // master copy, first and second moment, 4 + 4 + 4 = 12 bytes/param
      // (ZeRO, Rajbhandari et al. 2020, arXiv:1910.02054 s.3.1: "K = 12").
      // FLOPs: m = b1 m + (1-b1) g: 3; v = b2 v + (1-b2) g^2: 4; the two bias
      // corrections: 2; p -= lr m^ / (sqrt(v^) + eps): 5; BF16 copy: 1 -> 15.
      // Traffic: read g (BF16 2), master, m, v (FP32 4 each) = 14; write
      // master, m, v = 12 and the BF16 parameter 2 = 14.
      {Optimizer::adam, to_string(Optimizer::adam), 12, 15, 14, 14},
      // Plain SGD in mixed precision: the FP32 master copy only (4 bytes).
      // FLOPs: p -= lr g: 2, BF16 copy: 1. Traffic: read g 2 + master 4,
      // write master 4 + BF16 parameter 2.
      {Optimizer::sgd, to_string(Optimizer::sgd), 4, 3, 6, 6},
  };
  for (const auto& c : costs)
    if (c.kind == o) return c;
  return costs.front();
}

}  // namespace workloads
