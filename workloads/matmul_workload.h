#pragma once
// `kind: matmul`: C = A (m x k) x B (k x n) in BF16 on one chip.
#include <cstdint>
#include <memory>

#include "kernels/matmul_kernel.h"
#include "workloads/experiment.h"

namespace workloads {

struct MatmulWorkloadSpec {
  std::uint64_t m = 0, k = 0, n = 0;
  kernels::MatmulBlocking blocking;  // bm/bk/bn 0 = chosen by the kernel
  std::uint64_t seed = 1;            // operands of functional runs
};

std::unique_ptr<Workload> load_matmul_workload(const sim::YamlNode& node, const Experiment& exp);

// The run, reusable by tests and sweeps without a file.
RunOutput run_matmul(const Experiment& exp, const MatmulWorkloadSpec& spec, const RunOptions& opts);

}  // namespace workloads
