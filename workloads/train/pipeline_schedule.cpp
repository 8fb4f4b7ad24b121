#include "workloads/train/pipeline_schedule.h"

#include <algorithm>
#include <stdexcept>

#include "sim/params.h"

namespace workloads {

const sim::EnumNames<PipelineSchedule>& pipeline_schedule_names() {
  static const sim::EnumNames<PipelineSchedule> names(
      "pipeline schedule", {{PipelineSchedule::gpipe, "gpipe", "all forwards, then all backwards"},
                            {PipelineSchedule::one_f_one_b, "1f1b", "one forward, one backward: PipeDream-Flush"}});
  return names;
}

const char* to_string(PipelineSchedule s) { return pipeline_schedule_names().name(s); }

std::vector<PipelineTask> stage_tasks(PipelineSchedule schedule, std::uint32_t stages, std::uint32_t stage,
                                      std::uint32_t microbatches) {
  if (stage >= stages || microbatches == 0) throw std::invalid_argument("stage_tasks: bad stage or microbatches");
  const std::uint32_t m = microbatches;
  std::vector<PipelineTask> tasks;
  tasks.reserve(2 * m);
  if (schedule == PipelineSchedule::gpipe) {
    for (std::uint32_t j = 0; j < m; ++j) tasks.push_back({false, j});
    for (std::uint32_t j = m; j-- > 0;) tasks.push_back({true, j});
    return tasks;
  }
  const std::uint32_t warmup = std::min(stages - stage - 1, m);
  std::uint32_t next_forward = 0, next_backward = 0;
  for (; next_forward < warmup; ++next_forward) tasks.push_back({false, next_forward});
  while (next_forward < m) {
    tasks.push_back({false, next_forward++});
    tasks.push_back({true, next_backward++});
  }
  while (next_backward < m) tasks.push_back({true, next_backward++});
  return tasks;
}

std::uint32_t peak_in_flight(const std::vector<PipelineTask>& tasks) {
  std::uint32_t live = 0, peak = 0;
  for (const auto& t : tasks) {
    if (t.backward) {
      --live;
    } else {
      peak = std::max(peak, ++live);
    }
  }
  return peak;
}

}  // namespace workloads
