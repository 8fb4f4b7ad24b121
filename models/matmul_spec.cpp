#include "models/matmul_spec.h"

namespace models {

double MatmulSpec::causal_fraction() const {
  if (causal == Causal::none) return 1.0;
  // The sequence length is the two equal dimensions of the triangle.
  const std::uint64_t t = causal == Causal::out_lower ? m : k;
  if (window == 0 || window >= t) return (double(t) + 1.0) / (2.0 * double(t));
  // The first W queries see 1..W keys, the other T - W see W each.
  const double w = double(window);
  return (w * (w + 1.0) / 2.0 + double(t - window) * w) / (double(t) * double(t));
}

const char* to_string(Causal c) {
  switch (c) {
    case Causal::none: return "none";
    case Causal::out_lower: return "out_lower";
    case Causal::depth_upto_row: return "depth_upto_row";
    case Causal::depth_from_row: return "depth_from_row";
  }
  return "?";
}

const char* to_string(Pass p) {
  switch (p) {
    case Pass::forward: return "forward";
    case Pass::backward_data: return "backward_data";
    case Pass::backward_weight: return "backward_weight";
  }
  return "?";
}

const char* to_string(MatmulKind k) {
  switch (k) {
    case MatmulKind::linear: return "linear";
    case MatmulKind::attention_score: return "attention_score";
    case MatmulKind::attention_context: return "attention_context";
    case MatmulKind::dispatch: return "dispatch";
  }
  return "?";
}

const char* to_string(TpRole r) {
  switch (r) {
    case TpRole::replicated: return "replicated";
    case TpRole::column: return "column";
    case TpRole::row: return "row";
    case TpRole::heads: return "heads";
  }
  return "?";
}

const char* to_string(Dim d) {
  switch (d) {
    case Dim::none: return "none";
    case Dim::count: return "count";
    case Dim::m: return "m";
    case Dim::k: return "k";
    case Dim::n: return "n";
  }
  return "?";
}

}  // namespace models
