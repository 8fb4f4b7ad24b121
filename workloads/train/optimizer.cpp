#include "workloads/train/optimizer.h"

#include "sim/params.h"

namespace workloads {

const sim::EnumNames<Optimizer>& optimizer_names() {
  static const sim::EnumNames<Optimizer> names(
      "optimizer", {{Optimizer::adam, "adam", "two moments per parameter"}, {Optimizer::sgd, "sgd", "no moments"}});
  return names;
}

const char* to_string(Optimizer o) { return optimizer_names().name(o); }

const sim::EnumNames<Dtype>& dtype_names() {
  static const sim::EnumNames<Dtype> names("number format",
                                           {{Dtype::bf16, "bfloat16", "2 bytes"}, {Dtype::fp32, "float32", "4 bytes"}});
  return names;
}

const char* to_string(Dtype d) { return dtype_names().name(d); }

std::uint32_t bytes_of(Dtype d) { return d == Dtype::fp32 ? 4 : 2; }

OptimizerCost optimizer_cost(Optimizer o, const Precision& p) {
  // P: a parameter and its gradient as stored; S: one moment; M: the FP32
  // master copy (ZeRO, Rajbhandari et al. 2020, arXiv:1910.02054 s.3.1:
  // BF16 parameters and gradients with FP32 master, m and v are 2 + 2 + 12
  // bytes, "K = 12").
  const double P = bytes_of(p.params), S = bytes_of(p.optimizer), M = p.master_copy() ? 4 : 0;
  // The update reads the gradient and the master copy (else the parameter
  // itself), and writes the master copy and the parameter.
  const double read = P + (M > 0 ? M : P), written = M + P;
  const double copy = M > 0 ? 1 : 0;  // FLOP of the conversion back to the stored parameter
  OptimizerCost c;
  c.kind = o;
  c.name = to_string(o);
  switch (o) {
    case Optimizer::adam:
      // Adam (Kingma & Ba 2015, Algorithm 1): m and v besides. FLOPs:
      // m = b1 m + (1-b1) g: 3; v = b2 v + (1-b2) g^2: 4; the two bias
      // corrections: 2; p -= lr m^ / (sqrt(v^) + eps): 5 -> 14, and the copy.
      // Default precision: 12 bytes of state, read 2 + 4 + 4 + 4 = 14,
      // written 4 + 4 + 4 + 2 = 14.
      c.state_bytes_per_param = M + 2 * S;
      c.flops_per_param = 14 + copy;
      c.read_bytes_per_param = read + 2 * S;
      c.written_bytes_per_param = written + 2 * S;
      break;
    case Optimizer::sgd:
      // Plain SGD: p -= lr g, 2 FLOPs and the copy; no moments.
      c.state_bytes_per_param = M;
      c.flops_per_param = 2 + copy;
      c.read_bytes_per_param = read;
      c.written_bytes_per_param = written;
      break;
  }
  return c;
}

}  // namespace workloads
