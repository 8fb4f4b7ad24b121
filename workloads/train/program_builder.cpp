#include "workloads/train/program_builder.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>

#include "kernels/train_kernels.h"
#include "runtime/run_budget.h"
#include "sim/units.h"
#include "workloads/train/data_parallel.h"
#include "workloads/train/experts.h"
#include "workloads/train/fsdp.h"
#include "workloads/train/gradient_sync.h"
#include "workloads/train/holdings.h"
#include "workloads/train/layer_pass.h"
#include "workloads/train/offload.h"
#include "workloads/train/pass_context.h"
#include "workloads/train/ring_attention.h"
#include "workloads/train/shards.h"
#include "workloads/train/stages.h"
#include "workloads/train/tensor_split.h"
#include "workloads/train/zero.h"

namespace workloads {

namespace {

// The strategy that reduces gradients over the replicas, as the workload's
// keys choose it (gradient_sync.h lists them).
std::unique_ptr<GradientSync> gradient_sync_for(const StageView& stage) {
  if (stage.spec.parallelism.zero == 1) return std::make_unique<ZeroOneSync>(stage);
  return std::make_unique<DataParallelSync>(stage);
}

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

PassContext with_rank(PassContext c, std::uint32_t expert_rank) {
  c.expert_rank = expert_rank;
  return c;
}

// The program of one pipeline stage, the same on each of its chips: data-
// and tensor-parallel ranks differ only in their share of the batch and of
// the weights, which the timing does not see, and in their peers, which
// they name by place.
class ChipProgramBuilder {
 public:
  ChipProgramBuilder(const PassContext& ctx, const TrainSpec& spec, const TrainLayout& layout, std::uint32_t chip)
      : ctx_(with_rank(ctx, layout.roles[chip].expert)),
        spec_(spec),
        role_(layout.roles[chip]),
        stage_(layout.stages[role_.stage]),
        layers_(stage_.layers()),
        tied_(tied_param(ctx.model, layout)),
        view_{ctx_, spec_, role_.stage, stage_},
        fsdp_(view_),
        sync_(gradient_sync_for(view_)),
        offload_(ctx_, spec_) {
    const std::uint32_t n = spec.parallelism.context.degree;
    if (n == 1) return;
    ring_.resize(ctx.model.layers.size());
    for (std::size_t l : layers_) {
      const models::LayerSpec& layer = ctx.model.layers[l];
      ring_[l] = ring_attention(layer, n, ring_block_bytes(layer, ctx.tp()));
    }
  }

  void build(hw::Program& prog, ChipProgramMap& map) {
    map_ = &map;
    const TrainParallelism& par = spec_.parallelism;
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
    if (!spec_.overlap) {  // everything after the backward pass, one thing at a time
      Deps after = prev;
      if (reduces_gradients())
        for (auto l = layers_.rbegin(); l != layers_.rend(); ++l) after = sync_->reduce(prog, *l, after);
      for (auto& g : grads_done_) g = after;
    }
    sum_tied_gradients(prog, static_cast<std::uint32_t>(tasks.size()));
    map.optimizer_begin = static_cast<std::uint32_t>(prog.ops.size());
    optimizer(prog);
    map.optimizer_end = static_cast<std::uint32_t>(prog.ops.size());
  }

 private:
  bool reduces_gradients() const {
    return spec_.parallelism.gradient_axes().degree > 1 && spec_.parallelism.sync_gradients;
  }
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
    return role_.stage + 1 == spec_.parallelism.pipeline.degree && t.chunk + 1 == stage_.chunks.size();
  }
  std::uint32_t next_chunk(const PipelineTask& t) const {  // on the next stage
    return role_.stage + 1 == spec_.parallelism.pipeline.degree ? t.chunk + 1 : t.chunk;
  }
  std::uint32_t previous_chunk(const PipelineTask& t) const {  // on the previous stage
    return role_.stage == 0 ? t.chunk - 1 : t.chunk;
  }
  // Pipeline messages name their peer by its place in the chip's peer
  // table (peer_table), never by chip, so a stage's chips share a program.
  std::uint32_t receive(hw::Program& prog, const PipelineTask& task, std::uint32_t from) const {
    return prog.add({"recv " + label(task),
                     {hw::EngineKind::ici, kIciRecv},
                     hw::RecvOp{from, message_tag(task, task.chunk)},
                     {},
                     0});
  }
  void send(hw::Program& prog, const PipelineTask& task, std::uint32_t to, std::uint32_t to_chunk, std::uint64_t bytes,
            const Deps& after) const {
    prog.add({"send " + label(task),
              {hw::EngineKind::ici, kIciSend},
              hw::SendOp{to, message_tag(task, to_chunk), bytes},
              after,
              0});
  }

  // The chunk's layers in order, after the previous task and the previous
  // stage's activations; the output goes on to the next stage.
  void forward_task(hw::Program& prog, const PipelineTask& task, Deps x) {
    const LayerRange& chunk = stage_.chunks[task.chunk];
    if (!first_chunk(task)) x.push_back(receive(prog, task, kPreviousStage));
    for (std::size_t l = chunk.begin; l < chunk.end; ++l) {
      const auto begin = static_cast<std::uint32_t>(prog.ops.size());
      Deps in = x;
      append(in, fsdp_.gather(prog, l, label(task)));
      x = LayerPass(ctx_, prog, role_.stage, chip_layer(l), false, label(task), in, ring_transfers(l, false))
              .build()
              .all();
      fsdp_.pass_done(x);
      if (offloaded(spec_, ctx_.model, l)) offload_.to_host(prog, l, task.microbatch, label(task), x);
      map_->layers.push_back({l, false, begin, static_cast<std::uint32_t>(prog.ops.size())});
    }
    if (!last_chunk(task))
      send(prog, task, kNextStage, next_chunk(task), ctx_.model.layers[chunk.end - 1].output_bytes, x);
  }

  // The chunk's layers in reverse, after the previous task and the next
  // stage's gradient; the input gradient goes back to the previous stage.
  // The chunk's last backward task leaves each layer's final weight
  // gradients, which with overlap are reduced at once.
  void backward_task(hw::Program& prog, const PipelineTask& task, Deps x, bool final_task) {
    const LayerRange& chunk = stage_.chunks[task.chunk];
    if (!last_chunk(task)) x.push_back(receive(prog, task, kNextStage));
    // The sinks of the last two layers' backward: remat offload and full wait on them.
    std::vector<Deps> backward_passes;
    for (std::size_t l = chunk.end; l-- > chunk.begin;) {
      const auto begin = static_cast<std::uint32_t>(prog.ops.size());
      Deps in = x;
      append(in, fsdp_.gather(prog, l, label(task)));
      if (offloaded(spec_, ctx_.model, l))
        // Fetched one layer ahead: once it is on the host and the backward
        // two layers on has freed its buffer, so under the next one's.
        in.push_back(offload_.from_host(prog, l, task.microbatch, label(task),
                                        backward_passes.size() == 2 ? backward_passes.front() : Deps{}));
      if (rematerialized(spec_, ctx_.model, l)) append(in, recompute(prog, task, l, in, backward_passes));
      const PassResult r =
          LayerPass(ctx_, prog, role_.stage, chip_layer(l), true, label(task), in, ring_transfers(l, true)).build();
      fsdp_.pass_done(r.all());
      if (backward_passes.size() == 2) backward_passes.erase(backward_passes.begin());
      backward_passes.push_back(r.all());
      const Deps grads = fsdp_.reduce_scatter(prog, l, label(task), r.all());
      if (final_task) {
        const Deps summed = replica_gradient_all_reduce(view_, prog, l, grads);
        grads_done_[l] = reduces_gradients() && spec_.overlap ? sync_->reduce(prog, l, summed) : summed;
      }
      x = r.data.empty() ? r.all() : r.data;
      map_->layers.push_back({l, true, begin, static_cast<std::uint32_t>(prog.ops.size())});
    }
    if (!first_chunk(task))
      send(prog, task, kPreviousStage, previous_chunk(task), ctx_.model.layers[chunk.begin].input_grad_bytes, x);
  }

  // Layer l's recomputed forward (remat full or minimal), after `in`: it
  // waits for the previous layer's whole backward, weight gradients
  // included, whose matmuls still read that layer's recomputed
  // activations: one recomputed layer is live at a time, as the report's
  // memory counts it (train_memory's rematerialized;
  // tests/workloads/train/test_memory_counter.cpp).
  Deps recompute(hw::Program& prog, const PipelineTask& task, std::size_t l, const Deps& in,
                 const std::vector<Deps>& backward_passes) {
    Deps redo_in = in;
    if (!backward_passes.empty()) append(redo_in, backward_passes.back());
    const models::LayerSpec redo = recomputed_forward(spec_, chip_layer(l));
    return LayerPass(ctx_, prog, role_.stage, redo, false, "R" + label(task).substr(1), redo_in,
                     redo_transfers(l, redo))
        .build()
        .all();
  }

  // Each layer's update of the chip's share of its parameters once its
  // gradients are ready, and what the gradient strategy does after it.
  void optimizer(hw::Program& prog) {
    const OptimizerCost& opt = spec_.optimizer;
    for (auto it = layers_.rbegin(); it != layers_.rend(); ++it) {
      const std::size_t l = *it;
      const std::uint64_t n = sim::ceil_div(view_.held_elements(l), spec_.parallelism.optimizer_shards());
      if (n == 0) continue;
      const kernels::StreamWork work{static_cast<std::uint64_t>(opt.read_bytes_per_param * double(n)),
                                     static_cast<std::uint64_t>(opt.written_bytes_per_param * double(n)), n,
                                     opt.flops_per_param};
      const Deps updated = kernels::append_stream(prog, ctx_.exp.chip, ctx_.exp.fidelity, work, grads_done_[l],
                                                  opt.name + " update " + ctx_.model.layers[l].name);
      sync_->after_update(prog, l, updated);
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
        sim::ceil_div(local_param_elements(*tied_->param, ctx_.tp()), spec_.parallelism.fsdp.degree);
    const std::uint64_t tag = tasks;  // above every task's message tag (2 x (microbatch x V + chunk) + backward)
    const std::string name = ctx_.model.layers[l].name + " tied " + tied_->param->name + " gradients";
    const std::uint32_t send = prog.add({"send " + name,
                                         {hw::EngineKind::ici, kIciSend},
                                         hw::SendOp{kTiedStage, tag, view_.stored_bytes() * n},
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

  const PassContext ctx_;
  const TrainSpec& spec_;
  ChipRole role_;
  StageLayers stage_;
  std::vector<std::size_t> layers_;  // stage_.layers()
  std::optional<TiedParam> tied_;
  StageView view_;
  FsdpWeights fsdp_;
  std::unique_ptr<GradientSync> sync_;
  HostOffload offload_;
  std::vector<Deps> grads_done_;   // per layer: its final weight gradients, or their reduction
  std::vector<RingLayer> ring_;    // context parallelism: per layer, empty without
  ChipProgramMap* map_ = nullptr;  // the one build() fills
};

}  // namespace

TrainProgram build_train_program(const Experiment& exp, const TrainSpec& spec, const TrainLayout& layout,
                                 const models::ModelSpec& micro) {
  TrainProgram out;
  const ForwardStep step = spec.forward_step();
  // Eager execution: each kernel's launch also waits for the host's dispatch
  // (forward_step.h); the run's chip carries it, so every launch op pays it.
  hw::ChipConfig chip = exp.chip;
  if (spec.execution == Execution::eager) chip.kernel_launch += spec.eager_dispatch;
  kernels::MatmulPrograms matmuls(chip, exp.fidelity, step.matmul, kernels::OperandQuantization::at_use);
  out.chip = matmuls.simulated_chip();
  CollectiveRegistry collectives(out, dcn_sync(exp));
  out.routing = train_routing(step, micro);
  const PassContext ctx{exp, step, micro, matmuls, collectives, {}, &out.routing, 0, ""};
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
    return PassContext{
        exp, step, it->second, matmuls, collectives, {}, &out.routing, 0, " (" + std::to_string(length) + " tokens)"};
  };
  // A chip's program depends on nothing but the model, its stage, (a
  // mixture of experts) the tokens its experts take and (input lengths)
  // its replica's tokens per sequence (collectives are named by stage and
  // layer, pipeline peers by place, never by chip), so the data- and
  // tensor-parallel ranks of a stage share one, built once, and so do
  // expert-parallel ranks whose experts take the same tokens and replicas
  // of the same length.
  const std::uint32_t stages = spec.parallelism.pipeline.degree;
  const std::uint32_t ep = spec.parallelism.expert.degree;
  std::map<std::tuple<std::uint32_t, std::vector<std::uint64_t>, std::uint64_t>, std::uint32_t> program_of_key;
  out.pod.program_of.resize(layout.chips());
  if (stages > 1) out.pod.peers.resize(layout.chips());
  const std::optional<TiedParam> tied = tied_param(micro, layout);
  double ops_built = 0;
  for (std::uint32_t c = 0; c < layout.chips(); ++c) {
    const auto key =
        std::make_tuple(layout.roles[c].stage, expert_loads(out.routing, layout.roles[c].expert, ep), length_of(c));
    auto found = program_of_key.find(key);
    if (found == program_of_key.end()) {
      hw::Program prog;
      out.maps.emplace_back();
      ChipProgramBuilder(context_of(c), spec, layout, c).build(prog, out.maps.back());
      found = program_of_key.emplace(key, out.pod.add_program(std::move(prog))).first;
      ops_built += double(out.pod.programs.back().ops.size());
      runtime::check_program_memory(exp.limits, ops_built, "building the training step's programs");
    }
    out.pod.program_of[c] = found->second;
    if (stages > 1) out.pod.peers[c] = peer_table(layout, tied, c);
  }
  return out;
}

}  // namespace workloads
