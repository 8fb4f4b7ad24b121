#pragma once
// One program per chip for a training step (docs/training.md has the
// picture):
//  - a pipeline stage runs its schedule's tasks in order (pipeline_schedule.h),
//    each the forward or backward pass of one microbatch over the stage's
//    layers; a task starts after the previous one ends and after its input
//    arrives (RecvOp) from the previous stage (forward) or the next
//    (backward), and ends by sending its output on (SendOp);
//  - inside a layer every op waits for the ops its model spec names in
//    `after`; matmuls and vector work are train_kernels.h programs;
//  - tensor parallelism all-reduces the partial sums of split contractions
//    (Megatron's g forward, f backward) before anything reads them;
//  - data parallelism all-reduces each layer's gradients after the layer's
//    last backward: with `overlap`, as soon as they exist, under the
//    backward of the layers before it; without, after the whole backward
//    pass (with fsdp the reduce-scatters stay under the backward and only
//    the all-reduces of the shards over the data axes move: XLA's
//    WhileLoopAllReduceCodeMotion sinks an all-reduce whose result is only
//    accumulated out of the scanned layer loop);
//  - the optimizer updates each layer once its gradients are reduced
//    (without `overlap`: once all are).
//  - remat: full runs a repeated layer's forward again (task tag R<m>)
//    before its backward ops, which wait for it; remat: offload copies its
//    stash to the host (hw::host_dma_engine, one engine each way) after its forward and back
//    before its backward, one layer ahead;
//  - fsdp all-gathers each layer's weights before each of its passes, one
//    layer ahead, and reduce-scatters its gradients after each backward;
//    the optimizer updates the chip's shard. zero: 1 reduce-scatters the
//    gradients over the data axes, updates the shard, and all-gathers the
//    updated weights.
//  - a mixture of experts over expert-parallel chips (models/routing.h)
//    runs each expert as one matmul on the tokens the routing sends it,
//    between the dispatch and combine all-to-alls over the expert axes
//    (their blocks per pair from the routing; on the tensor-parallel queue,
//    which experts leave free); chips whose experts take different tokens
//    get programs of their own, so they are simulated, not shared. Expert
//    weights' gradients are all-reduced over the data axes only.
//  - context parallelism runs each Transformer block's attention as ring
//    attention (ring_attention.h): the core once per key/value block, the
//    blocks permuted around the context axes under it; gradients are
//    all-reduced over the data and the context axes.
// Each chip's ICI work is split over seven queues (ICI engine indices), so a
// gradient all-reduce never holds up a tensor-parallel one, a weight
// all-gather, a ring attention block or a pipeline message queued behind it.
#include <cstdint>
#include <optional>
#include <vector>

#include "models/model_spec.h"
#include "models/routing.h"
#include "runtime/pod_run.h"
#include "workloads/train/layout.h"
#include "workloads/train/pipeline_schedule.h"
#include "workloads/train/spec.h"

namespace workloads {

enum IciQueue : std::uint32_t {
  kIciTensor = 0,
  kIciGradients = 1,
  kIciSend = 2,
  kIciRecv = 3,
  kIciWeights = 4,
  kIciContext = 5,      // ring attention's K/V blocks
  kIciContextGrads = 6  // and their dK/dV, in the backward
};

// What a training collective is for (report.json collectives[].purpose).
enum class CollectivePurpose { tensor_parallel, gradients, weights, context, experts };
const char* to_string(CollectivePurpose p);

// Whether an op of a task's range is the task's own work: everything but
// pipeline messages and gradient all-reduces, which only start in it.
bool is_task_work(const hw::Op& op);

// Ops [begin, end) of a chip's program that make up one task.
struct TaskOps {
  PipelineTask task;
  std::uint32_t begin = 0, end = 0;
};

// Ops [begin, end) of one layer's pass in a task: its forward (and the
// copy of its stash to the host), or its backward with what it waits for
// (its weights' gather, its stash back from the host, remat's recomputed
// forward) and the gradient collectives it starts.
struct LayerOps {
  std::size_t layer = 0;  // in the model
  bool backward = false;
  std::uint32_t begin = 0, end = 0;
};

struct ChipProgramMap {
  std::vector<TaskOps> tasks;    // in schedule order
  std::vector<LayerOps> layers;  // every layer pass of every task, in program order
  std::uint32_t optimizer_begin = 0, optimizer_end = 0;
};

struct TrainProgram {
  runtime::PodProgram pod;
  std::vector<ChipProgramMap> maps;  // one per program of pod.programs
  const ChipProgramMap& map(std::uint32_t chip) const { return maps[pod.program_of[chip]]; }
  std::vector<CollectivePurpose> collective_purpose;  // per collective
  // Mixture of experts over expert-parallel chips: each block's routing
  // (train_routing); empty otherwise.
  std::vector<models::LayerRouting> routing;
  // The chip the programs run on: the experiment's, or with 8-bit model
  // matmuls (precision.matmul) the chip as that format sees it
  // (kernels::MatmulPrograms::simulated_chip).
  hw::ChipConfig chip;
};

// Which matmuls run in the step's 8-bit format (precision.matmul, when it
// is not bf16): a linear layer's forward and input-gradient matmuls, as
// training quantizes them, and (inference with an 8-bit KV cache) the
// attention matmuls, whose K and V operands are the cache.
struct QuantizedMatmuls {
  bool linear = true, attention = false;
};

// Each Transformer block's routing among the expert-parallel chips, for
// one microbatch of `micro`'s tokens per chip (the same draw for every
// microbatch and every data-parallel group): models::route_layer with the
// block's index. Empty without experts or expert parallelism.
std::vector<models::LayerRouting> train_routing(const TrainSpec& spec, const models::ModelSpec& micro);
// Each Transformer block's routing of `model`'s tokens (model.tokens() per
// chip) among the spec's expert-parallel chips (one without expert
// parallelism), whatever the degree: what a serving step's experts take.
// Empty without experts.
std::vector<models::LayerRouting> moe_routing(const TrainSpec& spec, const models::ModelSpec& model);
// The tokens each expert of expert-parallel rank `rank` (of `ep`) keeps,
// block by block: chips with equal loads run the same program.
std::vector<std::uint64_t> expert_loads(const std::vector<models::LayerRouting>& routing, std::uint32_t rank,
                                        std::uint32_t ep);

// `micro` is the model built for one microbatch.
TrainProgram build_train_program(const Experiment& exp, const TrainSpec& spec, const TrainLayout& layout,
                                 const models::ModelSpec& micro);

// The forward pass of `model` alone: its tensor-parallel all-reduces over
// spec.parallelism.tensor and, for a mixture of experts with `routing`
// (moe_routing), each expert's matmuls on the tokens routed to it (none
// for an expert that got none: its weights are not read) and, over
// spec.parallelism.expert, the dispatch and combine all-to-alls; nothing
// else (no pipeline, backward or optimizer). The same program on every
// chip but for expert-parallel ranks whose experts take different tokens.
// What an inference step runs (workloads/inference/); the chip as
// TrainProgram::chip.
struct ForwardProgram {
  runtime::PodProgram pod;
  hw::ChipConfig chip;
};
ForwardProgram build_forward_program(const Experiment& exp, const TrainSpec& spec, const models::ModelSpec& model,
                                     QuantizedMatmuls quantize, const std::vector<models::LayerRouting>& routing = {});

// Parameters a stage's layer keeps and updates: its own, plus (with tied
// embeddings on a later stage than the embedding) a copy of the table its
// matmuls read, as Megatron-LM keeps one on the last stage.
std::vector<const models::ParamSpec*> held_params(const models::ModelSpec& model, const StageLayers& stage,
                                                  std::size_t layer);
// A parameter two pipeline stages hold: with tied embeddings the table,
// owned by the embedding on the first stage, and the copy the last stage's
// logits read (held_params). Empty without a pipeline or tied embeddings.
struct TiedParam {
  const models::ParamSpec* param = nullptr;
  std::uint32_t owner_stage = 0, copy_stage = 0;
  std::size_t owner_layer = 0, copy_layer = 0;
};
std::optional<TiedParam> tied_param(const models::ModelSpec& model, const TrainLayout& layout);

// Whether the step recomputes (part of) layer `l`'s forward inside its
// backward: remat full or minimal and a repeated layer (stages.h) that
// another layer feeds (the first MLP layer's input is the batch, which it
// keeps).
bool rematerialized(const TrainSpec& spec, const models::ModelSpec& model, std::size_t l);
// Whether layer `l`'s stash goes to host memory and back (remat: offload,
// the same layers as rematerialized's).
bool offloaded(const TrainSpec& spec, const models::ModelSpec& model, std::size_t l);
// The part of a rematerialized layer's forward its backward runs again:
// full, all of it; minimal, all but its linear (weight) matmuls, whose
// outputs it keeps, so the ops that read them wait for nothing else.
models::LayerSpec recomputed_forward(const TrainSpec& spec, const models::LayerSpec& layer);

// Their elements on one tensor-parallel rank of `tp`.
std::uint64_t held_elements(const models::ModelSpec& model, const StageLayers& stage, std::size_t layer,
                            std::uint32_t tp);
// What an all-gather over `ranks` assembles from `elements` split into
// equal shards (and what a reduce-scatter splits): the elements padded to a
// multiple of the ranks, as XLA pads a sharded dimension.
std::uint64_t gathered_elements(std::uint64_t elements, std::uint32_t ranks);

}  // namespace workloads
