#pragma once
// The validated error a run carries (docs/report.md#validation): from the
// measured cases of validation/cases/, scripts/validate writes
// validation/summary.json, one entry per validation group (the kind of
// what was measured and the chip generation it ran on); the build embeds
// that file (CMakeLists.txt), and every report names the group most like
// its run, with that group's median |error| and signed mean error, or
// "none" when no measured case is like it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace workloads {

struct Experiment;

// One validation group as summary.json gives it. Errors are fractions,
// simulated / measured - 1, in time (negative = tpusim faster than the
// hardware, optimistic).
struct ValidationGroup {
  std::string group;  // "<kind>/<generation>", e.g. "train/v5e"
  std::string kind, generation;
  std::uint32_t cases = 0;
  double median_abs_error = 0, signed_mean_error = 0;
};

struct ValidationSummary {
  std::vector<ValidationGroup> groups;
  std::string problem;  // why there are no groups (no summary built in, unreadable); empty when read
};

// A summary from summary.json's text; an empty or unreadable text gives no
// groups and says why in `problem` (never an exception).
ValidationSummary parse_validation_summary(const std::string& text);
// The summary built into this binary from validation/summary.json.
const ValidationSummary& built_in_validation_summary();

// What a run's report carries: the group (or "none"), its cases and errors.
struct Validation {
  std::string group = "none";
  std::uint32_t cases = 0;
  std::optional<double> median_abs_error, signed_mean_error;
  std::string note;  // the terminal's words, e.g. "validated on 24 measured v5e training steps: ..."
};

// The validation kind of a workload kind: what its measured cases are
// (matmul, collective, sharded_matmul, train; kind: maxtext is a training
// step); empty for kinds no case measures (inference, conv, synthetic, hlo).
std::string validation_kind(const std::string& workload_kind);
// "v5e" for "tpu-v5e": the chip generation, the chip file's name without "tpu-".
std::string chip_generation(const std::string& chip_name);

// The group of `summary` with the run's validation kind and chip
// generation, or "none" with a note saying what is missing.
Validation pick_validation(const ValidationSummary& summary, const std::string& workload_kind,
                           const std::string& chip_name);

// The pick for an experiment's kind and chip from the built-in summary.
Validation validation_for(const Experiment& exp);

// "(validated on ...)": the experiment's note in brackets, for a table
// row beside a predicted figure (step time, MFU, tokens/s).
std::string validation_remark(const Experiment& exp);

}  // namespace workloads
