#include "runtime/program_trace.h"

#include <set>
#include <string>

namespace runtime {

namespace {
// Tracks sort by engine kind, then instance.
std::uint32_t track_id(const hw::EngineRef& e) { return static_cast<std::uint32_t>(e.kind) * 1000 + e.index; }
}  // namespace

void trace_program(sim::TraceWriter& trace, std::uint32_t chip, const hw::Program& program,
                   const std::vector<hw::OpTiming>& timings) {
  trace.name_process(chip, "chip" + std::to_string(chip));
  std::set<std::uint32_t> named;
  for (std::size_t i = 0; i < program.ops.size(); ++i) {
    const hw::Op& op = program.ops[i];
    const std::uint32_t tid = track_id(op.engine);
    if (named.insert(tid).second)
      trace.name_track(chip, tid, std::string(hw::engine_kind_name(op.engine.kind)) + std::to_string(op.engine.index));
    trace.op(chip, tid, op.name, timings[i].start_ps, timings[i].end_ps, hw::engine_kind_name(op.engine.kind));
  }
}

}  // namespace runtime
