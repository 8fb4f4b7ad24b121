#pragma once
// What one chip keeps in HBM during a training step, computed before
// simulating: BF16 parameters and gradients of the layers it holds (its
// tensor-parallel share of its pipeline stage), the optimizer state
// (train_optimizer.h), and the activations stashed for the backward pass by
// every microbatch its schedule keeps in flight at once (GPipe: m, 1F1B: at
// most p; interleaved: every chunk pass between its forward and backward;
// pipeline_schedule.h). Matmul workspaces, the pipeline's message
// buffers and the step's input data are not counted.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "hw/chip_config.h"
#include "hw/program.h"
#include "models/model_spec.h"
#include "sim/error.h"
#include "workloads/train/layout.h"
#include "workloads/train/spec.h"
#include "workloads/train/train_program.h"

namespace workloads {

// A chip's HBM at the peak of its step: the instant (a layer's forward or
// backward pass, `peak_pass`) where what is live adds up to most, a buffer
// being live from the op that defines it to its last use, as XLA's buffer
// assignment frees it. Held all step: params, grads and optimizer (with
// fsdp, the chip's shards: each layer's elements split over the fsdp axes,
// the last shard padded; with zero: 1 the optimizer state split over the
// data axes), `ring` and `offload_buffers`. At the peak:
// - `activations`: the stashes held then, from their forward to their
//   backward (at most microbatches_in_flight x activations_per_microbatch);
// - `rematerialized`: with remat, what the pass recomputes for its backward
//   (its full stash with remat: full);
// - `gathered`: with fsdp, the BF16 weights and full gradients the pass
//   holds at its fullest instant, weight by weight as XLA gathers and
//   reduce-scatters them (memory.cpp, GatheredWeights): forward, the weight
//   a matmul reads and the next one, prefetched; backward, the weight its
//   matmuls read, the previous one (prefetched), its full gradient and the
//   one before it, being reduce-scattered.
// With remat: full, a repeated layer stashes only its input (BF16, as the
// previous layer hands it on).
// With context parallelism, `ring` is the blocks ring attention receives
// and passes on (ring_attention.h, kRingBuffers) for the stage's largest
// attention layer.
// With host offload (remat: offload, or a per-tensor policy that offloads),
// `host` is what the chip keeps in its host's DRAM at the peak: the
// offloaded stashes of every microbatch in flight (not in total(), which
// is HBM), and `offload_buffers` the two HBM buffers the largest layer's
// offloaded stash passes through (held all step).
struct ChipMemory {
  std::uint64_t params = 0, grads = 0, optimizer = 0, activations = 0, gathered = 0, rematerialized = 0, ring = 0;
  std::uint64_t offload_buffers = 0;
  std::uint64_t host = 0;
  std::uint64_t activations_per_microbatch = 0;
  // Stashes held at once: microbatches, or with an interleaved schedule
  // chunk passes (one microbatch over one of the stage's `chunks`).
  std::uint32_t microbatches_in_flight = 0;
  std::uint32_t chunks = 1;
  std::string peak_pass;  // "backward of block79"
  std::uint64_t total() const {
    return params + grads + optimizer + activations + gathered + rematerialized + ring + offload_buffers;
  }
};

// What layer `l` of `micro` (the model built for one microbatch) keeps for
// its backward pass on one chip, per microbatch: the one source of
// train_memory's activations and rematerialized layer and of the trace's
// memory counter (memory_in_use).
struct LayerMemory {
  std::uint64_t stash = 0;            // in HBM from its forward to its backward
  std::uint64_t rematerialized = 0;   // recomputed (remat): held again while its backward runs
  std::uint64_t host = 0;             // offloaded: in host DRAM from its forward to its backward
  std::uint64_t offload_buffers = 0;  // and the two HBM buffers its stash passes through
};
LayerMemory layer_memory(const TrainSpec& spec, const models::ModelSpec& micro, std::size_t l);

// Per chip; `micro` is the model built for one microbatch.
std::vector<ChipMemory> train_memory(const TrainSpec& spec, const TrainLayout& layout, const models::ModelSpec& micro);

// HBM in use on a chip over its step (the trace's "HBM in use (B)"
// counter), as (time in ps, bytes) at each change, from the chip's
// ChipMemory `m`, its stage and its executed program (`map` and
// `timings`): what train_memory counts at each instant of the schedule,
// at the times the passes ran. What the step holds throughout (parameters,
// gradients, optimizer state, ring attention and offload buffers) is the
// level at its start and end; a layer's forward pass allocates its stash
// (layer_memory) when its first op starts and its backward pass frees it
// when its last op ends; while a pass runs it holds its gathered weights
// and gradients (the figure of its fullest per-weight instant, as
// train_memory counts it: the counter steps per pass, not per weight) and,
// backward, its recomputed stash. A pass's ops are its own work
// (is_task_work: not its weights' gather or its gradients' collectives).
// At one instant frees come before allocations.
std::vector<std::pair<std::uint64_t, std::uint64_t>> memory_in_use(const TrainSpec& spec,
                                                                   const models::ModelSpec& micro, const ChipMemory& m,
                                                                   const StageLayers& stage, const hw::Program& prog,
                                                                   const ChipProgramMap& map,
                                                                   const std::vector<hw::OpTiming>& timings);

// "needs 37.2 GiB of 32.0 GiB at its peak (the backward of block23):
// parameters 2.4 GiB, gradients 2.4 GiB, optimizer 14.6 GiB, activations
// 17.8 GiB (stashes held then, of 4 microbatches in flight x 4.5 GiB)"
// (and ", gathered weights 1.2 GiB" with fsdp, ", ring attention buffers
// 64.0 MiB" with context parallelism).
std::string memory_breakdown(const ChipMemory& m, std::uint64_t capacity);
// "1 microbatch in flight x 8.8 GiB": the stashes a chip may hold at most.
std::string in_flight(const ChipMemory& m);

// A step whose fullest chip needs more HBM than it has: its own type, so
// that a caller offers advice on it (app/run_experiment.cpp) by what it is
// rather than by its message.
class DoesNotFitInHbm : public sim::SimFailure {
 public:
  using sim::SimFailure::SimFailure;
};

// Throws DoesNotFitInHbm naming the fullest chip and its breakdown when it
// does not fit in `capacity`.
void check_memory_fits(const std::vector<ChipMemory>& memory, const TrainLayout& layout, std::uint64_t capacity);

// Throws sim::SimFailure naming the chip that offloads most when it
// offloads more than its share of the host's DRAM (host.memory / chips).
void check_host_memory_fits(const std::vector<ChipMemory>& memory, const hw::HostParams& host);

std::string binary_bytes(double bytes);  // "37.2 GiB", "512.0 MiB"

}  // namespace workloads
