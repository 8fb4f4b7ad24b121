#pragma once
// What an optimizer costs per parameter, with mixed precision as TPU
// training runs it: BF16 parameters and gradients, an FP32 master copy of
// the parameters that the update works on, FP32 optimizer moments.
#include <string>
#include <vector>

namespace sim {
template <class E>
class EnumNames;
}

namespace workloads {

enum class Optimizer { adam, sgd };
const sim::EnumNames<Optimizer>& optimizer_names();  // the YAML spellings: adam, sgd
const char* to_string(Optimizer o);

struct OptimizerCost {
  Optimizer kind = Optimizer::adam;
  std::string name;              // to_string(kind)
  double state_bytes_per_param;  // kept between steps, besides BF16 params and grads
  double flops_per_param;        // of one update, on the vector unit
  double read_bytes_per_param;   // HBM traffic of one update
  double written_bytes_per_param;
};

// adam, sgd. The numbers and their sources are in optimizer.cpp.
const OptimizerCost& optimizer_cost(Optimizer o);

}  // namespace workloads
