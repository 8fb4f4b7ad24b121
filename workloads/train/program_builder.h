#pragma once
// One program per chip for a training step (docs/training.md has the
// picture; CONTRIBUTING.md, "Add a parallelism strategy", how to extend it):
//  - a pipeline stage runs its schedule's tasks in order (pipeline_schedule.h),
//    each the forward or backward pass of one microbatch over the stage's
//    layers; a task starts after the previous one ends and after its input
//    arrives (RecvOp) from the previous stage (forward) or the next
//    (backward), and ends by sending its output on (SendOp);
//  - inside a layer every op waits for the ops its model spec names in
//    `after` (layer_pass.h); matmuls and vector work are train_kernels.h
//    programs; tensor parallelism reduces partial sums before anything
//    reads them (tensor_parallel.h); a mixture of experts over
//    expert-parallel chips runs its routed experts between all-to-alls
//    (experts.h); context parallelism runs attention as ring attention
//    (ring_attention.h);
//  - each layer's gradients, after the layer's last backward, are reduced
//    over the replicas (gradient_sync.h: data_parallel.h's all-reduce, or
//    zero.h's reduce-scatter with the updated weights all-gathered after
//    the update): with `overlap`, as soon as they exist, under the
//    backward of the layers before it; without, after the whole backward
//    pass (with fsdp the reduce-scatters stay under the backward and only
//    the reductions over the data axes move: XLA's
//    WhileLoopAllReduceCodeMotion sinks an all-reduce whose result is only
//    accumulated out of the scanned layer loop);
//  - fsdp gathers each layer's weights before each pass and
//    reduce-scatters each microbatch's gradients (fsdp.h);
//  - the optimizer updates each layer once its gradients are reduced
//    (without `overlap`: once all are);
//  - remat: full (minimal) runs a repeated layer's forward (all but its
//    weight matmuls) again (task tag R<m>) before its backward ops, which
//    wait for it (holdings.h); remat: offload copies its stash to the host
//    and back (offload.h).
// Each chip's ICI work is split over seven queues (train_program.h).
#include "models/model_spec.h"
#include "workloads/experiment.h"
#include "workloads/train/layout.h"
#include "workloads/train/spec.h"
#include "workloads/train/train_program.h"

namespace workloads {

// `micro` is the model built for one microbatch.
TrainProgram build_train_program(const Experiment& exp, const TrainSpec& spec, const TrainLayout& layout,
                                 const models::ModelSpec& micro);

}  // namespace workloads
