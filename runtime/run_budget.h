#pragma once
// The host cost of a run, estimated before it is built: the memory it will
// hold (chips simulated x per-chip state, ops, trace events, PE operands)
// against limits.max_memory, and the PE-array cycles of a `fidelity: pe`
// run against limits.max_pe_cycles. Either beyond its limit is exit 3
// (sim::SimFailure) with the estimate, before anything large is allocated.
#include <string>
#include <utility>
#include <vector>

#include "hw/chip_config.h"
#include "hw/program.h"
#include "runtime/limits.h"

namespace runtime {

// Bytes of host memory, by part ("64 chips simulated x 2.0 MB").
class MemoryEstimate {
 public:
  void add(std::string part, double bytes) { parts_.emplace_back(std::move(part), bytes); }
  double total() const;
  // "1.2 GB (64 chips simulated x 2.0 MB: 128 MB, 3.1e6 ops x 320 B: 1.0 GB)"
  std::string str() const;

 private:
  std::vector<std::pair<std::string, double>> parts_;
};

// limits.max_memory, or half the machine's memory when it is not given.
double memory_limit_bytes(const Limits& limits);

// Throws sim::SimFailure when the estimate is above memory_limit_bytes;
// `what` names the run ("the simulation", "explain mxu").
void check_memory(const Limits& limits, const MemoryEstimate& estimate, const std::string& what);

// PE-array cycles of one MXU op at pe fidelity: its cycles (the closed
// form the PE engine agrees with, hw/mxu_timing.h) x rows x cols.
double pe_cycles(const hw::MxuConfig& mxu, const hw::MxuShape& shape);
// Host bytes the PE engine holds while it runs one op: the operands it
// streams (zeros when the op carries no values) and the FP32 outputs.
double pe_operand_bytes(const hw::MxuShape& shape);

// PE-array cycles the PE engine steps per host second (measured: 8192^3 on
// a v4, 1.8e14 PE cycles, took about 3 minutes; docs/hardening.md).
inline constexpr double kPeCyclesPerHostSecond = 3e9;

// Throws sim::SimFailure when `cycles` is above limits.max_pe_cycles; a
// run estimated at more than limits.progress_interval of host time says so
// (info) before it starts, so its progress lines can be read against it.
void check_pe_cycles(const Limits& limits, double cycles, const std::string& what);

// Memory of a pod run whose simulated chips run `programs` (one entry per
// simulated chip), in a pod of `pod_chips` joined by `collectives`, with a
// trace or without, and at pe fidelity its PE-cycle budget; throws as the
// checks above.
void check_pod_budget(const Limits& limits, const hw::ChipConfig& chip, hw::Fidelity fidelity,
                      const std::vector<const hw::Program*>& programs, int pod_chips, std::size_t collectives,
                      bool trace);

}  // namespace runtime
