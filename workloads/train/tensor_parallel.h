#pragma once
// Tensor parallelism's collectives inside one layer pass (Megatron-LM,
// Shoeybi et al. 2019, arXiv:1909.08053 s.3): a split contraction leaves
// each rank a partial sum of its output, all-reduced over the tensor axes
// before anything reads it (Megatron's g in the forward, f in the
// backward). With sequence parallelism (Korthikanti et al. 2022,
// arXiv:2205.05198 s.4.2.2) the all-reduce is a reduce-scatter along the
// sequence and an all-gather for the next matmul. With collective matmul
// (Wang et al. 2023, "Overlap Communication with Dependent Computation via
// Decomposition", ASPLOS; XLA's windowed einsum, docs/calibration.md
// #maxtext-128b-tensor) the producer runs in tp chunks of its tokens, each
// chunk's accumulator permuted on around the ring while the next is
// computed, and the next linear matmul reading the tensor takes the
// all-gather as a ring of shard permutes, chunk c after the c-th shard.
//
// The layer pass (layer_pass.h) asks it, per tensor: how its partial sums
// are reduced (reduce), whether a reader owes a gather (gather_of), and
// for a chunked reader the shards' ring (shard_ring) or the whole gather
// (plain_gather). Every op it adds is on the tensor-parallel ICI queue.
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "hw/program.h"
#include "workloads/train/pass_context.h"

namespace workloads {

class TensorCollectives {
 public:
  // `prefix` names the pass's collectives ("stage0 F3"); `sequence`: the
  // layer is sequence_split; `windowed`: collective matmul on this layer.
  TensorCollectives(const PassContext& ctx, hw::Program& prog, std::string prefix, bool sequence, bool windowed);

  bool windowed() const { return windowed_; }
  // A linear matmul whose tokens (m; k of a weight gradient, as
  // MatmulSpec::tokens) split into tp chunks, one per shard (not a routed
  // expert's: `routed`).
  bool token_chunks(const models::MatmulSpec& mm, bool routed) const;
  // Chunk c of such a matmul, after `deps`; returns its sinks.
  Deps chunk(const models::MatmulSpec& mm, const Deps& deps, const std::string& label, std::uint32_t c);

  // What readers of `tensor`'s partial sums wait for, once it is reduced
  // (nullopt before reduce).
  std::optional<Deps> reduced(const std::string& tensor) const;
  // Reduces `tensor`, whose producers' sinks are `producers` and whose
  // largest producer writes `bytes`; `chunks` (per chunk, every producer's
  // chunk ops) when they ran in chunks under collective matmul, which then
  // reduce-scatters them as they come and owes the gather to the next
  // reader. Returns what readers wait for.
  Deps reduce(const std::string& tensor, const Deps& producers, std::uint64_t bytes, const std::vector<Deps>& chunks);

  // The gather `tensor` owes its next linear reader, or -1.
  int gather_of(const std::string& tensor) const;
  // Gather g's shards, one permute per step after the first: every reader
  // that chunks shares them.
  const std::vector<std::uint32_t>& shard_ring(int g);
  // Gather g whole, for a reader that cannot take it in chunks.
  std::uint32_t plain_gather(int g);

 private:
  std::uint32_t collective(const std::string& name, interconnect::CollectiveOp op, std::uint64_t bytes,
                           const Deps& after);

  const PassContext& ctx_;
  hw::Program& prog_;
  std::string prefix_;
  bool sequence_, windowed_;
  std::unordered_map<std::string, Deps> reduced_;  // tensor -> its all-reduce (all-gather) op
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
  std::unordered_map<std::string, int> gather_of_;  // tensor -> its gather
};

}  // namespace workloads
