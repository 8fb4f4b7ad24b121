#include "workloads/train/pipeline_schedule.h"

#include <algorithm>
#include <stdexcept>

#include "sim/params.h"

namespace workloads {

const sim::EnumNames<PipelineSchedule>& pipeline_schedule_names() {
  static const sim::EnumNames<PipelineSchedule> names(
      "pipeline schedule", {{PipelineSchedule::gpipe, "gpipe", "all forwards, then all backwards"},
                            {PipelineSchedule::one_f_one_b, "1f1b", "one forward, one backward: PipeDream-Flush"},
                            {PipelineSchedule::interleaved, "interleaved",
                             "1F1B over virtual_stages chunks of layers per stage (Megatron-LM)"}});
  return names;
}

const char* to_string(PipelineSchedule s) { return pipeline_schedule_names().name(s); }

std::string task_label(const PipelineTask& t, std::uint32_t chunks) {
  return std::string(t.backward ? "B" : "F") + std::to_string(t.microbatch) +
         (chunks > 1 ? "c" + std::to_string(t.chunk) : "");
}

namespace {

// Megatron-LM's interleaved 1F1B (pipeline_schedule.h).
std::vector<PipelineTask> interleaved_tasks(std::uint32_t p, std::uint32_t s, std::uint32_t m, std::uint32_t v) {
  if (m % p != 0) throw std::invalid_argument("stage_tasks: interleaved needs microbatches a multiple of the stages");
  const std::uint32_t total = m * v;
  const std::uint32_t warmup = m == p ? total : std::min((p - s - 1) * 2 + (v - 1) * p, total);
  const auto task = [&](std::uint32_t k, bool backward) {
    const std::uint32_t chunk = k % (p * v) / p;
    return PipelineTask{backward, k / (p * v) * p + k % p, backward ? v - 1 - chunk : chunk};
  };
  std::vector<PipelineTask> tasks;
  tasks.reserve(2 * total);
  for (std::uint32_t k = 0; k < warmup; ++k) tasks.push_back(task(k, false));
  for (std::uint32_t i = 0; i + warmup < total; ++i) {
    tasks.push_back(task(warmup + i, false));
    tasks.push_back(task(i, true));
  }
  for (std::uint32_t i = total - warmup; i < total; ++i) tasks.push_back(task(i, true));
  return tasks;
}

}  // namespace

std::vector<PipelineTask> stage_tasks(PipelineSchedule schedule, std::uint32_t stages, std::uint32_t stage,
                                      std::uint32_t microbatches, std::uint32_t virtual_stages) {
  if (stage >= stages || microbatches == 0) throw std::invalid_argument("stage_tasks: bad stage or microbatches");
  if (virtual_stages == 0 || (virtual_stages > 1 && schedule != PipelineSchedule::interleaved))
    throw std::invalid_argument("stage_tasks: virtual stages need the interleaved schedule");
  if (schedule == PipelineSchedule::interleaved) return interleaved_tasks(stages, stage, microbatches, virtual_stages);
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

double ideal_bubble(std::uint32_t stages, std::uint32_t microbatches, std::uint32_t virtual_stages) {
  return double(stages - 1) / (double(virtual_stages) * microbatches + stages - 1);
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
