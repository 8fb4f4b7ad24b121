#include "workloads/train/tensor_split.h"

namespace workloads {

namespace {

std::uint64_t split(std::uint64_t size, std::uint64_t tp) { return (size + tp - 1) / tp; }

// How many parts tensor parallelism cuts a dimension of `units` whole heads
// into: one per rank, or one per head when heads are fewer than ranks (each
// then replicated on tp / units ranks).
std::uint64_t parts(std::uint64_t units, std::uint32_t tp) { return units != 0 && units < tp ? units : tp; }

bool writes_split_tensor(const models::MatmulSpec& mm) {
  return mm.tp_split == models::Dim::n || mm.tp_split == models::Dim::count;
}

}  // namespace

bool sequence_split(const models::LayerSpec& layer, bool sequence_parallel) {
  return sequence_parallel && layer.kind == models::LayerKind::transformer_block;
}

LocalMatmul local_matmul(const models::MatmulSpec& spec, std::uint32_t tp) {
  LocalMatmul l{spec.count, spec.m, spec.k, spec.n, false};
  if (tp == 1) return l;
  const std::uint64_t p = parts(spec.tp_units, tp);
  switch (spec.tp_split) {
    case models::Dim::count: l.count = split(l.count, p); break;
    case models::Dim::m: l.m = split(l.m, p); break;
    case models::Dim::k:
      l.k = split(l.k, p);
      l.partial_sum = true;
      break;
    case models::Dim::n: l.n = split(l.n, p); break;
    case models::Dim::none: break;
  }
  if (p < tp && spec.tp_excess == models::Dim::m) l.m = split(l.m, tp / p);
  return l;
}

std::uint64_t local_elements(const models::ElementwiseSpec& spec, std::uint32_t tp, bool sequence) {
  return spec.tp_sharded || sequence ? split(spec.elements, tp) : spec.elements;
}

std::uint64_t local_param_elements(const models::ParamSpec& param, std::uint32_t tp) {
  // Expert weights (shards > 1) are the chip's experts, each whole or
  // (expert_tensor_split) its slice of the MLP width.
  switch (param.tp_split) {
    case models::ParamSplit::rows: return split(param.rows, parts(param.tp_units, tp)) * param.cols / param.shards;
    case models::ParamSplit::cols: return param.rows / param.shards * split(param.cols, parts(param.tp_units, tp));
    case models::ParamSplit::replicated: break;
  }
  return param.elements() / param.shards;
}

bool elementwise_partial_sum(const models::ElementwiseSpec& spec, std::uint32_t tp) {
  return tp > 1 && spec.op == models::ElementwiseOp::embedding_lookup && spec.pass == models::Pass::forward;
}

std::uint64_t local_stash_bytes(const models::LayerSpec& layer, std::uint32_t tp, bool sequence,
                                const std::function<bool(const models::StashSpec&)>& only) {
  const bool input_split = !layer.forward.empty() && layer.forward.front().tp_split == models::Dim::k;
  std::uint64_t bytes = 0;
  for (const auto& s : layer.stash) {
    if (only && !only(s)) continue;
    bool is_split = input_split;  // not written inside the layer: the layer's input
    std::uint64_t p = tp;         // parts it is cut into when split
    for (const auto& mm : layer.forward)
      if (mm.output == s.name) {
        is_split = writes_split_tensor(mm);
        p = parts(mm.tp_units, tp);
      }
    for (const auto& e : layer.elementwise_fwd)
      if (e.output == s.name) is_split = e.tp_sharded;
    bytes += (sequence ? split(s.elements, tp) : is_split ? split(s.elements, p) : s.elements) * s.bytes_per_element;
  }
  return bytes;
}

std::uint64_t local_output_bytes(const models::MatmulSpec& mm, std::uint32_t tp, bool sequence) {
  const std::uint64_t elements = mm.count * mm.m * mm.n;
  return hw::kBf16Bytes * (sequence                  ? split(elements, tp)
                           : writes_split_tensor(mm) ? split(elements, parts(mm.tp_units, tp))
                                                     : elements);
}

}  // namespace workloads
