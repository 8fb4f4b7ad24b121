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
//  interleaved  Megatron-LM's interleaved 1F1B (Narayanan et al. 2021
//         s.2.2.2): each stage holds V chunks of layers (virtual stages,
//         stages.h); a task is one microbatch's pass over one chunk. The
//         order is Megatron-LM's (schedules.py,
//         forward_backward_pipelining_with_interleaving): forwards go
//         through the chunks p microbatches at a time (virtual forward k is
//         chunk (k mod pV) / p of microbatch (k / pV) p + k mod p; backwards
//         the same with the chunks reversed), (p - s - 1) 2 + (V - 1) p
//         warm-up forwards (all of them when m = p), then one forward and one
//         backward, then the remaining backwards. m must be a multiple of p.
//         The bubble is (p - 1) / (V m + p - 1).
#include <cstdint>
#include <string>
#include <vector>

namespace sim {
template <class E>
class EnumNames;
}

namespace workloads {

enum class PipelineSchedule { gpipe, one_f_one_b, interleaved };

const sim::EnumNames<PipelineSchedule>& pipeline_schedule_names();  // the YAML spellings: gpipe, 1f1b, interleaved
const char* to_string(PipelineSchedule s);

struct PipelineTask {
  bool backward = false;
  std::uint32_t microbatch = 0;
  std::uint32_t chunk = 0;  // which of the stage's chunks (0 without interleaving)
};

// "F3", "B3" (forward, backward of microbatch 3); "F3c1" for chunk 1 of an
// interleaved stage's `chunks`.
std::string task_label(const PipelineTask& t, std::uint32_t chunks);

// Stage `stage` (0-based) of `stages`, `microbatches` microbatches, each
// stage holding `virtual_stages` chunks (1 but for interleaved).
std::vector<PipelineTask> stage_tasks(PipelineSchedule schedule, std::uint32_t stages, std::uint32_t stage,
                                      std::uint32_t microbatches, std::uint32_t virtual_stages);

// The bubble of uniform stages with free communication: (p - 1) / (V m + p - 1)
// (docs/reference/formulas.md §4; V = 1 for GPipe and 1F1B).
double ideal_bubble(std::uint32_t stages, std::uint32_t microbatches, std::uint32_t virtual_stages);

// The most microbatches (chunk passes, interleaved) whose forward has run and
// whose backward has not, at any point of the list: how many activation
// stashes the stage holds at once.
std::uint32_t peak_in_flight(const std::vector<PipelineTask>& tasks);

}  // namespace workloads
