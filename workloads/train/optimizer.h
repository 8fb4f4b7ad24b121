#pragma once
// What an optimizer costs per parameter under a precision policy: the
// parameters (and the gradients accumulated for them) in BF16 or FP32, the
// optimizer's moments in FP32 or BF16, and an FP32 master copy of the
// parameters that the update works on when they are BF16 and the optimizer
// FP32 (mixed precision as TPU training runs it by default; MaxText keeps
// FP32 parameters instead, with no master copy).
#include <cstdint>
#include <string>
#include <vector>

#include "hw/number_format.h"

namespace sim {
template <class E>
class EnumNames;
}

namespace workloads {

enum class Optimizer { adam, sgd };

enum class Dtype { bf16, fp32 };
const sim::EnumNames<Dtype>& dtype_names();  // bfloat16, float32 (as JAX names them)
const char* to_string(Dtype d);
std::uint32_t bytes_of(Dtype d);

// `precision:` of kind: train.
struct Precision {
  Dtype params = Dtype::bf16;     // parameters and their gradients, as stored
  Dtype optimizer = Dtype::fp32;  // the optimizer's moments (and master copy)
  // The format of the model's quantized matmuls (program_builder.cpp,
  // quantized()): the linear layers' forward and input-gradient matmuls, as
  // MaxText's int8 training runs them (AQT: fwd and dlhs in 8 bits, drhs,
  // the weight gradient, in bf16); attention's matmuls stay bf16.
  hw::NumberFormat matmul = hw::NumberFormat::bf16;
  // An FP32 copy of BF16 parameters that the update works on.
  bool master_copy() const { return params == Dtype::bf16 && optimizer == Dtype::fp32; }
};
const sim::EnumNames<Optimizer>& optimizer_names();  // the YAML spellings: adam, sgd
const char* to_string(Optimizer o);

struct OptimizerCost {
  Optimizer kind = Optimizer::adam;
  std::string name;                  // to_string(kind)
  double state_bytes_per_param = 0;  // kept between steps, besides the params and grads
  double flops_per_param = 0;        // of one update, on the vector unit
  double read_bytes_per_param = 0;   // HBM traffic of one update
  double written_bytes_per_param = 0;
};

// adam, sgd under `p`. The numbers and their sources are in optimizer.cpp.
OptimizerCost optimizer_cost(Optimizer o, const Precision& p = {});

}  // namespace workloads
