#include "sim/sim_time.h"

#include "sim/error.h"
#include "sim/output.h"

namespace sim {

void duration_overflow(double ps, const std::string& what) {
  const std::string length = std::isnan(ps) ? std::string("an undefined time") : g3(ps / kPsPerSecond, "s");
  throw SimFailure(what + " takes " + length + ", beyond what simulated time can hold (" +
                   g3(static_cast<double>(kMaxDurationPs) / kPsPerSecond, "s") + " ahead)");
}

}  // namespace sim
