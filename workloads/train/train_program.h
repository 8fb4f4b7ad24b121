#pragma once
// What the training builder (program_builder.h) produces and what the
// report, the memory counter and the measurements read: one program per
// chip, with a map of which ops make up each pipeline task, each layer
// pass and the optimizer, and what each collective is for.
#include <cstdint>
#include <vector>

#include "hw/chip_config.h"
#include "hw/program.h"
#include "hw/sparsecore.h"
#include "models/routing.h"
#include "runtime/pod_run.h"
#include "workloads/train/pipeline_schedule.h"

namespace workloads {

// Each chip's ICI work is split over seven queues (ICI engine indices), so a
// gradient all-reduce never holds up a tensor-parallel one, a weight
// all-gather, a ring attention block or a pipeline message queued behind it.
enum IciQueue : std::uint32_t {
  kIciTensor = 0,
  kIciGradients = 1,
  kIciSend = 2,
  kIciRecv = 3,
  kIciWeights = 4,
  kIciContext = 5,       // ring attention's K/V blocks
  kIciContextGrads = 6,  // and their dK/dV, in the backward
  // parallelism.sparsecore_offload: weight gathers and gradient reductions
  // on the SparseCores' queues (hw/sparsecore.h), each apart as above.
  kIciSparseCoreWeights = hw::kSparseCoreIciQueue,
  kIciSparseCoreGradients = hw::kSparseCoreIciQueue + 1
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
  // (train_routing, experts.h); empty otherwise.
  std::vector<models::LayerRouting> routing;
  // The chip the programs run on: the experiment's, or with 8-bit model
  // matmuls (precision.matmul) the chip as that format sees it
  // (kernels::MatmulPrograms::simulated_chip).
  hw::ChipConfig chip;
};

}  // namespace workloads
