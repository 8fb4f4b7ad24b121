#pragma once
// MaxText's configuration front end (docs/maxtext.md). A MaxText run is a
// model name and key=value overrides (as benchmark_runner passes a recipe's
// tuning_params to MaxText.train) plus a libtpu flag string; this turns them
// into a typed MaxTextConfig (spec.h) for the training workload:
//
//   workload:
//     kind: maxtext
//     config: {model_name: llama3.1-70b, per_device_batch_size: 2, max_target_length: 8192,
//              ici_fsdp_parallelism: -1, remat_policy: custom, decoder_layer_input: offload, ...}
//     xla_flags: "--xla_tpu_scoped_vmem_limit_kib=98304 ..."
//
// Keys are merged as MaxText's pyconfig.py does (at tag tpu-recipes-v0.1.5):
// base.yml's defaults (configs/maxtext/base.yml, the keys tpusim reads),
// then the model file configs/maxtext/models/<model_name>.yml, then the
// config's keys. A key set by both the model file and the config is an
// error unless override_model_config: true, when the config wins; the model
// file's logical_axis_rules are merged into base.yml's rule by rule.
#include <cstdint>

#include "sim/yaml_node.h"
#include "workloads/maxtext/spec.h"

namespace workloads {

// Reads `config` (the mapping of MaxText keys) and `xla_flags` (a string of
// flags, or nullptr) for a pod of `chips` chips in `slices` slices (one JAX
// device per chip, as on v4, v5e, v5p and v6e). What it gives:
//   - model: the architecture, dimensions after global_parameter_scale;
//     model.layers() says what each layer is (local/global/chunked
//     attention, MoE or dense) as MaxText's decoder blocks build them;
//   - the run: per_device_batch_size (global_batch()), max_target_length,
//     dtype, weight_dtype, grad_dtype, mu_dtype (weight_dtype when ""),
//     opt_type, quantization, remat_policy with the per-tensor keys
//     (effective_remat() gives every policy per tensor), attention kernel
//     and splash blocks, MoE execution, num_vocab_tiling;
//   - mesh: every ici_* and dcn_* value filled by MaxText's -1 rule (ici
//     against chips / slices, dcn against slices); logical_axis_rules for
//     sharded_over() (axis_rules.h);
//   - xla: the modelled flags; xla.flags has every flag given;
//   - ignored_keys: keys and flags accepted with no effect on performance,
//     with the reason; approximations: unmodelled ones accepted because of
//     allow_unmodelled (the config's key, or the argument).
// Throws sim::ConfigError (exit 2), located at file:line:column, for: an
// unknown key or flag (with the nearest known one), an unmodelled key or
// flag with a value other than base.yml's (unless allow_unmodelled), a bad
// value, an unknown model_name, a key set by the model file too, and a mesh
// that does not fill the chips as MaxText's rule requires. Nothing is left
// to fail later.
MaxTextConfig load_maxtext_config(const sim::YamlNode& config, const sim::YamlNode* xla_flags, std::uint32_t chips,
                                  std::uint32_t slices, bool allow_unmodelled = false);

}  // namespace workloads
