#include "sim/kernel.h"

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
}

std::uint64_t kernel_events() { return sc_core::sc_delta_count(); }

}  // namespace sim
