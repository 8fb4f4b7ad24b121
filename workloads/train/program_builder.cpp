#include "workloads/train/program_builder.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include "hw/bf16.h"
#include "hw/host_link.h"
#include "kernels/program_append.h"
#include "kernels/train_kernels.h"
#include "models/routing.h"
#include "sim/units.h"
#include "workloads/experiment.h"
#include "workloads/train/ring_attention.h"
#include "workloads/train/stages.h"
#include "workloads/train/tensor_split.h"

namespace workloads {

namespace {

using Deps = std::vector<std::uint32_t>;

// The matmuls precision.matmul applies to: a linear layer's forward
// (activations x weights) and input gradient (dY x W^T), as MaxText's int8
// training quantizes them (AQT's fwd and dlhs at 8 bits; its drhs, the
// weight gradient X^T dY, stays bf16 unless quantization_local_shard_count
// is set: docs/calibration.md#number-formats). Attention's activation x
// activation matmuls stay bf16.
// Inference (build_forward_program) picks which of the two kinds run in its
// 8-bit format: the linear ones (weights) and the attention ones (KV cache).
bool quantized(const models::MatmulSpec& mm, const QuantizedMatmuls& q) {
  if (mm.kind != models::MatmulKind::linear) return q.attention;
  return q.linear && !mm.weight.empty() && mm.pass != models::Pass::backward_weight;
}

std::string axes_text(const std::vector<std::string>& axes) {
  std::string s;
  for (const auto& a : axes) s += (s.empty() ? "" : ",") + a;
  return s;
}

void append(Deps& to, const Deps& from) {
  for (auto d : from)
    if (std::find(to.begin(), to.end(), d) == to.end()) to.push_back(d);
}

// Chips that name the same collective join the same one.
class CollectiveRegistry {
 public:
  explicit CollectiveRegistry(TrainProgram& out) : out_(out) {}
  std::uint32_t add(const std::string& name, interconnect::CollectiveOp op, std::uint64_t bytes,
                    const std::vector<std::string>& axes, CollectivePurpose purpose,
                    std::uint32_t element_bytes = hw::kBf16Bytes, std::vector<std::uint64_t> pair_elements = {},
                    interconnect::Algorithm algorithm = interconnect::Algorithm::automatic) {
    auto [it, fresh] = by_name_.emplace(name, static_cast<std::uint32_t>(out_.pod.collectives.size()));
    if (fresh) {
      interconnect::CollectiveSpec c;
      c.op = op;
      c.bytes = bytes;
      c.element_bytes = static_cast<int>(element_bytes);  // BF16 activations; weights and gradients as stored
      c.axes = axes;
      c.pair_elements = std::move(pair_elements);
      c.algorithm = algorithm;
      out_.pod.collectives.push_back(std::move(c));
      out_.pod.collective_names.push_back(name);
      out_.collective_purpose.push_back(purpose);
    }
    return it->second;
  }

 private:
  TrainProgram& out_;
  std::unordered_map<std::string, std::uint32_t> by_name_;
};

struct Context {
  const Experiment& exp;
  const TrainSpec& spec;
  const models::ModelSpec& model;
  kernels::MatmulPrograms& matmuls;
  CollectiveRegistry& collectives;
  QuantizedMatmuls quantize;
  // Mixture of experts: each block's routing (by block index; empty
  // without experts or expert parallelism) and the chip's rank among the
  // expert-parallel chips, whose experts are rank x local .. + local - 1.
  const std::vector<models::LayerRouting>* routing = nullptr;
  std::uint32_t expert_rank = 0;
  // Per-replica input lengths (input.h): " (N tokens)" on the collectives
  // of a replica whose sequences are N tokens instead of model.seq_len, so
  // that its tensor-parallel group joins its own (its bytes are its own);
  // empty otherwise. Collectives over the data axes keep their names.
  std::string tokens_tag;
  std::uint32_t tp() const { return spec.parallelism.tensor.degree; }
  // The tokens the chip's `local`-th expert keeps in layer `block`.
  std::uint64_t expert_tokens(std::uint64_t block, std::uint64_t local, std::uint64_t per_chip) const {
    return (*routing)[block].kept_by(static_cast<std::uint32_t>(expert_rank * per_chip + local));
  }
};

// What one layer's pass leaves: the data path on to the next layer, and the
// weight gradients (backward).
struct PassResult {
  Deps data, weight;
  Deps all() const {
    Deps d = data;
    append(d, weight);
    return d;
  }
};

// One pass (forward or backward) of one layer on one chip: every op after
// the ops its spec names in `after` (the layer's input when none), partial
// sums all-reduced over the tensor-parallel ranks before anything reads them.
class LayerPass {
 public:
  // `ring`: the pass's ring attention permutes (ring_attention.h), which
  // its ops name in `after` as they name each other.
  LayerPass(const Context& ctx, hw::Program& prog, std::uint32_t stage, const models::LayerSpec& layer, bool backward,
            std::string tag, Deps input, const std::vector<RingTransfer>& ring = {})
      : ctx_(ctx),
        prog_(prog),
        stage_(stage),
        tag_(std::move(tag)),
        input_(std::move(input)),
        sequence_(sequence_split(layer, ctx.spec.parallelism.sequence)),
        windowed_(sequence_ && ctx.spec.collective_matmul && ctx.tp() > 1) {
    for (const auto& mm : backward ? layer.backward : layer.forward) items_.push_back({&mm, nullptr, nullptr, nullptr});
    for (const auto& ew : backward ? layer.elementwise_bwd : layer.elementwise_fwd)
      items_.push_back({nullptr, &ew, nullptr, nullptr});
    for (const auto& t : ring) items_.push_back({nullptr, nullptr, &t, nullptr});
    for (const auto& x : backward ? layer.exchange_bwd : layer.exchange_fwd)
      items_.push_back({nullptr, nullptr, nullptr, &x});
    routed_ = ctx.routing && !ctx.routing->empty() && !(layer.exchange_fwd.empty() && layer.exchange_bwd.empty());
    block_ = layer.routing_layer;
    for (std::size_t i = 0; i < items_.size(); ++i) index_[name(i)] = i;
    state_.assign(items_.size(), kNew);
    consumed_.assign(items_.size(), 0);
    sinks_.resize(items_.size());
    chunks_.resize(items_.size());
    owed_.assign(items_.size(), -1);
    for (std::size_t i = 0; i < items_.size(); ++i)
      for (const auto& a : after(i)) consumed_[lookup(a, i)] = 1;
  }

  PassResult build() {
    for (std::size_t i = 0; i < items_.size(); ++i) build_item(i);
    PassResult r;
    for (std::size_t i = 0; i < items_.size(); ++i) {
      if (consumed_[i]) continue;
      // A gather still owed leaves the pass whole, as without collective
      // matmul: the next layer reads it.
      const Deps done = ready(i);
      const int g = owes(i);
      append(weight(i) ? r.weight : r.data, g >= 0 ? Deps{plain_gather(g)} : done);
    }
    return r;
  }

 private:
  struct Item {  // one of the four
    const models::MatmulSpec* mm;
    const models::ElementwiseSpec* ew;
    const RingTransfer* ring;
    const models::ExchangeSpec* ex;
  };
  enum State : char { kNew, kBuilding, kBuilt };

  const std::string& name(std::size_t i) const {
    const Item& it = items_[i];
    return it.mm ? it.mm->name : it.ew ? it.ew->name : it.ring ? it.ring->name : it.ex->name;
  }
  const std::string& output(std::size_t i) const {
    const Item& it = items_[i];
    return it.mm ? it.mm->output : it.ew ? it.ew->output : it.ring ? it.ring->name : it.ex->output;
  }
  const std::vector<std::string>& after(std::size_t i) const {
    const Item& it = items_[i];
    return it.mm ? it.mm->after : it.ew ? it.ew->after : it.ring ? it.ring->after : it.ex->after;
  }
  bool weight(std::size_t i) const {
    if (items_[i].ring || items_[i].ex) return false;
    const models::Pass p = items_[i].mm ? items_[i].mm->pass : items_[i].ew->pass;
    return p == models::Pass::backward_weight;
  }
  bool partial_sum(std::size_t i) const {
    if (items_[i].ring || items_[i].ex) return false;
    return items_[i].mm ? local_matmul(*items_[i].mm, ctx_.tp()).partial_sum
                        : elementwise_partial_sum(*items_[i].ew, ctx_.tp());
  }
  std::uint64_t output_bytes(std::size_t i) const {
    return items_[i].mm ? local_matmul(*items_[i].mm, ctx_.tp()).output_bytes()
                        : hw::kBf16Bytes * local_elements(*items_[i].ew, ctx_.tp(), sequence_);
  }
  std::size_t lookup(const std::string& n, std::size_t from) const {
    auto it = index_.find(n);
    if (it == index_.end()) throw std::logic_error("model op '" + name(from) + "' waits for unknown op '" + n + "'");
    return it->second;
  }

  void build_item(std::size_t i) {
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
    if (owed >= 0) {
      if (items_[i].ew) {
        owed_[i] = owed;  // split elementwise work (sequence_split): no gather needed yet
      } else if (const auto* mm = items_[i].mm; mm && token_chunks(*mm) && !partial_sum(i)) {
        // The matmul reading the gathered tensor, in tp chunks of its
        // tokens: chunk c waits for the c-th shard to arrive around the ring.
        const std::vector<std::uint32_t>& ring = shard_ring(owed);
        sinks_[i] = {};
        for (std::uint32_t c = 0; c < ctx_.tp(); ++c) {
          Deps d = deps;
          if (c > 0) d.push_back(ring[c - 1]);
          append(sinks_[i], chunk(*mm, d, label, c));
        }
        state_[i] = kBuilt;
        return;
      } else {
        deps.push_back(plain_gather(owed));
      }
    }
    if (const auto* x = items_[i].ex) {
      // One chip holding every expert (no expert parallelism): nothing moves.
      sinks_[i] = routed_ && ctx_.spec.parallelism.expert.degree > 1 ? Deps{exchange(*x, label, deps)} : deps;
    } else if (items_[i].mm && items_[i].mm->tokens != models::Dim::none && routed_) {
      sinks_[i] = expert_matmuls(*items_[i].mm, label, deps);
    } else if (const auto* t = items_[i].ring) {
      // A block one hop on around the context axes (every chip sends to
      // the next in group order).
      const auto& axes = ctx_.spec.parallelism.context.axes;
      const std::string n = "stage" + std::to_string(stage_) + " " + label + " permute over " + axes_text(axes);
      const std::uint32_t c =
          ctx_.collectives.add(n, interconnect::CollectiveOp::permute, t->bytes, axes, CollectivePurpose::context);
      sinks_[i] = {
          prog_.add({n, {hw::EngineKind::ici, t->gradients ? kIciContextGrads : kIciContext}, hw::CommOp{c}, deps, 0})};
    } else if (const auto* mm = items_[i].mm; mm && windowed_ && partial_sum(i) && token_chunks(*mm)) {
      // A partial sum to reduce-scatter: computed in tp chunks of its
      // tokens, each sent on around the ring (ready) while the next runs.
      for (std::uint32_t c = 0; c < ctx_.tp(); ++c) {
        chunks_[i].push_back(chunk(*mm, deps, label, c));
        append(sinks_[i], chunks_[i].back());
      }
    } else if (const auto* mm = items_[i].mm) {
      const LocalMatmul l = local_matmul(*mm, ctx_.tp());
      // Flash attention's fused matmuls: m is a sequence axis of each of
      // them (queries or keys), the triangle's side.
      const kernels::MatmulFusion fusion{mm->a_on_chip, mm->out_on_chip, mm->causal, l.m};
      sinks_[i] = kernels::append_program(
          prog_, ctx_.matmuls.get(l.count, l.m, l.k, l.n, fusion, quantized(*mm, ctx_.quantize)), deps,
          " [" + label + "]");
    } else {
      const auto& ew = *items_[i].ew;
      const std::uint64_t elements =
          ew.routed_width && routed_ ? chip_tokens() * ew.routed_width : local_elements(ew, ctx_.tp(), sequence_);
      const std::uint64_t bytes =
          ew.elements && ctx_.spec.elementwise == Elementwise::unfused ? ew.bytes / ew.elements * elements : 0;
      const std::uint64_t store = std::min(bytes, hw::kBf16Bytes * elements);  // the BF16 output
      sinks_[i] = kernels::append_stream(prog_, ctx_.exp.chip, ctx_.exp.fidelity,
                                         {bytes - store, store, elements, ew.flops_per_element}, deps, label);
    }
    state_[i] = kBuilt;
  }

  // Mixture of experts. The experts the chip holds, and the tokens they keep.
  std::uint64_t local_experts() const { return (*ctx_.routing)[block_].experts / ctx_.spec.parallelism.expert.degree; }
  std::uint64_t chip_tokens() const {
    std::uint64_t n = 0;
    for (std::uint64_t j = 0; j < local_experts(); ++j) n += ctx_.expert_tokens(block_, j, local_experts());
    return n;
  }
  // An expert matmul of the model (count = the chip's experts, the uniform
  // share of tokens each) as the chip runs it: one matmul per expert on
  // the tokens its router sent it (none for an expert that got none).
  Deps expert_matmuls(const models::MatmulSpec& mm, const std::string& label, const Deps& deps) {
    Deps sinks;
    for (std::uint64_t j = 0; j < local_experts(); ++j) {
      const std::uint64_t tokens = ctx_.expert_tokens(block_, j, local_experts());
      if (tokens == 0) continue;
      models::MatmulSpec one = mm;
      one.count = 1;
      (mm.tokens == models::Dim::k ? one.k : one.m) = tokens;
      const LocalMatmul l = local_matmul(one, ctx_.tp());
      append(sinks, kernels::append_program(
                        prog_, ctx_.matmuls.get(l.count, l.m, l.k, l.n, {}, quantized(one, ctx_.quantize)), deps,
                        " [" + label + " expert " + std::to_string(ctx_.expert_rank * local_experts() + j) + "]"));
    }
    return sinks.empty() ? deps : sinks;
  }
  // The all-to-all over the expert axes: chip i sends chip j the tokens
  // (width elements each) of its own that chip j's experts keep; back the
  // other way. Equal blocks everywhere (uniform routing that divides
  // evenly) make it the plain all-to-all.
  std::uint32_t exchange(const models::ExchangeSpec& x, const std::string& label, const Deps& deps) {
    const models::LayerRouting& r = (*ctx_.routing)[block_];
    const std::uint32_t n = ctx_.spec.parallelism.expert.degree;
    const std::uint64_t local = r.experts / n;
    std::vector<std::uint64_t> blocks(std::size_t{n} * n, 0);
    for (std::uint32_t i = 0; i < n; ++i)
      for (std::uint32_t j = 0; j < n; ++j) {
        std::uint64_t tokens = 0;
        for (std::uint64_t e = j * local; e < (j + 1) * local; ++e) tokens += r.kept[std::size_t{i} * r.experts + e];
        blocks[x.to_experts ? std::size_t{i} * n + j : std::size_t{j} * n + i] = tokens * x.width;
      }
    std::uint64_t largest = 0;
    for (std::uint32_t i = 0; i < n; ++i)
      largest = std::max(largest, std::accumulate(blocks.begin() + std::ptrdiff_t{i} * n,
                                                  blocks.begin() + std::ptrdiff_t{i + 1} * n, std::uint64_t{0}));
    const bool equal = std::all_of(blocks.begin(), blocks.end(), [&](std::uint64_t b) { return b == blocks[0]; });
    const auto& axes = ctx_.spec.parallelism.expert.axes;
    const std::string name = "stage" + std::to_string(stage_) + " " + label + " all-to-all over " + axes_text(axes);
    const std::uint32_t c = ctx_.collectives.add(
        name, interconnect::CollectiveOp::all_to_all, hw::kBf16Bytes * std::max<std::uint64_t>(largest, 1), axes,
        CollectivePurpose::experts, hw::kBf16Bytes, equal ? std::vector<std::uint64_t>{} : blocks,
        ctx_.spec.parallelism.expert_all_to_all);
    return prog_.add({name, {hw::EngineKind::ici, kIciTensor}, hw::CommOp{c}, deps, 0});
  }

  // Collective matmul (TrainSpec::collective_matmul; XLA's windowed
  // einsum, docs/calibration.md#maxtext-128b-tensor). A linear matmul's
  // tokens (m; k of a weight gradient, as MatmulSpec::tokens) split into
  // tp chunks, when they divide.
  bool token_chunks(const models::MatmulSpec& mm) const {
    if (mm.kind != models::MatmulKind::linear || mm.tokens != models::Dim::none || routed_) return false;
    const LocalMatmul l = local_matmul(mm, ctx_.tp());
    const std::uint64_t tokens = mm.pass == models::Pass::backward_weight ? l.k : l.m;
    return l.count == 1 && tokens % ctx_.tp() == 0;
  }
  Deps chunk(const models::MatmulSpec& mm, const Deps& deps, const std::string& label, std::uint32_t c) {
    const LocalMatmul l = local_matmul(mm, ctx_.tp());
    const bool on_k = mm.pass == models::Pass::backward_weight;
    const std::uint64_t m = on_k ? l.m : l.m / ctx_.tp(), k = on_k ? l.k / ctx_.tp() : l.k;
    return kernels::append_program(prog_, ctx_.matmuls.get(1, m, k, l.n, {}, quantized(mm, ctx_.quantize)), deps,
                                   " [" + label + " chunk " + std::to_string(c) + "]");
  }
  std::uint32_t tensor_collective(const std::string& name, interconnect::CollectiveOp op, std::uint64_t bytes,
                                  const Deps& after) {
    const auto& axes = ctx_.spec.parallelism.tensor.axes;
    const std::string n = name + " over " + axes_text(axes) + ctx_.tokens_tag;
    const std::uint32_t c = ctx_.collectives.add(n, op, bytes, axes, CollectivePurpose::tensor_parallel);
    return prog_.add({n, {hw::EngineKind::ici, kIciTensor}, hw::CommOp{c}, after, 0});
  }
  // The gather item i's output still owes, or -1.
  int owes(std::size_t i) const {
    if (!partial_sum(i)) return owed_[i];
    auto it = tensor_gather_.find(output(i));
    return it == tensor_gather_.end() ? -1 : it->second;
  }
  // Gather g's shards, one permute per step after the first: every reader
  // that chunks shares them.
  const std::vector<std::uint32_t>& shard_ring(int g) {
    Gather& gather = gathers_[static_cast<std::size_t>(g)];
    if (gather.ring.empty()) {
      Deps after = gather.local;
      for (std::uint32_t c = 1; c < ctx_.tp(); ++c) {
        gather.ring.push_back(tensor_collective(gather.name + " shard " + std::to_string(c) + " permute",
                                                interconnect::CollectiveOp::permute, gather.bytes / ctx_.tp(), after));
        after = {gather.ring.back()};
      }
    }
    return gather.ring;
  }
  // Gather g whole, for a reader that cannot take it in chunks.
  std::uint32_t plain_gather(int g) {
    Gather& gather = gathers_[static_cast<std::size_t>(g)];
    if (!gather.whole)
      gather.whole = tensor_collective(gather.name + " all-gather", interconnect::CollectiveOp::all_gather,
                                       gather.bytes, gather.local);
    return *gather.whole;
  }

  // What a reader of item i waits for: the item, or the all-reduce of the
  // partial sums it contributes to.
  Deps ready(std::size_t i) {
    if (!partial_sum(i)) return sinks_[i];
    const std::string& tensor = output(i);
    auto it = reduced_.find(tensor);
    if (it != reduced_.end()) return it->second;
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
    const std::string n = "stage" + std::to_string(stage_) + " " + tag_ + " " + tensor;
    auto collective = [&](interconnect::CollectiveOp op, const char* what, std::uint64_t b, const Deps& after) {
      return tensor_collective(n + " " + what, op, b, after);
    };
    if (windowed_ && chunked) {
      // The reduce-scatter as a collective matmul: the accumulator of chunk
      // c (every producer's) goes on to the next rank, which adds its own;
      // the last chunk's sum is this rank's shard. The all-gather is owed
      // to the next linear matmul (owes).
      const std::uint64_t padded = hw::kBf16Bytes * gathered_elements(bytes / hw::kBf16Bytes, ctx_.tp());
      Deps after;
      for (std::uint32_t c = 0; c < ctx_.tp(); ++c) {
        for (std::size_t j = 0; j < items_.size(); ++j)
          if (output(j) == tensor) append(after, chunks_[j][c]);
        if (c + 1 < ctx_.tp())
          after = {collective(interconnect::CollectiveOp::permute,
                              ("chunk " + std::to_string(c) + " reduce-scatter permute").c_str(), padded / ctx_.tp(),
                              after)};
      }
      tensor_gather_[tensor] = static_cast<int>(gathers_.size());
      gathers_.push_back({n, padded, after, {}, std::nullopt});
      reduced_[tensor] = after;
      return after;
    }
    std::uint32_t op = 0;
    if (sequence_) {
      // Megatron-SP's g and g-bar: the partial sums reduce-scattered along
      // the sequence, then all-gathered for the next matmul (the split
      // layer norm or residual add between them is already 1/t).
      const std::uint64_t padded = hw::kBf16Bytes * gathered_elements(bytes / hw::kBf16Bytes, ctx_.tp());
      const std::uint32_t rs = collective(interconnect::CollectiveOp::reduce_scatter, "reduce-scatter", padded, deps);
      op = collective(interconnect::CollectiveOp::all_gather, "all-gather", padded, {rs});
    } else {
      op = collective(interconnect::CollectiveOp::all_reduce, "all-reduce", bytes, deps);
    }
    reduced_[tensor] = {op};
    return {op};
  }

  const Context& ctx_;
  hw::Program& prog_;
  std::uint32_t stage_;
  std::string tag_;
  Deps input_;
  std::vector<Item> items_;
  std::unordered_map<std::string, std::size_t> index_;
  std::vector<State> state_;
  std::vector<char> consumed_;
  std::vector<Deps> sinks_;
  std::unordered_map<std::string, Deps> reduced_;  // tensor -> its all-reduce (all-gather) op
  bool sequence_;                                  // sequence_split(layer)
  bool windowed_;                                  // collective matmul on this layer
  // A tensor reduce-scattered by collective matmul, whose all-gather the
  // next linear matmul reading it takes as a ring of shard permutes.
  struct Gather {
    std::string name;
    std::uint64_t bytes;  // the whole (padded) tensor
    Deps local;           // this rank's shard is ready
    std::vector<std::uint32_t> ring;
    std::optional<std::uint32_t> whole;
  };
  std::vector<Gather> gathers_;
  std::unordered_map<std::string, int> tensor_gather_;  // tensor -> its gather
  std::vector<int> owed_;                               // an elementwise item's output: the gather it owes
  std::vector<std::vector<Deps>> chunks_;               // a chunked producer's chunks
  bool routed_ = false;                                 // a mixture-of-experts layer over expert-parallel chips
  std::uint64_t block_ = 0;                             // its routing
};

// Ops of [begin, end) that no other op there waits for (pipeline messages and
// gradient all-reduces aside): the next task starts after them.
Deps task_sinks(const hw::Program& prog, std::uint32_t begin, std::uint32_t end) {
  std::vector<char> waited(end - begin, 0);
  for (std::uint32_t i = begin; i < end; ++i)
    for (auto d : prog.ops[i].deps)
      if (d >= begin) waited[d - begin] = 1;
  Deps sinks;
  for (std::uint32_t i = begin; i < end; ++i)
    if (!waited[i - begin] && is_task_work(prog.ops[i])) sinks.push_back(i);
  return sinks;
}

// A chip's peer table (runtime::PodProgram::peers): the chips of the
// previous and the next stage of its pipeline, and of the stage holding the
// other copy of a tied parameter (tied_param).
enum PeerSlot : std::uint32_t { kPreviousStage = 0, kNextStage = 1, kTiedStage = 2 };

std::vector<std::uint32_t> peer_table(const TrainLayout& layout, const std::optional<TiedParam>& tied,
                                      std::uint32_t chip) {
  const std::vector<std::uint32_t>& pipeline = layout.pipeline_of[chip];
  const std::uint32_t s = layout.roles[chip].stage;
  std::uint32_t other = runtime::PodProgram::kNoPeer;
  if (tied && s == tied->owner_stage) other = pipeline.at(tied->copy_stage);
  if (tied && s == tied->copy_stage) other = pipeline.at(tied->owner_stage);
  // Interleaved, the last stage's chunk v hands on to the first stage's
  // chunk v + 1: the pipeline wraps around.
  const bool wraps = layout.stages[s].chunks.size() > 1;
  const std::uint32_t p = static_cast<std::uint32_t>(pipeline.size());
  const std::uint32_t none = runtime::PodProgram::kNoPeer;
  return {s > 0   ? pipeline.at(s - 1)
          : wraps ? pipeline.at(p - 1)
                  : none,
          s + 1 < p ? pipeline.at(s + 1)
          : wraps   ? pipeline.at(0)
                    : none,
          other};
}

// The program of one pipeline stage, the same on each of its chips: data-
// and tensor-parallel ranks differ only in their share of the batch and of
// the weights, which the timing does not see, and in their peers, which
// they name by place.
class ChipProgramBuilder {
 public:
  ChipProgramBuilder(const Context& ctx, const TrainLayout& layout, std::uint32_t chip)
      : ctx_(with_rank(ctx, layout.roles[chip].expert)),
        role_(layout.roles[chip]),
        stage_(layout.stages[role_.stage]),
        layers_(stage_.layers()),
        tied_(tied_param(ctx.model, layout)) {
    const std::uint32_t n = ctx.spec.parallelism.context.degree;
    if (n == 1) return;
    ring_.resize(ctx.model.layers.size());
    for (std::size_t l : layers_) {
      const models::LayerSpec& spec = ctx.model.layers[l];
      ring_[l] = ring_attention(spec, n, ring_block_bytes(spec, ctx.tp()));
    }
  }

  void build(hw::Program& prog, ChipProgramMap& map) {
    map_ = &map;
    const TrainParallelism& par = ctx_.spec.parallelism;
    const auto tasks =
        stage_tasks(par.schedule, par.pipeline.degree, role_.stage, par.microbatches, par.virtual_stages);
    // Each chunk's last backward leaves its layers' final weight gradients.
    std::vector<std::size_t> last_backward(stage_.chunks.size(), 0);
    for (std::size_t t = 0; t < tasks.size(); ++t)
      if (tasks[t].backward) last_backward[tasks[t].chunk] = t;
    grads_done_.assign(ctx_.model.layers.size(), {});
    Deps prev;  // the previous task's last ops
    for (std::size_t t = 0; t < tasks.size(); ++t) {
      TaskOps ops{tasks[t], static_cast<std::uint32_t>(prog.ops.size()), 0};
      if (tasks[t].backward) {
        backward_task(prog, tasks[t], prev, t == last_backward[tasks[t].chunk]);
      } else {
        forward_task(prog, tasks[t], prev);
      }
      ops.end = static_cast<std::uint32_t>(prog.ops.size());
      prev = task_sinks(prog, ops.begin, ops.end);
      map.tasks.push_back(ops);
    }
    if (!ctx_.spec.overlap) {  // everything after the backward pass, one thing at a time
      Deps after = prev;
      if (par.gradient_axes().degree > 1 && par.sync_gradients)
        for (auto l = layers_.rbegin(); l != layers_.rend(); ++l) after = gradient_all_reduce(prog, *l, after);
      for (auto& g : grads_done_) g = after;
    }
    sum_tied_gradients(prog, static_cast<std::uint32_t>(tasks.size()));
    map.optimizer_begin = static_cast<std::uint32_t>(prog.ops.size());
    optimizer(prog);
    map.optimizer_end = static_cast<std::uint32_t>(prog.ops.size());
  }

 private:
  // A pipeline message is named by its microbatch, its direction and the
  // chunk it goes to on the receiving stage: unique between two stages,
  // and the same number on both sides.
  std::uint64_t message_tag(const PipelineTask& t, std::uint32_t to_chunk) const {
    return 2 * (std::uint64_t(t.microbatch) * stage_.chunks.size() + to_chunk) + t.backward;
  }
  std::string label(const PipelineTask& t) const {
    return task_label(t, static_cast<std::uint32_t>(stage_.chunks.size()));
  }
  // Where a chunk's activations come from and go to: the neighbouring
  // stage's same chunk, or across the wrap of an interleaved pipeline
  // (the last stage's chunk v feeds the first stage's chunk v + 1).
  bool first_chunk(const PipelineTask& t) const { return role_.stage == 0 && t.chunk == 0; }
  bool last_chunk(const PipelineTask& t) const {
    return role_.stage + 1 == ctx_.spec.parallelism.pipeline.degree && t.chunk + 1 == stage_.chunks.size();
  }
  std::uint32_t next_chunk(const PipelineTask& t) const {  // on the next stage
    return role_.stage + 1 == ctx_.spec.parallelism.pipeline.degree ? t.chunk + 1 : t.chunk;
  }
  std::uint32_t previous_chunk(const PipelineTask& t) const {  // on the previous stage
    return role_.stage == 0 ? t.chunk - 1 : t.chunk;
  }

  // The chunk's layers in order, after the previous task and the previous
  // stage's activations; the output goes on to the next stage.
  void forward_task(hw::Program& prog, const PipelineTask& task, Deps x) {
    const std::uint32_t s = role_.stage;
    const LayerRange& chunk = stage_.chunks[task.chunk];
    if (!first_chunk(task))
      x.push_back(prog.add({"recv " + label(task),
                            {hw::EngineKind::ici, kIciRecv},
                            hw::RecvOp{peer(-1), message_tag(task, task.chunk)},
                            {},
                            0}));
    for (std::size_t l = chunk.begin; l < chunk.end; ++l) {
      const auto begin = static_cast<std::uint32_t>(prog.ops.size());
      Deps in = x;
      append(in, gather_weights(prog, l, label(task)));
      x = LayerPass(ctx_, prog, s, chip_layer(l), false, label(task), in, ring_transfers(l, false)).build().all();
      pass_done(x);
      if (offloaded(ctx_.spec, ctx_.model, l))
        offloads_[{task.microbatch, l}] = host_copy(prog, l, label(task), false, x);
      map_->layers.push_back({l, false, begin, static_cast<std::uint32_t>(prog.ops.size())});
    }
    if (!last_chunk(task))
      prog.add(
          {"send " + label(task),
           {hw::EngineKind::ici, kIciSend},
           hw::SendOp{peer(+1), message_tag(task, next_chunk(task)), ctx_.model.layers[chunk.end - 1].output_bytes},
           x,
           0});
  }

  // The chunk's layers in reverse, after the previous task and the next
  // stage's gradient; the input gradient goes back to the previous stage.
  // The chunk's last backward task leaves each layer's final weight
  // gradients, which with overlap are all-reduced at once.
  void backward_task(hw::Program& prog, const PipelineTask& task, Deps x, bool final_task) {
    const std::uint32_t s = role_.stage;
    const LayerRange& chunk = stage_.chunks[task.chunk];
    if (!last_chunk(task))
      x.push_back(prog.add({"recv " + label(task),
                            {hw::EngineKind::ici, kIciRecv},
                            hw::RecvOp{peer(+1), message_tag(task, task.chunk)},
                            {},
                            0}));
    const TrainParallelism& par = ctx_.spec.parallelism;
    std::vector<Deps>
        backward_passes;  // the sinks of the last two layers' backward: remat offload and full wait on them
    for (std::size_t l = chunk.end; l-- > chunk.begin;) {
      const auto begin = static_cast<std::uint32_t>(prog.ops.size());
      Deps in = x;
      append(in, gather_weights(prog, l, label(task)));
      if (offloaded(ctx_.spec, ctx_.model, l)) {
        // Fetched one layer ahead: once it is on the host and the backward
        // two layers on has freed its buffer, so under the next one's.
        Deps after = {offloads_.at({task.microbatch, l})};
        if (backward_passes.size() == 2) append(after, backward_passes.front());
        in.push_back(host_copy(prog, l, label(task), true, after));
      }
      if (rematerialized(ctx_.spec, ctx_.model, l)) {
        // The recomputed forward waits for the previous layer's whole
        // backward, weight gradients included, whose matmuls still read that
        // layer's recomputed activations: one recomputed layer is live at a
        // time, as the report's memory counts it (train_memory's
        // rematerialized; tests/workloads/train/test_memory_counter.cpp).
        Deps redo_in = in;
        if (!backward_passes.empty()) append(redo_in, backward_passes.back());
        const models::LayerSpec redo = recomputed_forward(ctx_.spec, chip_layer(l));
        append(in, LayerPass(ctx_, prog, s, redo, false, "R" + label(task).substr(1), redo_in, redo_transfers(l, redo))
                       .build()
                       .all());
      }
      const PassResult r =
          LayerPass(ctx_, prog, s, chip_layer(l), true, label(task), in, ring_transfers(l, true)).build();
      pass_done(r.all());
      if (backward_passes.size() == 2) backward_passes.erase(backward_passes.begin());
      backward_passes.push_back(r.all());
      // fsdp: each microbatch's gradients go to their shards at once (the
      // chip keeps only its shard of the accumulated gradients).
      const Deps grads = par.fsdp.degree > 1 ? gradient_reduce_scatter(prog, l, label(task), r.all()) : r.all();
      if (final_task) {
        const Deps summed = replica_gradient_all_reduce(prog, l, grads);
        const bool reduce_now = par.gradient_axes().degree > 1 && par.sync_gradients && ctx_.spec.overlap;
        grads_done_[l] = reduce_now ? gradient_all_reduce(prog, l, summed) : summed;
      }
      x = r.data.empty() ? r.all() : r.data;
      map_->layers.push_back({l, true, begin, static_cast<std::uint32_t>(prog.ops.size())});
    }
    if (!first_chunk(task))
      prog.add({"send " + label(task),
                {hw::EngineKind::ici, kIciSend},
                hw::SendOp{peer(-1), message_tag(task, previous_chunk(task)),
                           ctx_.model.layers[chunk.begin].input_grad_bytes},
                x,
                0});
  }

  // Each layer's update of the chip's share of its parameters once its
  // gradients are ready; with zero: 1, the all-gather of the updated
  // shards after it.
  void optimizer(hw::Program& prog) {
    const OptimizerCost& opt = ctx_.spec.optimizer;
    const TrainParallelism& par = ctx_.spec.parallelism;
    const bool zero = par.zero == 1;
    for (auto it = layers_.rbegin(); it != layers_.rend(); ++it) {
      const std::size_t l = *it;
      const std::uint64_t n = sim::ceil_div(held_elements(l), par.optimizer_shards());
      if (n == 0) continue;
      const kernels::StreamWork work{static_cast<std::uint64_t>(opt.read_bytes_per_param * double(n)),
                                     static_cast<std::uint64_t>(opt.written_bytes_per_param * double(n)), n,
                                     opt.flops_per_param};
      const Deps updated = kernels::append_stream(prog, ctx_.exp.chip, ctx_.exp.fidelity, work, grads_done_[l],
                                                  opt.name + " update " + ctx_.model.layers[l].name);
      if (zero)
        sharded_collective(prog, interconnect::CollectiveOp::all_gather, l, "", "weights", par.data,
                           bytes_of(ctx_.spec.precision.params), updated);  // the updated weights as stored
    }
  }

  // Tied embeddings on a pipeline (Megatron-LM, Shoeybi et al. 2019 s.3;
  // Narayanan et al. 2021): the first stage's table and the last stage's
  // copy get the sum of both gradients before either is updated, an
  // all-reduce of two: each stage sends its gradient (its tensor-parallel
  // share, its fsdp shard, as stored) to the other and its update waits
  // for the other's, W bytes each way, as a two-rank all-reduce moves. The
  // addition is left in the update (one more gradient read, not counted).
  void sum_tied_gradients(hw::Program& prog, std::uint32_t tasks) {
    if (!tied_) return;
    const std::uint32_t s = role_.stage;
    if (s != tied_->owner_stage && s != tied_->copy_stage) return;
    const std::size_t l = s == tied_->owner_stage ? tied_->owner_layer : tied_->copy_layer;
    const std::uint64_t n =
        sim::ceil_div(local_param_elements(*tied_->param, ctx_.tp()), ctx_.spec.parallelism.fsdp.degree);
    const std::uint64_t tag = tasks;  // above every task's message tag (2 x (microbatch x V + chunk) + backward)
    const std::string name = ctx_.model.layers[l].name + " tied " + tied_->param->name + " gradients";
    const std::uint32_t send = prog.add({"send " + name,
                                         {hw::EngineKind::ici, kIciSend},
                                         hw::SendOp{kTiedStage, tag, bytes_of(ctx_.spec.precision.params) * n},
                                         grads_done_[l],
                                         0});
    const std::uint32_t recv =
        prog.add({"recv " + name, {hw::EngineKind::ici, kIciRecv}, hw::RecvOp{kTiedStage, tag}, {}, 0});
    grads_done_[l] = {send, recv};
  }

  // Layer l as this chip runs it: with context parallelism, its attention
  // as ring attention, and the permutes its passes wait for.
  const models::LayerSpec& chip_layer(std::size_t l) const {
    return ring_.empty() ? ctx_.model.layers[l] : ring_[l].layer;
  }
  const std::vector<RingTransfer>& ring_transfers(std::size_t l, bool backward) const {
    static const std::vector<RingTransfer> none;
    if (ring_.empty()) return none;
    return backward ? ring_[l].backward : ring_[l].forward;
  }
  // The forward permutes as a recomputed forward runs them: remat minimal
  // keeps the K and V projections, so the first block goes as the pass
  // starts.
  std::vector<RingTransfer> redo_transfers(std::size_t l, const models::LayerSpec& redo) const {
    std::vector<RingTransfer> out = ring_transfers(l, false);
    std::set<std::string> present;
    for (const auto& mm : redo.forward) present.insert(mm.name);
    for (const auto& ew : redo.elementwise_fwd) present.insert(ew.name);
    for (const auto& t : out) present.insert(t.name);
    for (auto& t : out)
      t.after.erase(
          std::remove_if(t.after.begin(), t.after.end(), [&](const std::string& a) { return !present.count(a); }),
          t.after.end());
    return out;
  }

  // remat offload: layer l's stash (its tensor-parallel share) copied
  // over the chip's host link, to the host (an HBM read) after its forward
  // or back (an HBM write) before its backward.
  std::uint32_t host_copy(hw::Program& prog, std::size_t l, const std::string& tag, bool back, const Deps& after) {
    const models::LayerSpec& layer = ctx_.model.layers[l];
    const std::uint64_t bytes =
        local_stash_bytes(layer, ctx_.tp(), sequence_split(layer, ctx_.spec.parallelism.sequence));
    return prog.add({tag + " " + layer.name + (back ? " stash from host" : " stash to host"),
                     {hw::EngineKind::dma, hw::host_dma_engine(ctx_.exp.chip, back)},
                     hw::DmaOp{0, bytes, back},
                     after,
                     0});
  }

  // Pipeline messages name their peer by its place in the chip's peer
  // table (peer_table), never by chip, so a stage's chips share a program.
  static std::uint32_t peer(int delta) { return delta < 0 ? kPreviousStage : kNextStage; }

  std::uint64_t held_elements(std::size_t layer) const {
    return workloads::held_elements(ctx_.model, stage_, layer, ctx_.tp());
  }

  // A collective over a layer's weights or gradients split into equal
  // shards over `over` (fsdp or, with zero: 1, data): the all-gather of the
  // shards or the reduce-scatter into them, of `element_bytes` elements.
  // `tag` names the microbatch where there is one per microbatch.
  Deps sharded_collective(hw::Program& prog, interconnect::CollectiveOp op, std::size_t layer, const std::string& tag,
                          const std::string& what, const ParallelAxes& over, std::uint32_t element_bytes,
                          const Deps& deps) {
    const std::uint64_t n = held_elements(layer);
    if (n == 0) return deps;
    const std::vector<std::string>& axes = over.axes;
    const bool gather = op == interconnect::CollectiveOp::all_gather;
    const std::string name = "stage" + std::to_string(role_.stage) + (tag.empty() ? "" : " " + tag) + " " +
                             ctx_.model.layers[layer].name + " " + what + (gather ? " all-gather" : " reduce-scatter") +
                             " over " + axes_text(axes);
    const std::uint32_t c = ctx_.collectives.add(
        name, op, element_bytes * gathered_elements(n, over.degree), axes,
        what == "weights" ? CollectivePurpose::weights : CollectivePurpose::gradients, element_bytes);
    return {prog.add({name, {hw::EngineKind::ici, gather ? kIciWeights : kIciGradients}, hw::CommOp{c}, deps, 0})};
  }

  // fsdp: the all-gather of a layer's weights for the pass about to be
  // built, one layer ahead: it waits only for the pass before the previous
  // one (whose weights' buffer it takes), so it runs under the previous
  // pass and at most two layers' weights are gathered at once. The gather
  // moves BF16, the matmuls' format, whatever the weights are stored in:
  // the layer casts its weights and XLA gathers the cast shards (and its
  // transpose reduce-scatters BF16 gradients); MaxText's 64B run with
  // float32 weights fits a 16 GiB v5e only so (docs/training.md).
  Deps gather_weights(hw::Program& prog, std::size_t layer, const std::string& tag) {
    const TrainParallelism& par = ctx_.spec.parallelism;
    if (par.fsdp.degree == 1) return {};
    const Deps after = passes_.size() == 2 ? passes_.front() : Deps{};
    return sharded_collective(prog, interconnect::CollectiveOp::all_gather, layer, tag, "weights", par.fsdp,
                              hw::kBf16Bytes, after);
  }
  void pass_done(const Deps& sinks) {
    if (passes_.size() == 2) passes_.erase(passes_.begin());
    passes_.push_back(sinks);
  }

  Deps gradient_reduce_scatter(hw::Program& prog, std::size_t layer, const std::string& tag, const Deps& deps) {
    return sharded_collective(prog, interconnect::CollectiveOp::reduce_scatter, layer, tag, "gradients",
                              ctx_.spec.parallelism.fsdp, hw::kBf16Bytes, deps);  // as the gather, BF16
  }

  // The data-parallel reduction of a layer's gradients: an all-reduce (of
  // the chip's fsdp shard, with fsdp), or with zero: 1 a reduce-scatter
  // into the shards the optimizer updates.
  // A mixture of experts' expert weights (held by the expert-parallel
  // chips, one share each) are reduced over the data axes alone, in an
  // all-reduce of their own.
  Deps gradient_all_reduce(hw::Program& prog, std::size_t layer, const Deps& deps) {
    const TrainParallelism& par = ctx_.spec.parallelism;
    if (par.zero == 1)
      return sharded_collective(prog, interconnect::CollectiveOp::reduce_scatter, layer, "", "gradients", par.data,
                                bytes_of(ctx_.spec.precision.params), deps);  // the gradients as stored
    std::uint64_t experts = 0;
    for (const auto* p : held_params(ctx_.model, stage_, layer))
      if (p->shards > 1) experts += local_param_elements(*p, ctx_.tp());
    Deps out;
    for (const bool expert : {false, true}) {
      const std::uint64_t held = expert ? experts : held_elements(layer) - experts;
      const std::uint64_t n = sim::ceil_div(held, par.fsdp.degree);
      const ParallelAxes over = par.gradient_axes(expert);
      if (n == 0 || over.degree == 1) continue;
      const std::string name = "stage" + std::to_string(role_.stage) + " " + ctx_.model.layers[layer].name +
                               (expert ? " expert" : "") + " gradients all-reduce over " + axes_text(over.axes);
      const std::uint32_t stored = bytes_of(ctx_.spec.precision.params);  // the gradients as stored
      const std::uint32_t c = ctx_.collectives.add(name, interconnect::CollectiveOp::all_reduce, stored * n, over.axes,
                                                   CollectivePurpose::gradients, stored);
      out.push_back(prog.add({name, {hw::EngineKind::ici, kIciGradients}, hw::CommOp{c}, deps, 0}));
    }
    return out.empty() ? deps : out;
  }

  // Key/value heads replicated over the tensor-parallel ranks (fewer heads
  // than ranks, models::MatmulSpec::tp_units): each replica's K and V weight
  // gradients hold only its query heads' share, so the replicas sum them in
  // an all-reduce over the tensor axis once the step's gradients are
  // complete (of the chip's fsdp shard). Exact for one head (multi-query
  // attention, as PaLM's: every rank holds it); with more heads each group
  // of tp / kv_heads ranks would reduce apart, and the whole axis's ring
  // moves 2 (t - 1) / t of the bytes instead of 2 (r - 1) / r: a bound.
  Deps replica_gradient_all_reduce(hw::Program& prog, std::size_t layer, const Deps& deps) {
    const TrainParallelism& par = ctx_.spec.parallelism;
    std::uint64_t replicated = 0;
    for (const auto* p : held_params(ctx_.model, stage_, layer))
      if (p->tp_units != 0 && p->tp_units < ctx_.tp()) replicated += local_param_elements(*p, ctx_.tp());
    const std::uint64_t n = sim::ceil_div(replicated, par.fsdp.degree);
    if (n == 0) return deps;
    const std::string name = "stage" + std::to_string(role_.stage) + " " + ctx_.model.layers[layer].name +
                             " replicated key/value gradients all-reduce over " + axes_text(par.tensor.axes);
    const std::uint32_t stored = bytes_of(ctx_.spec.precision.params);  // the gradients as stored
    const std::uint32_t c = ctx_.collectives.add(name, interconnect::CollectiveOp::all_reduce, stored * n,
                                                 par.tensor.axes, CollectivePurpose::gradients, stored);
    return {prog.add({name, {hw::EngineKind::ici, kIciGradients}, hw::CommOp{c}, deps, 0})};
  }

  static Context with_rank(Context c, std::uint32_t expert_rank) {
    c.expert_rank = expert_rank;
    return c;
  }

  const Context ctx_;
  ChipRole role_;
  StageLayers stage_;
  std::vector<std::size_t> layers_;  // stage_.layers()
  std::optional<TiedParam> tied_;
  std::vector<Deps> grads_done_;  // per layer: its final weight gradients, or their all-reduce
  std::vector<Deps> passes_;      // fsdp: the sinks of the last two layer passes built
  std::vector<RingLayer> ring_;   // context parallelism: per layer, empty without
  std::map<std::pair<std::uint32_t, std::size_t>, std::uint32_t> offloads_;  // (microbatch, layer) -> its copy to host
  ChipProgramMap* map_ = nullptr;                                            // the one build() fills
};

}  // namespace

const char* to_string(CollectivePurpose p) {
  switch (p) {
    case CollectivePurpose::tensor_parallel: return "tensor_parallel";
    case CollectivePurpose::gradients: return "gradients";
    case CollectivePurpose::weights: return "weights";
    case CollectivePurpose::context: return "context";
    case CollectivePurpose::experts: return "experts";
  }
  return "?";
}

bool rematerialized(const TrainSpec& spec, const models::ModelSpec& model, std::size_t l) {
  return (spec.remat == Remat::full || spec.remat == Remat::minimal) && l > 0 && is_repeated_layer(model.layers[l]);
}

bool offloaded(const TrainSpec& spec, const models::ModelSpec& model, std::size_t l) {
  return spec.remat == Remat::offload && l > 0 && is_repeated_layer(model.layers[l]);
}

models::LayerSpec recomputed_forward(const TrainSpec& spec, const models::LayerSpec& layer) {
  models::LayerSpec redo = layer;
  if (spec.remat != Remat::minimal) return redo;
  std::set<std::string> saved;
  std::vector<models::MatmulSpec> kept;
  for (const auto& mm : layer.forward) {
    if (mm.kind == models::MatmulKind::linear) {
      saved.insert(mm.name);
    } else {
      kept.push_back(mm);
    }
  }
  redo.forward = std::move(kept);
  const auto drop_saved = [&](std::vector<std::string>& after) {
    after.erase(std::remove_if(after.begin(), after.end(), [&](const std::string& a) { return saved.count(a) > 0; }),
                after.end());
  };
  for (auto& mm : redo.forward) drop_saved(mm.after);
  for (auto& e : redo.elementwise_fwd) drop_saved(e.after);
  for (auto& x : redo.exchange_fwd) drop_saved(x.after);
  return redo;
}

std::uint64_t held_elements(const models::ModelSpec& model, const StageLayers& stage, std::size_t layer,
                            std::uint32_t tp) {
  std::uint64_t n = 0;
  for (const auto* p : held_params(model, stage, layer)) n += local_param_elements(*p, tp);
  return n;
}

std::uint64_t gathered_elements(std::uint64_t elements, std::uint32_t ranks) {
  return sim::ceil_div(elements, ranks) * ranks;
}

bool is_task_work(const hw::Op& op) { return op.engine.kind != hw::EngineKind::ici || op.engine.index == kIciTensor; }

std::vector<const models::ParamSpec*> held_params(const models::ModelSpec& model, const StageLayers& stage,
                                                  std::size_t layer) {
  std::vector<const models::ParamSpec*> out;
  const models::LayerSpec& l = model.layers[layer];
  for (const auto& p : l.params) out.push_back(&p);
  // A weight is the layer's own but for a tied one (the unembedding reads
  // the embedding's table): only those are looked up in the whole model,
  // so a model of L layers costs O(L), not O(L^2).
  const auto own = [&l](const std::string& name) {
    return std::any_of(l.params.begin(), l.params.end(), [&](const models::ParamSpec& p) { return p.name == name; });
  };
  for (const auto& mm : l.forward) {
    if (mm.weight.empty() || own(mm.weight)) continue;
    const models::LayerSpec* owner = model.owner_of(mm.weight);
    if (!owner) continue;
    const std::size_t at = static_cast<std::size_t>(owner - model.layers.data());
    if (stage.holds(at)) continue;
    for (const auto& p : owner->params)
      if (p.name == mm.weight && std::find(out.begin(), out.end(), &p) == out.end()) out.push_back(&p);
  }
  return out;
}

std::optional<TiedParam> tied_param(const models::ModelSpec& model, const TrainLayout& layout) {
  const auto stage_of = [&](std::size_t layer) {
    for (std::uint32_t s = 0; s < layout.stages.size(); ++s)
      if (layout.stages[s].holds(layer)) return s;
    throw std::logic_error("layer on no pipeline stage");
  };
  for (std::uint32_t s = 0; s < layout.stages.size(); ++s)
    for (std::size_t l : layout.stages[s].layers())
      for (const auto* p : held_params(model, layout.stages[s], l)) {
        if (std::find_if(model.layers[l].params.begin(), model.layers[l].params.end(),
                         [p](const models::ParamSpec& own) { return &own == p; }) != model.layers[l].params.end())
          continue;  // its own
        const models::LayerSpec* owner = model.owner_of(p->name);
        if (!owner || owner == &model.layers[l]) continue;  // its own
        const std::size_t at = static_cast<std::size_t>(owner - model.layers.data());
        return TiedParam{p, stage_of(at), s, at, l};
      }
  return std::nullopt;
}

TrainProgram build_train_program(const Experiment& exp, const TrainSpec& spec, const TrainLayout& layout,
                                 const models::ModelSpec& micro) {
  TrainProgram out;
  kernels::MatmulPrograms matmuls(exp.chip, exp.fidelity, spec.precision.matmul);
  out.chip = matmuls.simulated_chip();
  CollectiveRegistry collectives(out);
  out.routing = train_routing(spec, micro);
  const Context ctx{exp, spec, micro, matmuls, collectives, {}, &out.routing, 0, ""};
  // Per-replica input lengths (input.h): the model a replica runs, built
  // for its tokens per sequence, once per length (the weights, and so the
  // gradient collectives, are the same at every length).
  const std::vector<std::uint64_t> lengths = spec.input.enabled ? spec.replica_lengths() : std::vector<std::uint64_t>{};
  std::map<std::uint64_t, models::ModelSpec> model_of_length;
  const auto length_of = [&](std::uint32_t c) {
    return lengths.empty() ? micro.seq_len : lengths[replica_of(layout.roles[c], spec.parallelism)];
  };
  const auto context_of = [&](std::uint32_t c) {
    const std::uint64_t length = length_of(c);
    if (length == micro.seq_len) return ctx;
    auto it = model_of_length.find(length);
    if (it == model_of_length.end()) {
      models::ModelConfig m = spec.chip_model();
      m.transformer.seq_len = length;
      it = model_of_length.emplace(length, models::build_model(m, spec.microbatch_size())).first;
    }
    return Context{
        exp, spec, it->second, matmuls, collectives, {}, &out.routing, 0, " (" + std::to_string(length) + " tokens)"};
  };
  // A chip's program depends on nothing but the model, its stage, (a
  // mixture of experts) the tokens its experts take and (input lengths)
  // its replica's tokens per sequence (collectives are named by stage and
  // layer, pipeline peers by place, never by chip), so the data- and
  // tensor-parallel ranks of a stage share one, built once, and so do
  // expert-parallel ranks whose experts take the same tokens and replicas
  // of the same length.
  const std::uint32_t stages = ctx.spec.parallelism.pipeline.degree;
  const std::uint32_t ep = ctx.spec.parallelism.expert.degree;
  std::map<std::tuple<std::uint32_t, std::vector<std::uint64_t>, std::uint64_t>, std::uint32_t> program_of_key;
  const auto load_key = [&](std::uint32_t rank) { return expert_loads(out.routing, rank, ep); };
  out.pod.program_of.resize(layout.chips());
  if (stages > 1) out.pod.peers.resize(layout.chips());
  const std::optional<TiedParam> tied = tied_param(micro, layout);
  for (std::uint32_t c = 0; c < layout.chips(); ++c) {
    const auto key = std::make_tuple(layout.roles[c].stage, load_key(layout.roles[c].expert), length_of(c));
    auto found = program_of_key.find(key);
    if (found == program_of_key.end()) {
      hw::Program prog;
      out.maps.emplace_back();
      ChipProgramBuilder(context_of(c), layout, c).build(prog, out.maps.back());
      found = program_of_key.emplace(key, out.pod.add_program(std::move(prog))).first;
    }
    out.pod.program_of[c] = found->second;
    if (stages > 1) out.pod.peers[c] = peer_table(layout, tied, c);
  }
  return out;
}

std::vector<models::LayerRouting> moe_routing(const TrainSpec& spec, const models::ModelSpec& model) {
  const models::TransformerConfig& c = spec.model.transformer;
  std::vector<models::LayerRouting> out;
  if (!spec.model.moe()) return out;
  for (std::uint64_t b = 0; b < c.layers; ++b)
    out.push_back(models::route_layer(c.routing, static_cast<std::uint32_t>(c.experts),
                                      static_cast<std::uint32_t>(c.top_k), c.capacity_factor,
                                      spec.parallelism.expert.degree, model.tokens(), b));
  return out;
}

std::vector<models::LayerRouting> train_routing(const TrainSpec& spec, const models::ModelSpec& micro) {
  if (spec.parallelism.expert.degree == 1) return {};
  return moe_routing(spec, micro);
}

std::vector<std::uint64_t> expert_loads(const std::vector<models::LayerRouting>& routing, std::uint32_t rank,
                                        std::uint32_t ep) {
  std::vector<std::uint64_t> loads;
  for (const auto& r : routing)
    for (std::uint32_t e = rank * (r.experts / ep); e < (rank + 1) * (r.experts / ep); ++e)
      loads.push_back(r.kept_by(e));
  return loads;
}

ForwardProgram build_forward_program(const Experiment& exp, const TrainSpec& spec, const models::ModelSpec& model,
                                     QuantizedMatmuls quantize, const std::vector<models::LayerRouting>& routing) {
  TrainProgram out;
  kernels::MatmulPrograms matmuls(exp.chip, exp.fidelity, spec.precision.matmul);
  out.chip = matmuls.simulated_chip();
  CollectiveRegistry collectives(out);
  // One program per set of expert loads (the expert-parallel ranks whose
  // experts take the same tokens share one), as build_train_program does.
  const std::uint32_t ep = spec.parallelism.expert.degree;
  const std::vector<ChipRole> roles =
      ep > 1 ? make_train_layout(exp, spec.parallelism, model).roles : std::vector<ChipRole>(exp.pod.devices());
  std::map<std::vector<std::uint64_t>, std::uint32_t> program_of_loads;
  out.pod.program_of.resize(exp.pod.devices());
  for (std::uint32_t c = 0; c < exp.pod.devices(); ++c) {
    const std::uint32_t rank = roles[c].expert;
    auto [at, fresh] = program_of_loads.try_emplace(expert_loads(routing, rank, ep), 0);
    if (fresh) {
      const Context ctx{exp, spec, model, matmuls, collectives, quantize, &routing, rank, ""};
      hw::Program prog;
      Deps x;
      for (const models::LayerSpec& layer : model.layers)
        x = LayerPass(ctx, prog, 0, layer, false, "F", x).build().all();
      at->second = out.pod.add_program(std::move(prog));
    }
    out.pod.program_of[c] = at->second;
  }
  return {std::move(out.pod), std::move(out.chip)};
}

}  // namespace workloads
