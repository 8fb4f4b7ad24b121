#include "runtime/program_trace.h"

#include <set>
#include <string>

namespace runtime {

namespace {
// Tracks sort by engine kind, then instance.
std::uint32_t track_id(const hw::EngineRef& e) { return static_cast<std::uint32_t>(e.kind) * 1000 + e.index; }
}  // namespace

std::vector<sim::TraceArg> op_energy_args(const hw::Op& op, const hw::EnergyParams& energy) {
  const hw::OpWork w = hw::op_work(op);
  if (!w.any()) return {};
  return {{"macs", w.macs},
          {"vmem_bytes", w.vmem_bytes},
          {"hbm_bytes", w.hbm_bytes},
          {"energy_j", energy.total_j(w.macs, w.vmem_bytes, w.hbm_bytes)}};
}

void trace_program(sim::TraceWriter& trace, std::uint32_t chip, const hw::Program& program,
                   const std::vector<hw::OpTiming>& timings, const hw::EnergyParams& energy) {
  trace.name_process(chip, "chip" + std::to_string(chip));
  std::set<std::uint32_t> named;
  for (std::size_t i = 0; i < program.ops.size(); ++i) {
    const hw::Op& op = program.ops[i];
    const std::uint32_t tid = track_id(op.engine);
    if (named.insert(tid).second)
      trace.name_track(chip, tid, std::string(hw::engine_kind_name(op.engine.kind)) + std::to_string(op.engine.index));
    trace.op(chip, tid, op.name, timings[i].start_ps, timings[i].end_ps, hw::engine_kind_name(op.engine.kind),
             op_energy_args(op, energy));
  }
}

}  // namespace runtime
