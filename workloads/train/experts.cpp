#include "workloads/train/experts.h"

#include <algorithm>
#include <numeric>

#include "kernels/program_append.h"
#include "models/moe.h"
#include "workloads/train/tensor_split.h"

namespace workloads {

std::vector<models::LayerRouting> moe_routing(const ForwardStep& step, const models::ModelSpec& model) {
  const models::TransformerConfig& c = step.model.transformer;
  std::vector<models::LayerRouting> out;
  if (!step.model.moe()) return out;
  // One routing per block with experts (LayerSpec::routing_layer counts them).
  // One-hot einsum dispatch: each of the chip's sequences fills a buffer
  // of C rows per expert; the buffers are what the all-to-all moves and
  // the experts compute (models/moe.h).
  const std::uint64_t buffer_rows =
      c.expert_matmul == "einsum" ? model.batch * models::einsum_capacity(c, model.seq_len) : 0;
  for (std::uint64_t b = 0; b < c.moe_layers(); ++b) {
    out.push_back(models::route_layer(c.routing, static_cast<std::uint32_t>(c.experts),
                                      static_cast<std::uint32_t>(c.top_k), c.capacity_factor,
                                      step.parallelism.expert.degree, model.tokens(), b));
    out.back().buffer_rows = buffer_rows;
  }
  return out;
}

std::vector<models::LayerRouting> train_routing(const ForwardStep& step, const models::ModelSpec& micro) {
  if (step.parallelism.expert.degree == 1) return {};
  return moe_routing(step, micro);
}

std::vector<std::uint64_t> expert_loads(const std::vector<models::LayerRouting>& routing, std::uint32_t rank,
                                        std::uint32_t ep) {
  std::vector<std::uint64_t> loads;
  for (const auto& r : routing)
    for (std::uint32_t e = rank * (r.experts / ep); e < (rank + 1) * (r.experts / ep); ++e)
      loads.push_back(r.rows_for(e));
  return loads;
}

bool routed_layer(const PassContext& ctx, const models::LayerSpec& layer) {
  return ctx.routing && !ctx.routing->empty() && !(layer.exchange_fwd.empty() && layer.exchange_bwd.empty());
}

std::uint64_t ChipExperts::local_experts() const {
  return (*ctx_.routing)[block_].experts / ctx_.step.parallelism.expert.degree;
}

std::uint64_t ChipExperts::expert_tokens(std::uint64_t local) const {
  return (*ctx_.routing)[block_].rows_for(static_cast<std::uint32_t>(ctx_.expert_rank * local_experts() + local));
}

std::uint64_t ChipExperts::tokens() const {
  std::uint64_t n = 0;
  for (std::uint64_t j = 0; j < local_experts(); ++j) n += expert_tokens(j);
  return n;
}

Deps ChipExperts::matmuls(hw::Program& prog, const models::MatmulSpec& mm, const std::string& label,
                          const Deps& deps) const {
  const auto tokens_of = [&mm](models::MatmulSpec& one) -> std::uint64_t& {
    return mm.tokens == models::Dim::k ? one.k : one.m;
  };
  if (mm.groups) {
    // One grouped matmul over the experts that got tokens, in whole tiles.
    std::uint64_t rows = 0, groups = 0;
    for (std::uint64_t j = 0; j < local_experts(); ++j) {
      rows += expert_tokens(j);
      groups += expert_tokens(j) > 0;
    }
    if (rows == 0) return deps;
    models::MatmulSpec all = mm;
    tokens_of(all) = models::grouped_kernel_rows(rows, groups, mm.group_tile);
    const LocalMatmul l = local_matmul(all, ctx_.tp());
    const std::uint64_t first = ctx_.expert_rank * local_experts();
    return kernels::append_program(
        prog, ctx_.matmuls.get(l.count, l.m, l.k, l.n, {}, quantized(all, ctx_.quantize)), deps,
        " [" + label + " experts " + std::to_string(first) + "-" + std::to_string(first + local_experts() - 1) + "]");
  }
  Deps sinks;
  for (std::uint64_t j = 0; j < local_experts(); ++j) {
    const std::uint64_t tokens = expert_tokens(j);
    if (tokens == 0) continue;
    models::MatmulSpec one = mm;
    one.count = 1;
    tokens_of(one) = tokens;
    const LocalMatmul l = local_matmul(one, ctx_.tp());
    append(sinks, kernels::append_program(
                      prog, ctx_.matmuls.get(l.count, l.m, l.k, l.n, {}, quantized(one, ctx_.quantize)), deps,
                      " [" + label + " expert " + std::to_string(ctx_.expert_rank * local_experts() + j) + "]"));
  }
  return sinks.empty() ? deps : sinks;
}

std::uint32_t ChipExperts::exchange(hw::Program& prog, const std::string& prefix, const models::ExchangeSpec& x,
                                    const std::string& label, const Deps& deps) const {
  const models::LayerRouting& r = (*ctx_.routing)[block_];
  const std::uint32_t n = ctx_.step.parallelism.expert.degree;
  const std::uint64_t local = r.experts / n;
  std::vector<std::uint64_t> blocks(std::size_t{n} * n, 0);
  for (std::uint32_t i = 0; i < n; ++i)
    for (std::uint32_t j = 0; j < n; ++j) {
      std::uint64_t tokens = 0;
      for (std::uint64_t e = j * local; e < (j + 1) * local; ++e) tokens += r.rows(i, static_cast<std::uint32_t>(e));
      blocks[x.to_experts ? std::size_t{i} * n + j : std::size_t{j} * n + i] = tokens * x.width;
    }
  std::uint64_t largest = 0;
  for (std::uint32_t i = 0; i < n; ++i)
    largest = std::max(largest, std::accumulate(blocks.begin() + std::ptrdiff_t{i} * n,
                                                blocks.begin() + std::ptrdiff_t{i + 1} * n, std::uint64_t{0}));
  const bool equal = std::all_of(blocks.begin(), blocks.end(), [&](std::uint64_t b) { return b == blocks[0]; });
  const auto& axes = ctx_.step.parallelism.expert.axes;
  const std::string name = prefix + " " + label + " all-to-all over " + axes_text(axes);
  const std::uint32_t c = ctx_.collectives.add(
      name, interconnect::CollectiveOp::all_to_all, hw::kBf16Bytes * std::max<std::uint64_t>(largest, 1), axes,
      CollectivePurpose::experts, hw::kBf16Bytes, equal ? std::vector<std::uint64_t>{} : blocks,
      ctx_.step.parallelism.expert_all_to_all);
  return prog.add({name, {hw::EngineKind::ici, kIciTensor}, hw::CommOp{c}, deps, 0});
}

}  // namespace workloads
