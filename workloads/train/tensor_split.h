#pragma once
// What one tensor-parallel rank of `tp` computes and holds (Megatron-LM,
// Shoeybi et al. 2019, arXiv:1909.08053 s.3). The dimension a model op marks
// as split is divided by tp, rounded up: a size that does not divide is
// padded, as Megatron pads the vocabulary.
#include <cstdint>
#include <functional>

#include "hw/bf16.h"
#include "models/layer_spec.h"

namespace workloads {

struct LocalMatmul {
  std::uint64_t count = 1, m = 0, k = 0, n = 0;
  // The contraction is split: each rank holds a partial sum of the whole
  // output, which needs an all-reduce over the tensor-parallel ranks.
  bool partial_sum = false;
  double flops() const { return 2.0 * double(count) * double(m) * double(k) * double(n); }
  std::uint64_t output_bytes() const { return hw::kBf16Bytes * count * m * n; }
};

// Megatron sequence parallelism (Korthikanti et al. 2022, arXiv:2205.05198
// s.4.2.2) with `sequence_parallel`: inside a Transformer block the work
// tensor parallelism leaves replicated (layer norms, residual adds) is split
// along the sequence over the same ranks, and so is every activation the
// block keeps.
bool sequence_split(const models::LayerSpec& layer, bool sequence_parallel);

LocalMatmul local_matmul(const models::MatmulSpec& spec, std::uint32_t tp);
// `sequence`: the op's layer is sequence_split.
std::uint64_t local_elements(const models::ElementwiseSpec& spec, std::uint32_t tp, bool sequence = false);
// Expert weights (ParamSpec::shards): the chip's share of the experts, and
// of each expert's MLP width when tensor parallelism splits them.
std::uint64_t local_param_elements(const models::ParamSpec& param, std::uint32_t tp);

// True for the vocabulary-parallel embedding lookup: each rank holds a slice
// of the table's rows, so its output is a partial sum that needs an
// all-reduce (Megatron-LM s.3, "input embedding").
bool elementwise_partial_sum(const models::ElementwiseSpec& spec, std::uint32_t tp);

// Activation bytes one rank stashes for one layer and one microbatch. A
// stashed tensor is split when the op that writes it is: a column- or
// head-parallel matmul, or an elementwise op marked tp_sharded. A layer's own
// input (not written inside the layer) is split when its first forward
// matmul is row-parallel (it arrives split), else replicated. For a
// Transformer block this gives sbh (8 + 24/t) + 2 a s^2 b / t: Korthikanti et
// al. 2022 (arXiv:2205.05198) s.4.2.1's sbh (10 + 24/t) + 5 a s^2 b / t less
// the dropout masks (2 sbh, a s^2 b / t) and the attention dropout output
// (2 a s^2 b / t), which this model does not have. With `sequence` (the
// layer is sequence_split) every tensor is split: 32 sbh / t + 2 a s^2 b / t,
// Korthikanti's sbh 34 / t + 5 a s^2 b / t (s.4.2.2) less the same.
// With `only`, the entries it accepts.
std::uint64_t local_stash_bytes(const models::LayerSpec& layer, std::uint32_t tp, bool sequence = false,
                                const std::function<bool(const models::StashSpec&)>& only = {});

// BF16 bytes of a forward matmul's output on one rank: split when the
// matmul writes a split tensor (column- or head-parallel) or with
// `sequence` (the layer is sequence_split: a row-parallel output is
// reduce-scattered); a row-parallel output is whole after its all-reduce.
std::uint64_t local_output_bytes(const models::MatmulSpec& mm, std::uint32_t tp, bool sequence = false);

}  // namespace workloads
