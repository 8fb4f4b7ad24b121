#pragma once
// A plan file (docs/plan.md): which model to train on which chips with
// which batch, and what the planner may choose:
//   name: llama-70b-v6e-256               # default: the file name; outputs go to runs/<name>/
//   model: llama3.1-70b                   # a MaxText model_name, or a tpusim model mapping
//   chip: tpu-v6e
//   chips: 256                            # or pod: {topology, shape, wraparound}
//   slices: 2                             # slices of those chips over DCN (or pod: {slices, slice})
//   global_batch: 1024                    # sequences per step (or tokens: per step)
//   seq_len: 8192
//   axes: [data, fsdp, tensor, context, pipeline, expert]   # the parallelisms it may use
//   fixed: {tensor: 4}                    # degrees every candidate keeps
//   max_axis_splits: 1                    # cuts of physical axes into factors a mesh may make (default 0)
//   candidate_wall_time: 120              # host seconds each candidate's simulation may take
//   remat: [none, minimal, full, offload] # the policies it tries
//   microbatches: [1, 2, 4, 8]            # per replica; with a pipeline, times the stages
//   max_memory_fraction: 1.0              # of HBM a candidate may fill
//   objective: step_time                  # step_time | tokens_per_s_per_chip | mfu
//   top: 3                                # best candidates written as experiment files
//   xla_flags: "--xla_tpu_enable_async_collective_fusion=true ..."   # MaxText candidates' flags
//   maxtext: {weight_dtype: float32, megablox: true}                  # and further MaxText keys
// Every key is declared once in plan_params(); `tpusim explain plan`
// prints them. Bad input is a located sim::ConfigError (exit 2).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/params.h"
#include "sim/yaml_node.h"

namespace plan {

// The parallelisms a candidate may use, in the order they are reported.
enum class Axis { data, fsdp, tensor, pipeline, context, expert };
const sim::EnumNames<Axis>& axis_names();
const char* to_string(Axis a);
inline constexpr std::size_t kAxes = 6;

enum class Objective { step_time, tokens_per_s_per_chip, mfu };
const sim::EnumNames<Objective>& objective_names();
const char* to_string(Objective o);

struct PlanSpec {
  std::string name;
  std::string path;  // the plan file ("command line" for the flags)
  // A MaxText model_name (configs/maxtext/models/<name>.yml) or, when
  // model_yaml is set, a tpusim model mapping (one-line YAML) run as kind: train.
  std::string maxtext_model;
  std::string model_yaml;
  std::string chip;
  std::string chip_file;     // the file `chip` names
  std::uint32_t chips = 0;   // of one slice
  std::uint32_t slices = 1;  // joined by DCN; each candidate takes data or fsdp across them
  std::string pod_yaml;      // an explicit `pod:` mapping of one slice (one-line YAML); empty: the planner's shape
  std::string dcn_yaml;      // the pod's `dcn:` mapping between slices (one-line YAML); empty: the defaults
  std::uint64_t global_batch = 0;
  std::uint64_t tokens = 0;  // per step, instead of global_batch
  std::uint64_t seq_len = 0;
  std::vector<Axis> axes;                   // empty: every one the model allows
  std::map<Axis, std::uint32_t> fixed;      // degree each candidate keeps
  std::uint32_t max_axis_splits = 0;        // cuts of physical axes a mesh may make (0: whole axes only)
  std::vector<std::string> remat;           // empty: the model kind's defaults
  std::vector<std::uint32_t> microbatches;  // empty: 1, 2, 4, 8
  double max_memory_fraction = 1.0;
  Objective objective = Objective::step_time;
  std::uint32_t top = 3;
  std::string xla_flags;              // a MaxText model's candidates run with these libtpu flags
  std::string maxtext_keys;           // and these MaxText keys (one-line YAML mapping; empty: none)
  std::uint32_t max_simulations = 0;  // 0: no cap
  double candidate_wall_time = 0;     // host seconds a candidate's simulation may take (0: the run's default)
  bool exhaustive = false;            // simulate every candidate that fits (no bound pruning)

  bool is_maxtext() const { return model_yaml.empty(); }
  std::uint64_t total_chips() const { return std::uint64_t(chips) * slices; }
  std::uint64_t batch() const { return global_batch ? global_batch : tokens / seq_len; }
};

// Every key of a plan file (tpusim explain plan).
const sim::ParamTable<PlanSpec>& plan_params();

// Loads and checks a plan: a file, or YAML text that `origin` names in
// messages (the command line's flags, as tpusim plan --model ... builds it).
PlanSpec load_plan_file(const std::string& path);
PlanSpec load_plan_text(const std::string& text, const std::string& origin);

}  // namespace plan
