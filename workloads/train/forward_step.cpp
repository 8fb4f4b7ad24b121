#include "workloads/train/forward_step.h"

namespace workloads {

const sim::EnumNames<Elementwise>& elementwise_names() {
  static const sim::EnumNames<Elementwise> names("elementwise mode",
                                                 {{Elementwise::fused, "fused", "no HBM traffic of their own"},
                                                  {Elementwise::unfused, "unfused", "each op's own HBM round trip"}});
  return names;
}

const char* to_string(Elementwise e) { return elementwise_names().name(e); }

}  // namespace workloads
