#include "workloads/train/tensor_parallel.h"

#include <utility>

#include "kernels/program_append.h"
#include "workloads/train/holdings.h"
#include "workloads/train/tensor_split.h"

namespace workloads {

TensorCollectives::TensorCollectives(const PassContext& ctx, hw::Program& prog, std::string prefix, bool sequence,
                                     bool windowed)
    : ctx_(ctx), prog_(prog), prefix_(std::move(prefix)), sequence_(sequence), windowed_(windowed) {}

bool TensorCollectives::token_chunks(const models::MatmulSpec& mm, bool routed) const {
  if (mm.kind != models::MatmulKind::linear || mm.tokens != models::Dim::none || routed) return false;
  const LocalMatmul l = local_matmul(mm, ctx_.tp());
  const std::uint64_t tokens = mm.pass == models::Pass::backward_weight ? l.k : l.m;
  return l.count == 1 && tokens % ctx_.tp() == 0;
}

Deps TensorCollectives::chunk(const models::MatmulSpec& mm, const Deps& deps, const std::string& label,
                              std::uint32_t c) {
  const LocalMatmul l = local_matmul(mm, ctx_.tp());
  const bool on_k = mm.pass == models::Pass::backward_weight;
  const std::uint64_t m = on_k ? l.m : l.m / ctx_.tp(), k = on_k ? l.k / ctx_.tp() : l.k;
  return kernels::append_program(prog_, ctx_.matmuls.get(1, m, k, l.n, {}, quantized(mm, ctx_.quantize)), deps,
                                 " [" + label + " chunk " + std::to_string(c) + "]");
}

std::uint32_t TensorCollectives::collective(const std::string& name, interconnect::CollectiveOp op, std::uint64_t bytes,
                                            const Deps& after) {
  const auto& axes = ctx_.step.parallelism.tensor.axes;
  return ctx_.collectives.op(prog_, name + " over " + axes_text(axes) + ctx_.tokens_tag, kIciTensor, op, bytes, axes,
                             CollectivePurpose::tensor_parallel, after);
}

std::optional<Deps> TensorCollectives::reduced(const std::string& tensor) const {
  auto it = reduced_.find(tensor);
  if (it == reduced_.end()) return std::nullopt;
  return it->second;
}

Deps TensorCollectives::reduce(const std::string& tensor, const Deps& producers, std::uint64_t bytes,
                               const std::vector<Deps>& chunks) {
  const std::string n = prefix_ + " " + tensor;
  const std::uint32_t tp = ctx_.tp();
  const std::uint64_t padded = hw::kBf16Bytes * gathered_elements(bytes / hw::kBf16Bytes, tp);
  if (windowed_ && !chunks.empty()) {
    // The reduce-scatter as a collective matmul: the accumulator of chunk
    // c (every producer's) goes on to the next rank, which adds its own;
    // the last chunk's sum is this rank's shard. The all-gather is owed
    // to the next linear matmul (gather_of).
    Deps after;
    for (std::uint32_t c = 0; c < tp; ++c) {
      append(after, chunks[c]);
      if (c + 1 < tp)
        after = {collective(n + " chunk " + std::to_string(c) + " reduce-scatter permute",
                            interconnect::CollectiveOp::permute, padded / tp, after)};
    }
    gather_of_[tensor] = static_cast<int>(gathers_.size());
    gathers_.push_back({n, padded, after, {}, std::nullopt});
    reduced_[tensor] = after;
    return after;
  }
  std::uint32_t op = 0;
  if (sequence_) {
    // Megatron-SP's g and g-bar: the partial sums reduce-scattered along
    // the sequence, then all-gathered for the next matmul (the split
    // layer norm or residual add between them is already 1/t).
    const std::uint32_t rs =
        collective(n + " reduce-scatter", interconnect::CollectiveOp::reduce_scatter, padded, producers);
    op = collective(n + " all-gather", interconnect::CollectiveOp::all_gather, padded, {rs});
  } else {
    op = collective(n + " all-reduce", interconnect::CollectiveOp::all_reduce, bytes, producers);
  }
  reduced_[tensor] = {op};
  return {op};
}

int TensorCollectives::gather_of(const std::string& tensor) const {
  auto it = gather_of_.find(tensor);
  return it == gather_of_.end() ? -1 : it->second;
}

const std::vector<std::uint32_t>& TensorCollectives::shard_ring(int g) {
  Gather& gather = gathers_[static_cast<std::size_t>(g)];
  if (gather.ring.empty()) {
    Deps after = gather.local;
    for (std::uint32_t c = 1; c < ctx_.tp(); ++c) {
      gather.ring.push_back(collective(gather.name + " shard " + std::to_string(c) + " permute",
                                       interconnect::CollectiveOp::permute, gather.bytes / ctx_.tp(), after));
      after = {gather.ring.back()};
    }
  }
  return gather.ring;
}

std::uint32_t TensorCollectives::plain_gather(int g) {
  Gather& gather = gathers_[static_cast<std::size_t>(g)];
  if (!gather.whole)
    gather.whole =
        collective(gather.name + " all-gather", interconnect::CollectiveOp::all_gather, gather.bytes, gather.local);
  return *gather.whole;
}

}  // namespace workloads
