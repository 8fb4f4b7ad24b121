#include "sim/params.h"

namespace sim {

std::string Range::str() const {
  std::ostringstream s;
  s.precision(12);
  bool has_lo = std::isfinite(lo), has_hi = std::isfinite(hi);
  if (has_lo && has_hi) {
    s << "between " << lo << " and " << hi;
  } else if (has_lo) {
    s << (lo_open ? "> " : ">= ") << lo;
  } else if (has_hi) {
    s << "<= " << hi;
  }
  return s.str();
}

}  // namespace sim
