#pragma once
// `kind: maxtext` (docs/maxtext.md): a MaxText run as published, MaxText's
// own keys and the libtpu flag string:
//   workload:
//     kind: maxtext
//     config: {model_name: llama3.1-70b, per_device_batch_size: 2, max_target_length: 8192,
//              ici_fsdp_parallelism: -1, remat_policy: custom, decoder_layer_input: offload, ...}
//     xla_flags: "--xla_tpu_scoped_vmem_limit_kib=98304 ..."
//     allow_unmodelled: false
// read by load_maxtext_config (config.h), turned into a training step
// (to_train.h) on the mesh MaxText builds, and run as kind: train runs it;
// result.maxtext, result.ignored_keys and result.approximations say what
// became of every key.
#include <memory>

#include "sim/params.h"
#include "sim/yaml_node.h"
#include "workloads/experiment.h"

namespace workloads {

struct MaxTextWorkloadKeys {
  bool allow_unmodelled = false;
  bool simulate_anyway = false;
  std::string xla_flags;
};
// The keys of `kind: maxtext` itself (tpusim explain maxtext); config's
// keys are MaxText's (maxtext_keys(), keys.h).
const sim::ParamTable<MaxTextWorkloadKeys>& maxtext_workload_params();
nlohmann::json maxtext_workload_keys();

std::unique_ptr<Workload> load_maxtext_workload(const sim::YamlNode& node, const Experiment& exp);

}  // namespace workloads
