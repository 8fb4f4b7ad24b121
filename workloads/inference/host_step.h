#pragma once
// The serving host's work in each server step, and where a server puts it
// (docs/serving.md#host-time-per-step): before every step the host
// schedules it and prepares its inputs, and after it takes the sampled
// tokens back (the chip's host.serve_step, fitted by scripts/calibrate:
// docs/calibration.md#serve-step).
#include "sim/params.h"

namespace workloads {

// sync: the device waits for the host between steps (vLLM V1 without
//   --async-scheduling: schedule, prepare inputs, run, sample, update).
// async: the host schedules step n + 1 while step n runs (vLLM's
//   --async-scheduling, vllm-project/vllm pull request 19970; JetStream's
//   generate thread dispatching steps ahead of its detokenize thread).
enum class Scheduling { sync, async };
const sim::EnumNames<Scheduling>& scheduling_names();

// A server step's time from its device time and the host's work per step:
// device + host when in series (sync), max(device, host) when overlapped
// (async: the host's work shows only where it outlasts the device's).
double server_step_s(double device_s, double host_s, Scheduling scheduling);

}  // namespace workloads
