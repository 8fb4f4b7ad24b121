#pragma once
// A MaxText run as tpusim's training step (docs/maxtext.md, "From MaxText
// to tpusim"): the model, the batch, the mesh and each axis's strategy,
// the number formats, the optimizer and the remat policy of a
// MaxTextConfig (config.h), as a TrainSpec and the mesh the experiment runs
// on.
//
//   MaxText                          tpusim
//   per_device_batch_size x chips    global_batch
//   gradient_accumulation_steps      parallelism.microbatches
//   data (ici and dcn)               parallelism.data
//   fsdp, fsdp_transpose             parallelism.fsdp (both shard the weights and split the batch)
//   tensor                           parallelism.tensor
//   stage                            parallelism.pipeline
//   context                          parallelism.context (ring attention)
//   expert                           parallelism.expert
//   weight_dtype, mu_dtype           precision.params, precision.optimizer
//   quantization int8 | fp8          precision.matmul
//   remat_policy (+ tensor keys)     remat: custom with every named tensor placed (remat_policy.h)
//   attention flash | autoselected   model.attention: flash; dot_product: materialized
//   shard_optimizer_over_data        parallelism.zero: 1
// Each ici axis of more than one chip is a mesh axis of that name, each dcn
// one "dcn_<name>" across the slices; they are laid on the pod's physical
// axes in MaxText's order (data ... expert), or the first order in which
// every axis takes whole physical axes; where none is and the config sets
// allow_split_physical_axes, split as JAX's mesh_utils does with it: the reverse order (expert first, on the
// inner factors), or the first order that maps (interconnect/mesh.h).
//
// What MaxText runs and tpusim does not model yet is refused, located at
// the key that asks for it (exit 2), or with allow_unmodelled listed in
// the config's approximations and run without it.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/yaml_node.h"
#include "workloads/experiment.h"
#include "workloads/maxtext/spec.h"
#include "workloads/train/spec.h"

namespace workloads {

struct MaxTextTrain {
  TrainSpec spec;
  std::vector<std::pair<std::string, std::uint32_t>> mesh;  // in placement order
  std::vector<std::string> dcn_axes;                        // mesh axes across the slices
};

// `config` is the workload's `config:` mapping and `flags` its xla_flags
// (nullptr: none), for locating errors; `cfg` may gain approximations.
// xla_tpu_scoped_vmem_limit_kib is the experiment's (maxtext_experiment).
MaxTextTrain maxtext_to_train(MaxTextConfig& cfg, const sim::YamlNode& config, const sim::YamlNode* flags,
                              const Experiment& exp);

}  // namespace workloads
