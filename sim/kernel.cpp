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
  tlm::tlm_global_quantum::instance().set(sc_core::SC_ZERO_TIME);
  sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
}

std::uint64_t kernel_events() { return sc_core::sc_delta_count(); }

}  // namespace sim
