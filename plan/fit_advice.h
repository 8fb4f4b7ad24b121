#pragma once
// What to change when a training step does not fit (issue 47; docs/plan.md,
// "Does not fit"): the fullest chip's largest memory item, and the smallest
// changes of the step after which every chip fits, by the planner's own
// count (estimate_candidate: train_memory, and the lower bound on the step
// time that ranks them).
//
// The changes are the step's memory levers that keep its chips and batch:
// FSDP over the data axes, ZeRO-1, remat full, host offload, more
// microbatches, and a data axis given to tensor or to context parallelism
// (kind: maxtext: its own keys for the first, third and fourth). A lever
// the step already pulls is not offered (a step with FSDP and full remat is
// told about offload and context parallelism, not about FSDP and remat).
// One change when one fits, else two; those that fit are ranked by their
// lower bound on the step time, then by how many keys they set.
#include <cstdint>
#include <string>
#include <vector>

namespace plan {

struct FitChange {
  std::string what;                // "FSDP over the data axes"
  std::vector<std::string> sets;   // --set arguments that make it
  std::uint64_t memory_bytes = 0;  // the fullest chip's HBM after it
  double bound_s = 0;              // its lower bound on the step time
};

struct FitAdvice {
  std::string largest_item;  // of the fullest chip, as memory_breakdown names it
  std::uint64_t largest_item_bytes = 0;
  std::uint64_t capacity_bytes = 0;
  std::vector<FitChange> fits;  // at most three, best first; empty: nothing tried fits
};

// The experiment in `text` (at `path`, with its --set `overrides`) is a
// kind: train or kind: maxtext step that does not fit. Throws
// sim::ConfigError as the loader does.
FitAdvice fit_advice(const std::string& text, const std::string& path, const std::vector<std::string>& overrides);

// The advice as sentences for a does-not-fit message ("Largest item: ...
// Changes that fit, ...").
std::string describe(const FitAdvice& advice);

}  // namespace plan
