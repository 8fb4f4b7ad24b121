#include "sim/kernel.h"

#include <algorithm>
#include <chrono>
#include <systemc>
#include <tlm>

namespace sim {

void reset_kernel() {
  // The first context is referenced by static events inside the library and
  // must never be deleted (docs/architecture.md).
  static sc_core::sc_simcontext* const boot = sc_core::sc_get_curr_simcontext();
  if (sc_core::sc_curr_simcontext != boot) delete sc_core::sc_curr_simcontext;
  sc_core::sc_curr_simcontext = new sc_core::sc_simcontext();
  sc_core::sc_default_global_context = sc_core::sc_curr_simcontext;
  sc_core::sc_report_handler::initialize();
  // An op that fails stops the simulation (sc_stop) and the run reports
  // why; SystemC's own "stopped by user" and "sc_stop has already been
  // called" lines would only precede that message.
  sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  sc_core::sc_report_handler::set_actions(sc_core::SC_ID_SIMULATION_STOP_CALLED_TWICE_, sc_core::SC_DO_NOTHING);
  tlm::tlm_global_quantum::instance().set(sc_core::SC_ZERO_TIME);
  sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
  disarm_host_deadline();
}

std::uint64_t kernel_events() { return sc_core::sc_delta_count(); }

namespace {

struct HostDeadline {
  bool armed = false, tripped = false;
  std::chrono::steady_clock::time_point at;
};
HostDeadline& host_deadline() {
  static HostDeadline d;
  return d;
}

}  // namespace

void arm_host_deadline(double seconds_from_now) {
  HostDeadline& d = host_deadline();
  d.armed = true;
  d.tripped = false;
  d.at = std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(
             std::chrono::duration<double>(std::min(seconds_from_now, 1e9)));  // limits.max_wall_time is at most 1e7 s
}

void disarm_host_deadline() { host_deadline() = HostDeadline{}; }

bool host_deadline_passed() {
  HostDeadline& d = host_deadline();
  if (!d.armed) return false;
  if (!d.tripped && std::chrono::steady_clock::now() >= d.at) {
    d.tripped = true;
    sc_core::sc_stop();
  }
  return d.tripped;
}

bool host_deadline_tripped() { return host_deadline().tripped; }

}  // namespace sim
