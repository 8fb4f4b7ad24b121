#pragma once
// `kind: matmul`: C = A (m x k) x B (k x n) in BF16 on one chip.
#include <cstdint>
#include <memory>

#include "kernels/matmul_kernel.h"
#include "sim/params.h"
#include "workloads/experiment.h"

namespace workloads {

// The element types a matmul can have: BF16 only, the MXU's input type.
enum class MatmulDtype { bf16 };

struct MatmulWorkloadSpec {
  std::uint64_t m = 0, k = 0, n = 0;
  MatmulDtype dtype = MatmulDtype::bf16;
  kernels::MatmulBlocking blocking;  // bm/bk/bn 0 = chosen by the kernel
  std::uint64_t seed = 1;            // operands of functional runs
};

// Every key of `kind: matmul` (tpusim explain matmul).
const sim::ParamTable<MatmulWorkloadSpec>& matmul_params();

std::unique_ptr<Workload> load_matmul_workload(const sim::YamlNode& node, const Experiment& exp);

// The run, reusable by tests and sweeps without a file.
RunOutput run_matmul(const Experiment& exp, const MatmulWorkloadSpec& spec, const RunOptions& opts);

}  // namespace workloads
