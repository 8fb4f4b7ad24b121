#pragma once
// `kind: synthetic`: a job whose serial fraction is known by construction,
// made of real simulated work, for checking Amdahl's law end to end.
//
// The job is `units` equal BF16 matmuls (unit.m x unit.k x unit.n each).
// round(serial_fraction x units) of them run on chip 0 alone, one after
// another (the serial part). Chip 0 then broadcasts `broadcast_bytes` to
// every chip (the tiny collective that joins the parts; none on one chip or
// when 0), and the remaining units are dealt out over all chips, each chip
// running its share one after another. So on one chip the step is
// units x t_unit and on N chips (serial + ceil(parallel / N)) x t_unit plus
// the broadcast: Amdahl's law with p = 1 - serial_fraction whenever N
// divides the parallel units.
//
// `state_bytes` is resident job state split evenly over the chips (as
// sharded optimizer state is); a chip whose share plus one unit's operands
// exceeds its HBM does not fit, so small pods can fail as real jobs do.
#include <cstdint>
#include <memory>

#include "runtime/pod_run.h"
#include "sim/params.h"
#include "workloads/experiment.h"

namespace workloads {

struct SyntheticUnit {
  std::uint64_t m = 2048, k = 2048, n = 2048;
};

struct SyntheticSpec {
  double serial_fraction = 0.1;
  std::uint64_t units = 1000;
  SyntheticUnit unit;
  std::uint64_t broadcast_bytes = 4096;
  std::uint64_t state_bytes = 0;

  std::uint64_t serial_units() const;
  std::uint64_t parallel_units() const { return units - serial_units(); }
  // Parallel units dealt to `chip` of `chips`: the first (parallel % chips) get one more.
  std::uint64_t parallel_units_on(std::uint32_t chip, std::uint32_t chips) const;
};

// Every key of `kind: synthetic` (tpusim explain synthetic).
const sim::ParamTable<SyntheticSpec>& synthetic_params();

std::unique_ptr<Workload> load_synthetic_workload(const sim::YamlNode& node, const Experiment& exp);

// The per-chip programs (exposed for tests).
runtime::PodProgram build_synthetic_program(const Experiment& exp, const SyntheticSpec& spec);

RunOutput run_synthetic(const Experiment& exp, const SyntheticSpec& spec, const RunOptions& opts);

}  // namespace workloads
