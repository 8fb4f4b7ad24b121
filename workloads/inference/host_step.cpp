#include "workloads/inference/host_step.h"

#include <algorithm>

namespace workloads {

const sim::EnumNames<Scheduling>& scheduling_names() {
  static const sim::EnumNames<Scheduling> names(
      "scheduling",
      {{Scheduling::sync, "sync", "the host's work of each step (host.serve_step) runs between device steps"},
       {Scheduling::async, "async",
        "the host schedules the next step while this one runs (vLLM --async-scheduling; JetStream's generate "
        "thread): a step takes the longer of the two"}});
  return names;
}

double server_step_s(double device_s, double host_s, Scheduling scheduling) {
  return scheduling == Scheduling::sync ? device_s + host_s : std::max(device_s, host_s);
}

}  // namespace workloads
