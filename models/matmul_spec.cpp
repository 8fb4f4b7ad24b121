#include "models/matmul_spec.h"

namespace models {

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
