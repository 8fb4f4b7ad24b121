#include "workloads/train/measure.h"

#include <algorithm>
#include <limits>
#include <map>

#include "sim/units.h"

namespace workloads {

namespace {

using sim::ps_to_seconds;

struct Span {
  std::uint64_t start = std::numeric_limits<std::uint64_t>::max(), end = 0;
  bool empty() const { return end < start; }
  std::uint64_t length() const { return empty() ? 0 : end - start; }
};

// First start to last end of the task's own work.
Span task_span(const hw::Program& prog, const std::vector<hw::OpTiming>& t, std::uint32_t begin, std::uint32_t end,
               bool own_work_only) {
  Span s;
  for (std::uint32_t i = begin; i < end; ++i) {
    if (own_work_only && !is_task_work(prog.ops[i])) continue;
    s.start = std::min(s.start, t[i].start_ps);
    s.end = std::max(s.end, t[i].end_ps);
  }
  return s;
}

// Time covered by at least one span: consecutive tasks on a stage may
// overlap a little (the next starts while the last ops of the previous
// drain), and that time is busy once.
std::uint64_t union_length(std::vector<Span> spans) {
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
  std::uint64_t total = 0, covered_to = 0;
  for (const Span& s : spans) {
    const std::uint64_t from = std::max(s.start, covered_to);
    if (s.end > from) total += s.end - from;
    covered_to = std::max(covered_to, s.end);
  }
  return total;
}

}  // namespace

TrainMeasurement measure_train(const TrainProgram& program, const runtime::PodRunResult& run,
                               const TrainLayout& layout) {
  TrainMeasurement m;
  const std::uint32_t chips = layout.chips();
  const std::size_t stages = layout.stages.size();
  std::vector<std::uint64_t> busy(chips, 0);
  std::vector<std::uint32_t> chips_in_stage(stages, 0);
  m.stage_busy_s.assign(stages, 0);
  m.peak_in_flight.assign(stages, 0);
  m.forward_s.assign(chips, 0);
  m.backward_s.assign(chips, 0);
  m.optimizer_s.assign(chips, 0);
  Span pipeline;
  // Replicas simulated once share their program and timings: measure each
  // such pair once.
  struct ChipMeasure {
    std::uint64_t busy = 0;
    double forward_s = 0, backward_s = 0, optimizer_s = 0;
    std::uint32_t peak = 0;
    Span span;
  };
  std::map<std::pair<std::uint32_t, const void*>, ChipMeasure> measured;
  for (std::uint32_t c = 0; c < chips; ++c) {
    const auto key = std::make_pair(program.pod.program_of[c], static_cast<const void*>(run.timings[c].get()));
    auto it = measured.find(key);
    if (it == measured.end()) {
      const hw::Program& prog = program.pod.chip(c);
      const auto& timing = *run.timings[c];
      const ChipProgramMap& map = program.map(c);
      ChipMeasure cm;
      std::vector<std::pair<std::uint64_t, int>> events;  // (time, +1 forward starts / -1 backward ends)
      std::vector<Span> spans;
      for (const auto& t : map.tasks) {
        const Span s = task_span(prog, timing, t.begin, t.end, true);
        if (s.empty()) continue;
        spans.push_back(s);
        (t.task.backward ? cm.backward_s : cm.forward_s) += ps_to_seconds(s.length());
        cm.span.start = std::min(cm.span.start, s.start);
        cm.span.end = std::max(cm.span.end, s.end);
        events.push_back(t.task.backward ? std::make_pair(s.end, -1) : std::make_pair(s.start, +1));
      }
      cm.busy = union_length(spans);
      std::sort(events.begin(), events.end());  // at equal times, a release before an allocation
      int live = 0;
      for (const auto& e : events)
        cm.peak = std::max<std::uint32_t>(cm.peak, static_cast<std::uint32_t>(live += e.second));
      cm.optimizer_s = ps_to_seconds(task_span(prog, timing, map.optimizer_begin, map.optimizer_end, false).length());
      it = measured.emplace(key, cm).first;
    }
    const ChipMeasure& cm = it->second;
    busy[c] = cm.busy;
    m.forward_s[c] = cm.forward_s;
    m.backward_s[c] = cm.backward_s;
    m.optimizer_s[c] = cm.optimizer_s;
    pipeline.start = std::min(pipeline.start, cm.span.start);
    pipeline.end = std::max(pipeline.end, cm.span.end);
    const std::uint32_t stage = layout.roles[c].stage;
    m.peak_in_flight[stage] = std::max(m.peak_in_flight[stage], cm.peak);
    m.stage_busy_s[stage] += ps_to_seconds(busy[c]);
    ++chips_in_stage[stage];
  }
  for (std::size_t s = 0; s < stages; ++s)
    if (chips_in_stage[s]) m.stage_busy_s[s] /= chips_in_stage[s];
  if (pipeline.empty()) return m;
  m.span_start_s = ps_to_seconds(pipeline.start);
  m.span_end_s = ps_to_seconds(pipeline.end);
  const double span = double(pipeline.length());
  double idle = 0;
  for (std::uint32_t c = 0; c < chips; ++c) idle += span - double(busy[c]);
  m.bubble_fraction = span > 0 ? idle / (span * chips) : 0.0;
  return m;
}

}  // namespace workloads
