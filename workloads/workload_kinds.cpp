#include "workloads/matmul_workload.h"
#include "workloads/workload.h"

namespace workloads {

const std::vector<WorkloadKind>& workload_kinds() {
  static const std::vector<WorkloadKind> kinds = {
      {"matmul", "C = A x B in BF16 on one chip, blocked through VMEM", load_matmul_workload},
  };
  return kinds;
}

}  // namespace workloads
