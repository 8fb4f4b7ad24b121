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

// Throws as check_memory when `ops` ops of programs under construction
// would already hold more than the limit: a builder calls it after each
// program it adds, so a run too big to build stops within one program of
// the limit instead of after building everything (issue 46).
void check_program_memory(const Limits& limits, double ops, const std::string& what);

// What a pod run holds besides its chips and programs.
struct PodRunSize {
  int pod_chips = 0;
  // Of the pod's chips, the fraction whose collective schedules are planned
  // (runtime::PlanCover: on a symmetric pod, the orbit chips' only).
  double planned_fraction = 1;
  // (chip, collective) pairs: each participant's end of each collective,
  // recorded by the run (a chip that never issues a collective holds none).
  double collective_chips = 0;
  // Events its trace records (before the trace's own cap); 0 without one.
  double trace_events = 0;
};

// Memory of a pod run whose simulated chips run `programs` (one entry per
// simulated chip), and at pe fidelity its PE-cycle budget; throws as the
// checks above.
void check_pod_budget(const Limits& limits, const hw::ChipConfig& chip, hw::Fidelity fidelity,
                      const std::vector<const hw::Program*>& programs, const PodRunSize& size);

}  // namespace runtime
