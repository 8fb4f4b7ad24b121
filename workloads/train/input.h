#pragma once
// Per-replica input imbalance (`workload.input`, docs/training.md#input-imbalance):
// each data-parallel replica (a chip's data and fsdp ranks) takes its own
// tokens per sequence this step, drawn from a distribution and a seed, at
// most model.seq_len. A replica's sequences are as long as its draw: the
// batch a replica gets is bucketed by length (and padded to the bucket),
// as length-bucketing data loaders do (e.g. tf.data's
// bucket_by_sequence_length), so its matmuls run on its own tokens and its
// attention on the square of its own length. Replicas of different lengths
// run different programs and are simulated apart; the gradient collectives
// over the data axes wait for the slowest (collectives[].wait_s, gated_by).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/params.h"

namespace workloads {

struct InputSpec {
  bool enabled = false;                 // `input` given
  std::string distribution = "fixed";   // fixed | uniform | lognormal | measured
  std::optional<std::uint64_t> length;  // fixed; none: model.seq_len
  std::uint64_t min = 1;                // uniform, inclusive
  std::optional<std::uint64_t> max;     // uniform, inclusive; none: model.seq_len
  std::optional<double> median;         // lognormal: exp(mu), in tokens
  double sigma = 0.5;                   // lognormal: the log's standard deviation
  std::vector<std::uint64_t> lengths;   // measured: one per replica
  std::uint64_t bucket = 1;             // lengths rounded up to a multiple (capped at seq_len)
  std::uint64_t seed = 1;
};
const sim::ParamTable<InputSpec>& input_params();

// Each replica's tokens per sequence, replica r in 0 .. replicas - 1, drawn
// with std::mt19937_64(seed) in replica order (sim::uniform01: the same on
// every platform): uniform takes one draw per replica, min + floor(u (max -
// min + 1)); lognormal two, median x exp(sigma z) with z from Box-Muller,
// rounded and clamped to [1, seq_len]; then rounded up to a multiple of
// bucket, never above seq_len. Without `input`, seq_len for every replica.
// Throws std::invalid_argument for a spec load_train_spec would refuse.
std::vector<std::uint64_t> replica_lengths(const InputSpec& spec, std::uint64_t seq_len, std::uint32_t replicas);

}  // namespace workloads
