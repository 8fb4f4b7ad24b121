#pragma once
// Pipeline schedules: the order in which one stage runs the forward and
// backward passes of its microbatches. Each stage runs its list in order, one
// task at a time; when a task may start is up to the simulation (its input
// arrives from the neighbouring stage).
//
//  gpipe  all m forwards, then all m backwards (in reverse microbatch order);
//         a stage keeps the activations of all m microbatches
//         (Huang et al. 2019, arXiv:1811.06965).
//  1f1b   PipeDream-Flush (Narayanan et al. 2021, arXiv:2104.04473 s.2.2.1):
//         stage s runs min(p - s - 1, m) warm-up forwards, then alternates one
//         forward and one backward, then drains the remaining backwards; it
//         keeps at most p - s microbatches of activations.
#include <cstdint>
#include <string>
#include <vector>

namespace sim {
template <class E>
class EnumNames;
}

namespace workloads {

enum class PipelineSchedule { gpipe, one_f_one_b };

const sim::EnumNames<PipelineSchedule>& pipeline_schedule_names();  // the YAML spellings: gpipe, 1f1b
const char* to_string(PipelineSchedule s);

struct PipelineTask {
  bool backward = false;
  std::uint32_t microbatch = 0;
};

// Stage `stage` (0-based) of `stages`, `microbatches` microbatches.
std::vector<PipelineTask> stage_tasks(PipelineSchedule schedule, std::uint32_t stages, std::uint32_t stage,
                                      std::uint32_t microbatches);

// The most microbatches whose forward has run and whose backward has not, at
// any point of the list: how many activation stashes the stage holds at once.
std::uint32_t peak_in_flight(const std::vector<PipelineTask>& tasks);

}  // namespace workloads
