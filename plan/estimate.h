#pragma once
// What the planner knows of a candidate before simulating it (docs/plan.md,
// "Pruning"): whether it loads (as `tpusim run` would load its file),
// whether it fits (the training step's own memory count, train_memory),
// and a lower bound on its simulated step time:
//
//   compute: the linear layers' matmul FLOPs of the step (forward and
//     backward; with remat full the forward again) over the chips at the
//     MXUs' sustained peak, times (m + p - 1) / m with p pipeline stages
//     and m microbatches (the 1F1B fill and drain: the last stage starts
//     after p - 1 stage-forwards, the first ends p - 1 stage-backwards after
//     the others; Narayanan et al. 2021 s.2.2);
//   communication: the bytes a chip must receive (FSDP's weight gathers,
//     (N - 1)/N of a layer's BF16 weights per gather) or send (the data
//     axes' gradient reduction and tensor parallelism's activation
//     reductions, (N - 1)/N of what it holds) over all its ICI links at once;
//     with expert parallelism of e a chip's experts are 1 / e of them, and
//     their gradients are reduced over the data and context axes only.
//
// Each is work one chip cannot do faster, so the step takes at least the
// larger of them. Elementwise work, the optimizer, latency and the MXU's
// fill and drain are left out, which keeps it a bound (tests/plan check it
// against every simulated candidate).
#include <cstdint>
#include <string>
#include <vector>

#include "workloads/experiment.h"
#include "workloads/train/spec.h"

namespace plan {

struct Estimate {
  enum class Status { fits, does_not_fit, invalid };
  Status status = Status::invalid;
  std::string message;               // invalid: the loader's error; does not fit: what is over
  std::uint64_t memory_bytes = 0;    // HBM of the fullest chip (host memory when that is what is over)
  std::uint64_t capacity_bytes = 0;  // what a chip may fill (max_memory_fraction of HBM; its host share)
  std::string memory = "HBM";        // which memory memory_bytes and capacity_bytes are of
  std::string largest_item;          // of the fullest chip: "activations", "optimizer", ...
  std::uint64_t largest_item_bytes = 0;
  double compute_s = 0, communication_s = 0;
  std::string communication_by;  // the collectives that dominate the communication bound
  double bound_s() const { return compute_s > communication_s ? compute_s : communication_s; }
};

// `text` is the candidate's experiment, `path` where it is (chip files are
// looked up from there), `overrides` --set strings applied to it.
Estimate estimate_candidate(const std::string& text, const std::string& path, double max_memory_fraction,
                            const std::vector<std::string>& overrides = {});

// The training step an experiment runs, on the mesh it runs on: kind:
// train's spec, or kind: maxtext's translation of its config (and its
// kind, "train" or "maxtext"). Throws sim::ConfigError as the loader does.
struct TrainStep {
  std::string kind;
  workloads::Experiment exp;
  workloads::TrainSpec spec;
};
TrainStep train_step_of(const std::string& text, const std::string& path, const std::vector<std::string>& overrides);

// Whether the step runs each block's forward again in its backward (remat
// full, or a custom policy that recomputes every named tensor).
bool recomputes_forward(const workloads::TrainSpec& spec);

}  // namespace plan
