#pragma once
// `kind: matmul`: C = A (m x k) x B (k x n) on one chip, in bf16 or an 8-bit
// format the chip has (`dtype`).
#include <cstdint>
#include <memory>

#include "hw/number_format.h"
#include "kernels/matmul_kernel.h"
#include "sim/params.h"
#include "workloads/experiment.h"

namespace workloads {

struct MatmulWorkloadSpec {
  std::uint64_t m = 0, k = 0, n = 0;
  hw::NumberFormat dtype = hw::NumberFormat::bf16;  // of A, B and C
  kernels::MatmulBlocking blocking;                 // bm/bk/bn 0 = chosen by the kernel
  std::uint64_t seed = 1;                           // operands of functional runs
  // Host time on the timed path of a call (Python dispatch and the host
  // round trip of a measurement timed from the host), in series with the
  // chip's time: docs/matmul.md#host-dispatch. 0: the chip's time alone.
  double host_dispatch = 0;
  // Host time of a call that runs while the chip computes (the Python work
  // after an asynchronous dispatch returns, before the caller blocks): the
  // call takes host_dispatch + max(the chip's time, host_overlap).
  // docs/matmul.md#host-dispatch. 0: none.
  double host_overlap = 0;
  // Time per output block of a kernel whose grid `block` fixes (a Pallas
  // kernel's), in series with its pipeline: the last k step's cast and store
  // of the accumulator and the output block's writeback before the next
  // block's pipeline runs. docs/matmul.md#block-epilogue. 0: none.
  double block_epilogue = 0;
};

// Every key of `kind: matmul` (tpusim explain matmul).
const sim::ParamTable<MatmulWorkloadSpec>& matmul_params();

std::unique_ptr<Workload> load_matmul_workload(const sim::YamlNode& node, const Experiment& exp);

// The run, reusable by tests and sweeps without a file.
RunOutput run_matmul(const Experiment& exp, const MatmulWorkloadSpec& spec, const RunOptions& opts);

}  // namespace workloads
