#include "sim/params.h"

namespace sim {

std::string Range::str() const {
  std::ostringstream s;
  s.precision(15);
  bool has_lo = std::isfinite(lo), has_hi = std::isfinite(hi);
  if (has_lo && has_hi && lo_open) {
    s << "> " << lo << " and <= " << hi;
  } else if (has_lo && has_hi) {
    s << "between " << lo << " and " << hi;
  } else if (has_lo) {
    s << (lo_open ? "> " : ">= ") << lo;
  } else if (has_hi) {
    s << "<= " << hi;
  }
  return s.str();
}

namespace {

[[noreturn]] void out_of_range(const YamlNode& n, const Range& range, const std::string& unit) {
  std::ostringstream m;
  m << "value " << n.scalar() << " is out of range: expected " << range.str();
  if (!unit.empty()) m << " " << unit;
  n.fail(m.str());
}

}  // namespace

double read_real(const YamlNode& n, const Range& range, const std::string& unit) {
  const double v = n.as_double();
  if (!range.contains(v)) out_of_range(n, range, unit);
  return v;
}

std::int64_t read_integer(const YamlNode& n, const Range& range, const std::string& unit) {
  const std::int64_t v = n.as_int();
  if (!range.contains(static_cast<double>(v))) out_of_range(n, range, unit);
  return v;
}

Item<double> real_item(const std::string& unit, Range range) {
  return {"number", unit, range.str(), [unit, range](const YamlNode& n) { return read_real(n, range, unit); }};
}

Item<bool> flag_item() {
  return {"bool", "", "", [](const YamlNode& n) { return n.as_bool(); }};
}

Item<std::string> text_item() {
  return {"string", "", "", [](const YamlNode& n) { return n.as_string(); }};
}

}  // namespace sim
