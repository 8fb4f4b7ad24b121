#include "hlo/opcodes.h"
#include "sim/text.h"

#include <algorithm>

namespace hlo {

const std::vector<std::string>& opcode_names() {
  // openxla/xla xla/hlo/ir/hlo_opcode.h (HLO_OPCODE_LIST), sorted.
  static const std::vector<std::string> kNames = {"abs",
                                                  "add",
                                                  "add-dependency",
                                                  "after-all",
                                                  "all-gather",
                                                  "all-gather-done",
                                                  "all-gather-start",
                                                  "all-reduce",
                                                  "all-reduce-done",
                                                  "all-reduce-start",
                                                  "all-to-all",
                                                  "and",
                                                  "async-done",
                                                  "async-start",
                                                  "async-update",
                                                  "atan2",
                                                  "batch-norm-grad",
                                                  "batch-norm-inference",
                                                  "batch-norm-training",
                                                  "bitcast",
                                                  "bitcast-convert",
                                                  "broadcast",
                                                  "call",
                                                  "cbrt",
                                                  "ceil",
                                                  "cholesky",
                                                  "clamp",
                                                  "collective-broadcast",
                                                  "collective-permute",
                                                  "collective-permute-done",
                                                  "collective-permute-start",
                                                  "compare",
                                                  "complex",
                                                  "concatenate",
                                                  "conditional",
                                                  "constant",
                                                  "convert",
                                                  "convolution",
                                                  "copy",
                                                  "copy-done",
                                                  "copy-start",
                                                  "cosine",
                                                  "count-leading-zeros",
                                                  "custom-call",
                                                  "divide",
                                                  "domain",
                                                  "dot",
                                                  "dynamic-reshape",
                                                  "dynamic-slice",
                                                  "dynamic-update-slice",
                                                  "erf",
                                                  "exponential",
                                                  "exponential-minus-one",
                                                  "fft",
                                                  "floor",
                                                  "fusion",
                                                  "gather",
                                                  "get-dimension-size",
                                                  "get-tuple-element",
                                                  "imag",
                                                  "infeed",
                                                  "iota",
                                                  "is-finite",
                                                  "log",
                                                  "log-plus-one",
                                                  "logistic",
                                                  "map",
                                                  "maximum",
                                                  "minimum",
                                                  "multiply",
                                                  "negate",
                                                  "not",
                                                  "opt-barrier",
                                                  "or",
                                                  "outfeed",
                                                  "pad",
                                                  "parameter",
                                                  "partition-id",
                                                  "popcnt",
                                                  "power",
                                                  "ragged-all-to-all",
                                                  "ragged-dot",
                                                  "real",
                                                  "recv",
                                                  "recv-done",
                                                  "reduce",
                                                  "reduce-precision",
                                                  "reduce-scatter",
                                                  "reduce-window",
                                                  "remainder",
                                                  "replica-id",
                                                  "reshape",
                                                  "reverse",
                                                  "rng",
                                                  "rng-bit-generator",
                                                  "rng-get-and-update-state",
                                                  "round-nearest-afz",
                                                  "round-nearest-even",
                                                  "rsqrt",
                                                  "scaled-dot",
                                                  "scatter",
                                                  "select",
                                                  "select-and-scatter",
                                                  "send",
                                                  "send-done",
                                                  "set-dimension-size",
                                                  "shift-left",
                                                  "shift-right-arithmetic",
                                                  "shift-right-logical",
                                                  "sign",
                                                  "sine",
                                                  "slice",
                                                  "sort",
                                                  "sqrt",
                                                  "stochastic-convert",
                                                  "subtract",
                                                  "tan",
                                                  "tanh",
                                                  "topk",
                                                  "transpose",
                                                  "triangular-solve",
                                                  "tuple",
                                                  "while",
                                                  "xor"};
  return kNames;
}

namespace {

bool listed(const std::string& op) {
  const auto& names = opcode_names();
  return std::binary_search(names.begin(), names.end(), op);
}

using sim::ends_with;

}  // namespace

std::string sugar_base(const std::string& opcode) {
  if (listed(opcode)) return "";
  for (const char* tail : {"-start", "-update", "-done"}) {
    if (!ends_with(opcode, tail)) continue;
    const std::string base = opcode.substr(0, opcode.size() - std::string(tail).size());
    // XLA's own async ops are never wrapped again.
    if (listed(base) && !listed(base + "-start") && base.rfind("async-", 0) != 0 && base != "send" && base != "recv")
      return base;
  }
  return "";
}

bool known_opcode(const std::string& opcode) { return listed(opcode) || !sugar_base(opcode).empty(); }

}  // namespace hlo
