#include "workloads/train/tensor_split.h"

namespace workloads {

namespace {

std::uint64_t split(std::uint64_t size, std::uint32_t tp) { return (size + tp - 1) / tp; }

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
  switch (spec.tp_split) {
    case models::Dim::count: l.count = split(l.count, tp); break;
    case models::Dim::m: l.m = split(l.m, tp); break;
    case models::Dim::k:
      l.k = split(l.k, tp);
      l.partial_sum = true;
      break;
    case models::Dim::n: l.n = split(l.n, tp); break;
    case models::Dim::none: break;
  }
  return l;
}

std::uint64_t local_elements(const models::ElementwiseSpec& spec, std::uint32_t tp, bool sequence) {
  return spec.tp_sharded || sequence ? split(spec.elements, tp) : spec.elements;
}

std::uint64_t local_param_elements(const models::ParamSpec& param, std::uint32_t tp) {
  switch (param.tp_split) {
    case models::ParamSplit::rows: return split(param.rows, tp) * param.cols;
    case models::ParamSplit::cols: return param.rows * split(param.cols, tp);
    case models::ParamSplit::replicated: break;
  }
  return param.elements() / param.shards;  // expert weights: the chip's whole experts
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
    for (const auto& mm : layer.forward)
      if (mm.output == s.name) is_split = writes_split_tensor(mm);
    for (const auto& e : layer.elementwise_fwd)
      if (e.output == s.name) is_split = e.tp_sharded;
    bytes += (is_split || sequence ? split(s.elements, tp) : s.elements) * s.bytes_per_element;
  }
  return bytes;
}

std::uint64_t local_output_bytes(const models::MatmulSpec& mm, std::uint32_t tp, bool sequence) {
  const std::uint64_t elements = mm.count * mm.m * mm.n;
  return hw::kBf16Bytes * (writes_split_tensor(mm) || sequence ? split(elements, tp) : elements);
}

}  // namespace workloads
