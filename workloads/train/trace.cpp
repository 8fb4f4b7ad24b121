#include "workloads/train/trace.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "runtime/program_trace.h"

namespace workloads {

std::string train_trace(const TrainRun& r, const sim::TraceRequest& request, TraceSummary& summary) {
  static const char* kIciQueueNames[] = {"ici tensor-parallel", "ici gradients", "ici send", "ici recv (waiting)",
                                         "ici weights"};
  constexpr std::uint32_t kPipelineTrack = 0;
  sim::TraceWriter tw;
  // By default the simulated chips only: a replica's ops are its representative's.
  const std::vector<std::uint32_t> chips = sim::chips_to_trace(request, r.run.representative);
  std::vector<std::vector<std::size_t>> events;
  std::vector<const std::vector<hw::OpTiming>*> timings;
  for (const std::uint32_t c : chips) timings.push_back(r.run.timings[c].get());
  tw.aggregate(runtime::trace_bin_ps(request, timings, r.run.link_rates));
  for (const std::uint32_t c : chips) {
    const ChipRole& role = r.layout.roles[c];
    tw.name_process(c, "chip" + std::to_string(c) + " (stage " + std::to_string(role.stage) + ", data " +
                           std::to_string(role.data) + ", tensor " + std::to_string(role.tensor) + "; " +
                           runtime::represented_note(c, r.run.representative) + ")");
    tw.name_track(c, kPipelineTrack, "pipeline tasks");
    const std::uint32_t rep = r.run.representative[c];  // whose program and timings chip c shares
    const hw::Program& prog = r.program.pod.chip(rep);
    const auto& timing = *r.run.timings[c];
    std::vector<char> named(4 * 1000 + 8, 0);
    std::vector<std::size_t>& event = events.emplace_back(prog.ops.size());
    for (std::size_t i = 0; i < prog.ops.size(); ++i) {
      const hw::Op& op = prog.ops[i];
      const std::uint32_t tid = 1 + static_cast<std::uint32_t>(op.engine.kind) * 1000 + std::min(op.engine.index, 999u);
      if (!named[tid]) {
        named[tid] = 1;
        const bool ici = op.engine.kind == hw::EngineKind::ici;
        tw.name_track(c, tid,
                      ici && op.engine.index < 5                        ? std::string(kIciQueueNames[op.engine.index])
                      : ici && op.engine.index == kIciSparseCoreWeights ? std::string("ici sparsecore weights")
                      : ici && op.engine.index == kIciSparseCoreGradients
                          ? std::string("ici sparsecore gradients")
                          : std::string(hw::engine_kind_name(op.engine.kind)) + std::to_string(op.engine.index));
      }
      event[i] = tw.op(c, tid, op.name, timing[i].start_ps, timing[i].end_ps, hw::engine_kind_name(op.engine.kind),
                       runtime::op_energy_args(op, r.exp.chip.energy, &r.program.pod.collectives));
    }
    runtime::trace_counters(tw, c, prog, timing, &r.program.pod.collectives, r.exp.chip.hbm.bandwidth_bytes_per_s);
    const ChipProgramMap& map = r.program.map(rep);
    for (const auto& [at, bytes] :
         memory_in_use(r.spec, r.micro, r.memory[c], r.layout.stages[r.layout.roles[c].stage], prog, map, timing))
      tw.counter(c, "HBM in use (B)", at, double(bytes));
    auto slice = [&](const std::string& name, std::uint32_t begin, std::uint32_t end, bool own_work_only) {
      std::uint64_t lo = UINT64_MAX, hi = 0;
      for (std::uint32_t i = begin; i < end; ++i) {
        if (own_work_only && !is_task_work(prog.ops[i])) continue;
        lo = std::min(lo, timing[i].start_ps);
        hi = std::max(hi, timing[i].end_ps);
      }
      if (lo <= hi) tw.op(c, kPipelineTrack, name, lo, hi, "pipeline", {}, false);
    };
    for (const auto& t : map.tasks) slice(task_label(t.task, r.spec.parallelism.virtual_stages), t.begin, t.end, true);
    slice("optimizer", map.optimizer_begin, map.optimizer_end, false);
  }
  runtime::trace_link_rates(tw, r.run.link_rates);
  runtime::trace_messages(tw, r.program.pod, chips, r.run.representative, events, timings);
  summary = {tw.ops(), tw.dropped(), chips, r.run.representative, tw.bin_ps()};
  return tw.json();
}

}  // namespace workloads
