#pragma once
// Fully sharded data parallelism (ZeRO-3; Rajbhandari et al. 2020,
// arXiv:1910.02054 s.5.3; PyTorch FSDP, Zhao et al. 2023,
// arXiv:2304.11277): parameters, gradients and optimizer state sharded over
// the fsdp axes. Each layer's weights are all-gathered before each of its
// passes, one layer ahead (a gather waits only for the pass before the
// previous one, whose weights' buffer it takes, so it runs under the
// previous pass and at most two layers' weights are gathered at once), and
// each microbatch's gradients are reduce-scattered into their shards as
// soon as its backward has produced them (the chip keeps only its shard of
// the accumulated gradients).
//
// The gather moves BF16, the matmuls' format, whatever the weights are
// stored in: the layer casts its weights and XLA gathers the cast shards
// (and its transpose reduce-scatters BF16 gradients); MaxText's 64B run
// with float32 weights fits a 16 GiB v5e only so (docs/training.md).
// Memory (memory.cpp) follows XLA's per-weight collectives rather than
// these per-layer ones (the same bytes): at most two weights gathered and
// two full gradients at once, not whole layers.
#include <cstddef>
#include <string>
#include <vector>

#include "hw/program.h"
#include "workloads/train/shards.h"

namespace workloads {

class FsdpWeights {
 public:
  explicit FsdpWeights(const StageView& stage) : stage_(stage) {}
  // The all-gather of layer `layer`'s weights for the pass about to be
  // built (`tag`: its task); nothing without fsdp.
  Deps gather(hw::Program& prog, std::size_t layer, const std::string& tag);
  // A layer pass was built and ends with `sinks`: the next gather but one
  // may take its buffer once they are done.
  void pass_done(const Deps& sinks);
  // One microbatch's gradients of layer `layer`, ready after `grads`,
  // reduce-scattered into the chip's shard; `grads` without fsdp.
  Deps reduce_scatter(hw::Program& prog, std::size_t layer, const std::string& tag, const Deps& grads) const;

 private:
  const StageView& stage_;
  std::vector<Deps> passes_;  // the sinks of the last two layer passes built
};

}  // namespace workloads
