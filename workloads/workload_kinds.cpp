#include "workloads/cluster/workload.h"
#include "workloads/collective_workload.h"
#include "workloads/conv_workload.h"
#include "workloads/hlo/workload.h"
#include "workloads/inference/workload.h"
#include "workloads/matmul_workload.h"
#include "workloads/maxtext/workload.h"
#include "workloads/sharding/workload.h"
#include "workloads/synthetic_workload.h"
#include "workloads/train/workload.h"
#include "workloads/workload.h"

namespace workloads {

const std::vector<WorkloadKind>& workload_kinds() {
  static const std::vector<WorkloadKind> kinds = {
      {"matmul", "C = A x B in BF16 on one chip, blocked through VMEM", load_matmul_workload,
       [] { return matmul_params().describe(); }},
      {"collective", "one collective (all_reduce, all_gather, ...) timed on the ICI model", load_collective_workload,
       [] { return collective_params().describe(); }},
      {"sharded_matmul", "C = A x B over a pod, operands split by PartitionSpecs", load_sharded_matmul_workload,
       sharded_matmul_params},
      {"train", "one training step: data, tensor and pipeline parallelism", load_train_workload,
       [] { return train_params().describe(); }},
      {"maxtext", "a MaxText training run as published: model_name, MaxText's keys and XLA flags",
       load_maxtext_workload, maxtext_workload_keys},
      {"inference", "serving a Transformer: prefill and decode steps with a KV cache, tensor parallelism",
       load_inference_workload, [] { return inference_params().describe(); }},
      {"synthetic", "equal matmul units, a known serial share on chip 0 (Amdahl checks)", load_synthetic_workload,
       [] { return synthetic_params().describe(); }},
      {"conv", "convolution layers in order on one chip, each an im2col matmul", load_conv_workload,
       [] { return conv_params().describe(); }},
      {"hlo", "the program XLA compiled (HLO text of an SPMD module) on the pod", load_hlo_workload, hlo_params},
      {"cluster", "jobs (experiments) on named slices of a data center, sharing its network", load_cluster_workload,
       cluster_workload_keys},
  };
  return kinds;
}

}  // namespace workloads
