#include "models/layer_spec.h"

#include "models/size_math.h"

namespace models {

namespace {

template <class Op>
double sum_flops(const std::vector<Op>& ops) {
  double f = 0;
  for (const auto& op : ops) f += op.flops();
  return f;
}

// The model's share of the matmuls' FLOPs, or what they execute beyond it.
double matmul_flops(const std::vector<MatmulSpec>& ops, bool extra) {
  double f = 0;
  for (const auto& op : ops) f += extra ? op.flops() - op.model_flops() : op.model_flops();
  return f;
}

}  // namespace

std::uint64_t LayerSpec::param_count() const {
  std::uint64_t n = 0;
  for (const auto& p : params) n += p.elements();
  return n;
}

std::uint64_t LayerSpec::param_bytes() const { return checked_mul(param_count(), kBf16Bytes, "param bytes"); }

std::uint64_t LayerSpec::activation_bytes() const {
  std::uint64_t b = 0;
  for (const auto& s : stash) b += s.bytes();
  return b;
}

double LayerSpec::forward_matmul_flops() const { return matmul_flops(forward, false); }
double LayerSpec::backward_matmul_flops() const { return matmul_flops(backward, false); }
double LayerSpec::extra_matmul_flops() const { return matmul_flops(forward, true) + matmul_flops(backward, true); }
double LayerSpec::executed_forward_matmul_flops() const { return sum_flops(forward); }
double LayerSpec::forward_elementwise_flops() const { return sum_flops(elementwise_fwd); }
double LayerSpec::backward_elementwise_flops() const { return sum_flops(elementwise_bwd); }

const char* to_string(ParamSplit s) {
  switch (s) {
    case ParamSplit::replicated: return "replicated";
    case ParamSplit::rows: return "rows";
    case ParamSplit::cols: return "cols";
  }
  return "?";
}

const char* to_string(LayerKind k) {
  switch (k) {
    case LayerKind::dense: return "dense";
    case LayerKind::embedding: return "embedding";
    case LayerKind::transformer_block: return "transformer_block";
    case LayerKind::output: return "output";
    case LayerKind::loss: return "loss";
  }
  return "?";
}

}  // namespace models
