#include "workloads/train/layer_pass.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "kernels/program_append.h"
#include "models/moe.h"
#include "sim/units.h"
#include "workloads/train/experts.h"
#include "workloads/train/tensor_split.h"

namespace workloads {

namespace {

// One callable of several lambdas: a visitor with one arm per item kind.
template <class... Arms>
struct Visitor : Arms... {
  using Arms::operator()...;
};
template <class... Arms>
Visitor(Arms...) -> Visitor<Arms...>;

}  // namespace

LayerPass::LayerPass(const PassContext& ctx, hw::Program& prog, std::uint32_t stage, const models::LayerSpec& layer,
                     bool backward, std::string tag, Deps input, const std::vector<RingTransfer>& ring)
    : ctx_(ctx),
      prog_(prog),
      stage_(stage),
      tag_(std::move(tag)),
      input_(std::move(input)),
      sequence_(sequence_split(layer, ctx.step.parallelism.sequence)),
      routed_(routed_layer(ctx, layer)),
      block_(layer.routing_layer),
      tensor_(ctx, prog, "stage" + std::to_string(stage) + " " + tag_, sequence_,
              sequence_ && ctx.step.collective_matmul && ctx.tp() > 1) {
  for (const auto& mm : backward ? layer.backward : layer.forward) items_.emplace_back(&mm);
  for (const auto& ew : backward ? layer.elementwise_bwd : layer.elementwise_fwd) items_.emplace_back(&ew);
  for (const auto& t : ring) items_.emplace_back(&t);
  for (const auto& x : backward ? layer.exchange_bwd : layer.exchange_fwd) items_.emplace_back(&x);
  for (std::size_t i = 0; i < items_.size(); ++i) index_[name(i)] = i;
  state_.assign(items_.size(), kNew);
  consumed_.assign(items_.size(), 0);
  sinks_.resize(items_.size());
  chunks_.resize(items_.size());
  owed_.assign(items_.size(), -1);
  for (std::size_t i = 0; i < items_.size(); ++i)
    for (const auto& a : after(i)) consumed_[lookup(a, i)] = 1;
}

PassResult LayerPass::build() {
  for (std::size_t i = 0; i < items_.size(); ++i) build_item(i);
  PassResult r;
  for (std::size_t i = 0; i < items_.size(); ++i) {
    if (consumed_[i]) continue;
    // A gather still owed leaves the pass whole, as without collective
    // matmul: the next layer reads it.
    const Deps done = ready(i);
    const int g = owes(i);
    append(weight(i) ? r.weight : r.data, g >= 0 ? Deps{tensor_.plain_gather(g)} : done);
  }
  return r;
}

const std::string& LayerPass::name(std::size_t i) const {
  return std::visit([](const auto* item) -> const std::string& { return item->name; }, items_[i]);
}

const std::string& LayerPass::output(std::size_t i) const {
  return std::visit(Visitor{[](const RingTransfer* t) -> const std::string& { return t->name; },
                            [](const auto* item) -> const std::string& { return item->output; }},
                    items_[i]);
}

const std::vector<std::string>& LayerPass::after(std::size_t i) const {
  return std::visit([](const auto* item) -> const std::vector<std::string>& { return item->after; }, items_[i]);
}

bool LayerPass::weight(std::size_t i) const {
  return std::visit(Visitor{[](const models::MatmulSpec* mm) { return mm->pass == models::Pass::backward_weight; },
                            [](const models::ElementwiseSpec* ew) { return ew->pass == models::Pass::backward_weight; },
                            [](const auto*) { return false; }},
                    items_[i]);
}

bool LayerPass::partial_sum(std::size_t i) const {
  const std::uint32_t tp = ctx_.tp();
  return std::visit(Visitor{[tp](const models::MatmulSpec* mm) { return local_matmul(*mm, tp).partial_sum; },
                            [tp](const models::ElementwiseSpec* ew) { return elementwise_partial_sum(*ew, tp); },
                            [](const auto*) { return false; }},
                    items_[i]);
}

std::uint64_t LayerPass::output_bytes(std::size_t i) const {
  const std::uint32_t tp = ctx_.tp();
  return std::visit(
      Visitor{[&](const models::MatmulSpec* mm) {
                LocalMatmul l = local_matmul(*mm, tp);
                // A routed expert's partial sum (row-parallel down, the dX
                // of column-parallel up and gate): every row the chip's
                // experts computed.
                if (mm->tokens == models::Dim::m && routed_) {
                  l.count = 1;
                  l.m = ChipExperts(ctx_, block_).tokens();
                }
                return l.output_bytes();
              },
              [&](const models::ElementwiseSpec* ew) { return hw::kBf16Bytes * local_elements(*ew, tp, sequence_); },
              [](const auto*) -> std::uint64_t { throw std::logic_error("only matmuls and elementwise ops sum"); }},
      items_[i]);
}

std::size_t LayerPass::lookup(const std::string& n, std::size_t from) const {
  auto it = index_.find(n);
  if (it == index_.end()) throw std::logic_error("model op '" + name(from) + "' waits for unknown op '" + n + "'");
  return it->second;
}

void LayerPass::build_item(std::size_t i) {
  if (state_[i] == kBuilt) return;
  if (state_[i] == kBuilding) throw std::logic_error("model ops wait for each other in a cycle at '" + name(i) + "'");
  state_[i] = kBuilding;
  Deps deps;
  int owed = -1;  // the gather this item's input still owes (collective matmul)
  if (after(i).empty()) deps = input_;
  for (const auto& a : after(i)) {
    const std::size_t j = lookup(a, i);
    build_item(j);
    append(deps, ready(j));
    if (owes(j) >= 0) owed = owes(j);
  }
  const std::string label = tag_ + " " + name(i);
  const auto* mm = std::get_if<const models::MatmulSpec*>(&items_[i]);
  if (owed >= 0) {
    if (std::holds_alternative<const models::ElementwiseSpec*>(items_[i])) {
      owed_[i] = owed;  // split elementwise work (sequence_split): no gather needed yet
    } else if (mm && tensor_.token_chunks(**mm, routed_) && !partial_sum(i)) {
      // The matmul reading the gathered tensor, in tp chunks of its
      // tokens: chunk c waits for the c-th shard to arrive around the ring.
      const std::vector<std::uint32_t>& ring = tensor_.shard_ring(owed);
      for (std::uint32_t c = 0; c < ctx_.tp(); ++c) {
        Deps d = deps;
        if (c > 0) d.push_back(ring[c - 1]);
        append(sinks_[i], tensor_.chunk(**mm, d, label, c));
      }
      state_[i] = kBuilt;
      return;
    } else {
      deps.push_back(tensor_.plain_gather(owed));
    }
  }
  std::visit(Visitor{[&](const models::MatmulSpec* m) { build_matmul(i, *m, deps, label); },
                     [&](const models::ElementwiseSpec* ew) { build_elementwise(i, *ew, deps, label); },
                     [&](const RingTransfer* t) { build_ring(i, *t, deps, label); },
                     [&](const models::ExchangeSpec* x) { build_exchange(i, *x, deps, label); }},
             items_[i]);
  state_[i] = kBuilt;
}

void LayerPass::build_matmul(std::size_t i, const models::MatmulSpec& mm, const Deps& deps, const std::string& label) {
  if (mm.tokens != models::Dim::none && routed_) {
    sinks_[i] = ChipExperts(ctx_, block_).matmuls(prog_, mm, label, deps);
  } else if (tensor_.windowed() && partial_sum(i) && tensor_.token_chunks(mm, routed_)) {
    // A partial sum to reduce-scatter: computed in tp chunks of its
    // tokens, each sent on around the ring (ready) while the next runs.
    for (std::uint32_t c = 0; c < ctx_.tp(); ++c) {
      chunks_[i].push_back(tensor_.chunk(mm, deps, label, c));
      append(sinks_[i], chunks_[i].back());
    }
  } else {
    LocalMatmul l = local_matmul(mm, ctx_.tp());
    // A grouped expert matmul computes whole tiles along its tokens.
    if (mm.groups) {
      std::uint64_t& rows = mm.tokens == models::Dim::k ? l.k : l.m;
      rows = models::grouped_kernel_rows(rows, mm.groups, mm.group_tile);
    }
    // Flash attention's fused matmuls: m is a sequence axis of each of
    // them (queries or keys), the triangle's side.
    // A sliding window's band: the kernel computes only the blocks it covers.
    const kernels::MatmulFusion fusion{mm.a_on_chip, mm.out_on_chip, mm.causal, l.m, mm.window};
    sinks_[i] =
        kernels::append_program(prog_, ctx_.matmuls.get(l.count, l.m, l.k, l.n, fusion, quantized(mm, ctx_.quantize)),
                                deps, " [" + label + "]");
  }
}

void LayerPass::build_elementwise(std::size_t i, const models::ElementwiseSpec& ew, const Deps& deps,
                                  const std::string& label) {
  // A routed expert's activation: its rows x its width on this rank (a
  // slice of the MLP width under tensor parallelism, tp_sharded).
  const std::uint64_t elements =
      ew.routed_width && routed_
          ? ChipExperts(ctx_, block_).tokens() *
                (ew.tp_sharded ? sim::ceil_div(ew.routed_width, std::uint64_t{ctx_.tp()}) : ew.routed_width)
          : local_elements(ew, ctx_.tp(), sequence_);
  const std::uint64_t bytes =
      ew.elements && ctx_.step.elementwise == Elementwise::unfused ? ew.bytes / ew.elements * elements : 0;
  const std::uint64_t store = std::min(bytes, hw::kBf16Bytes * elements);  // the BF16 output
  sinks_[i] = kernels::append_stream(prog_, ctx_.exp.chip, ctx_.exp.fidelity,
                                     {bytes - store, store, elements, ew.flops_per_element}, deps, label);
}

void LayerPass::build_ring(std::size_t i, const RingTransfer& t, const Deps& deps, const std::string& label) {
  // A block one hop on around the context axes (every chip sends to the
  // next in group order).
  const auto& axes = ctx_.step.parallelism.context.axes;
  const std::string n = "stage" + std::to_string(stage_) + " " + label + " permute over " + axes_text(axes);
  sinks_[i] = {ctx_.collectives.op(prog_, n, t.gradients ? kIciContextGrads : kIciContext,
                                   interconnect::CollectiveOp::permute, t.bytes, axes, CollectivePurpose::context,
                                   deps)};
}

void LayerPass::build_exchange(std::size_t i, const models::ExchangeSpec& x, const Deps& deps,
                               const std::string& label) {
  // One chip holding every expert (no expert parallelism): nothing moves.
  sinks_[i] = routed_ && ctx_.step.parallelism.expert.degree > 1
                  ? Deps{ChipExperts(ctx_, block_).exchange(prog_, "stage" + std::to_string(stage_), x, label, deps)}
                  : deps;
}

int LayerPass::owes(std::size_t i) const {
  if (!partial_sum(i)) return owed_[i];
  return tensor_.gather_of(output(i));
}

Deps LayerPass::ready(std::size_t i) {
  if (!partial_sum(i)) return sinks_[i];
  const std::string& tensor = output(i);
  if (auto done = tensor_.reduced(tensor)) return *done;
  Deps deps;
  std::uint64_t bytes = 0;
  bool chunked = true;
  for (std::size_t j = 0; j < items_.size(); ++j) {
    if (output(j) != tensor) continue;
    build_item(j);
    append(deps, sinks_[j]);
    bytes = std::max(bytes, output_bytes(j));
    chunked = chunked && !chunks_[j].empty();
  }
  std::vector<Deps> chunks;
  if (tensor_.windowed() && chunked) {
    chunks.resize(ctx_.tp());
    for (std::uint32_t c = 0; c < ctx_.tp(); ++c)
      for (std::size_t j = 0; j < items_.size(); ++j)
        if (output(j) == tensor) append(chunks[c], chunks_[j][c]);
  }
  return tensor_.reduce(tensor, deps, bytes, chunks);
}

}  // namespace workloads
