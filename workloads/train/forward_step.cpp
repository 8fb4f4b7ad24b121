#include "workloads/train/forward_step.h"

namespace workloads {

const sim::EnumNames<Elementwise>& elementwise_names() {
  static const sim::EnumNames<Elementwise> names("elementwise mode",
                                                 {{Elementwise::fused, "fused", "no HBM traffic of their own"},
                                                  {Elementwise::unfused, "unfused", "each op's own HBM round trip"}});
  return names;
}

const char* to_string(Elementwise e) { return elementwise_names().name(e); }

const sim::EnumNames<Execution>& execution_names() {
  static const sim::EnumNames<Execution> names("execution mode",
                                               {{Execution::jit, "jit", "one compiled program, elementwise ops fused"},
                                                {Execution::eager, "eager", "op by op from the host, nothing fused"}});
  return names;
}

const char* to_string(Execution e) { return execution_names().name(e); }

}  // namespace workloads
