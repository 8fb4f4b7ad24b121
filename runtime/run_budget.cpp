#include "runtime/run_budget.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <variant>

#include "hw/mxu_timing.h"
#include "sim/error.h"
#include "sim/host.h"
#include "sim/output.h"
#include "sim/trace.h"

namespace runtime {

namespace {

// The coefficients are peak-RSS differences between runs of Release
// tpusim that differ in one count (2026-12-01, x86-64, glibc):
// Per simulated chip: its engines (SystemC modules and processes),
// sequencer and statistics. `kind: collective`, 4 KiB all-reduce, every
// chip simulated, 512 vs 2048 v4 chips: 61 KB per chip, less the pod's
// share below.
constexpr double kChipStateBytes = 24e3;
// Per chip of the pod, simulated or not: its links, routes and per-chip
// results (the report's row of it, as JSON, most of it). Llama 3.1 405B's
// FSDP step on 4 vs 16 TPU7x superpods, plans of the orbit chips only
// (73,728 vs 294,912 devices, 2026-12-07): 7.8 KB per device.
constexpr double kPodChipBytes = 8e3;
// Per chip whose collective schedules are planned, on top: the 1.3 B
// data-parallel step, one chip simulated, every chip planned, 64 vs 512
// chips: 37 KB per chip in all, less kPodChipBytes.
constexpr double kPlannedChipBytes = 29e3;
// Per op of a distinct program: the hw::Op (name, payload, dependencies)
// and its planning. `kind: matmul` at tile fidelity, 8192^3 vs 16384^3
// (3137 vs 24833 ops): 724 B per op.
constexpr double kOpBytes = 724;
// Per op per simulated chip: its timing and the sequencer's state. The
// 1.3 B step on 64 chips, every chip vs one simulated (2720 ops): 113 KB
// per chip, less kChipStateBytes, over 2720 ops.
constexpr double kOpRunBytes = 33;
// Per trace event: the recorded event (sim::TraceWriter) and its text in
// trace.json, held twice while the text is assembled. The GPT-2-small
// data-parallel step on 512 v4 chips (train-dp-v4 on 8x8x8), every chip
// traced (1,000,000 events, the cap) against none (2026-12-07): 752 MB
// more, 750 B per event. (A 16384^3 matmul at tile fidelity, 28,930
// events, gives 514 B: fewer arguments per event.)
constexpr double kTraceEventBytes = 750;
// Per participant per collective: when the chip finished it, as the
// collective records it, as the report's per-chip ends copy it and as the
// replica check reads it: three (chip, time) pairs of 16 B (with symmetric
// axes the orbit chips' only: PodRunSize::collective_chips counts those). ASSUMPTION:
// from the structures' sizes, not measured; a 65,536-chip step's estimate
// was 2.2x low without it (issue 46). Counted per participant, not per
// chip of the pod: GPT-3 on 1024 v4 chips (16 stages, each collective
// within one stage) was estimated at 4.4 GB and peaks at 0.7 GB.
constexpr double kCollectiveChipBytes = 48;

std::string count(double n) { return sim::fixed(n, 0); }

}  // namespace

double MemoryEstimate::total() const {
  double t = 0;
  for (const auto& p : parts_) t += p.second;
  return t;
}

std::string MemoryEstimate::str() const {
  std::string s = sim::si(total(), "B") + " (";
  for (std::size_t i = 0; i < parts_.size(); ++i)
    s += (i ? ", " : "") + parts_[i].first + ": " + sim::si(parts_[i].second, "B");
  return s + ")";
}

void check_memory(const Limits& limits, const MemoryEstimate& estimate, const std::string& what) {
  if (estimate.total() <= memory_limit_bytes(limits)) return;
  throw sim::SimFailure("memory: " + what + " would need about " + estimate.str() + " of host memory, above " +
                        memory_limit_phrase(limits));
}

double pe_cycles(const hw::MxuConfig& mxu, const hw::MxuShape& shape) {
  return double(hw::mxu_tile_cycles(mxu, shape)) * double(mxu.rows) * double(mxu.cols);
}

double pe_operand_bytes(const hw::MxuShape& shape) {
  const double m = double(shape.m), k = double(shape.k), n = double(shape.n);
  return double(sizeof(hw::bf16)) * (m * k + k * n) + double(sizeof(float)) * m * n;
}

void check_pe_cycles(const Limits& limits, double cycles, const std::string& what) {
  const double host_s = cycles / kPeCyclesPerHostSecond;
  if (cycles <= limits.max_pe_cycles) {
    if (limits.progress_interval_s > 0 && host_s > limits.progress_interval_s)
      spdlog::info("{}: about {} PE-array cycles at fidelity: pe, about {} of host time", what, sim::fixed(cycles, 0),
                   sim::si(host_s, "s"));
    return;
  }
  throw sim::SimFailure("PE budget: " + what + " would simulate " + sim::fixed(cycles, 0) +
                        " PE-array cycles at fidelity: pe (about " + sim::fixed(host_s, 0) +
                        " s of host time), above limits.max_pe_cycles (" + sim::fixed(limits.max_pe_cycles, 0) +
                        "); use fidelity: tile or kernel, or raise limits.max_pe_cycles");
}

void check_program_memory(const Limits& limits, double ops, const std::string& what) {
  MemoryEstimate e;
  e.add(count(ops) + " ops built x " + sim::si(kOpBytes, "B"), ops * kOpBytes);
  check_memory(limits, e, what);
}

void check_pod_budget(const Limits& limits, const hw::ChipConfig& chip, hw::Fidelity fidelity,
                      const std::vector<const hw::Program*>& programs, const PodRunSize& size) {
  // The distinct programs in order of first use, and how many simulated
  // chips run each (an order independent of addresses: sums are the same
  // every run).
  std::vector<std::pair<const hw::Program*, double>> uses;
  std::map<const hw::Program*, std::size_t> index;
  for (const hw::Program* p : programs) {
    const auto [it, added] = index.emplace(p, uses.size());
    if (added) uses.emplace_back(p, 0.0);
    uses[it->second].second += 1;
  }
  double planned = 0, run = 0, cycles = 0, operands = 0;
  for (const auto& [p, chips] : uses) {
    planned += double(p->ops.size());
    run += chips * double(p->ops.size());
    if (fidelity != hw::Fidelity::pe) continue;
    for (const hw::Op& op : p->ops)
      if (const auto* mm = std::get_if<hw::MatmulOp>(&op.payload)) {
        const hw::MxuShape shape{mm->m, mm->k, mm->n};
        cycles += chips * pe_cycles(chip.mxu, shape);
        operands = std::max(operands, pe_operand_bytes(shape));
      }
  }
  const double chips = double(programs.size());
  MemoryEstimate e;
  e.add(count(chips) + " chips simulated x " + sim::si(kChipStateBytes, "B"), chips * kChipStateBytes);
  e.add(count(size.pod_chips) + " chips in the pod x " + sim::si(kPodChipBytes, "B"), size.pod_chips * kPodChipBytes);
  const double plans = size.pod_chips * size.planned_fraction;
  e.add(count(plans) + " chips planned x " + sim::si(kPlannedChipBytes, "B"), plans * kPlannedChipBytes);
  e.add(count(planned) + " ops x " + sim::si(kOpBytes, "B"), planned * kOpBytes);
  e.add(count(run) + " ops run x " + sim::si(kOpRunBytes, "B"), run * kOpRunBytes);
  if (size.collective_chips > 0)
    e.add(count(size.collective_chips) + " collective ends x " + sim::si(kCollectiveChipBytes, "B"),
          size.collective_chips * kCollectiveChipBytes);
  if (size.trace_events > 0) {
    const double events = std::min(size.trace_events, double(sim::TraceWriter::kMaxEvents));
    e.add(count(events) + " trace events x " + sim::si(kTraceEventBytes, "B"), events * kTraceEventBytes);
  }
  // Each MXU of a simulated chip holds its current op's operands.
  if (operands > 0) e.add("PE operands", operands * chip.mxus() * chips);
  check_memory(limits, e, "the simulation");
  if (fidelity == hw::Fidelity::pe) check_pe_cycles(limits, cycles, "the simulation");
}

}  // namespace runtime
