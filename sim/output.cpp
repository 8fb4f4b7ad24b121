#include "sim/output.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace sim {

void write_file_atomic(const std::string& path, const std::string& content) {
  namespace fs = std::filesystem;
  fs::path p(path);
  if (p.has_parent_path()) fs::create_directories(p.parent_path());
  fs::path tmp = p;
  tmp += ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
    out << content;
    out.flush();
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
  }
  std::error_code ec;
  fs::rename(tmp, p, ec);
  if (ec) {
    fs::remove(tmp);
    throw std::runtime_error("cannot rename " + tmp.string() + " to " + path + ": " + ec.message());
  }
}

void Table::row(const std::string& name, const std::string& value, const std::string& unit) {
  rows_.push_back({name, value, unit});
}

void Table::section(const std::string& heading) { rows_.push_back({heading}); }

std::string Table::str() const {
  std::size_t w0 = 0, w1 = 0;
  for (const auto& r : rows_)
    if (r.size() == 3) {
      w0 = std::max(w0, r[0].size());
      w1 = std::max(w1, r[1].size());
    }
  std::ostringstream s;
  s << title_ << "\n";
  for (const auto& r : rows_) {
    if (r.size() == 1) {
      s << "  " << r[0] << "\n";
      continue;
    }
    s << "    " << r[0] << std::string(w0 - r[0].size() + 2, ' ') << std::string(w1 - r[1].size(), ' ') << r[1];
    if (!r[2].empty()) s << " " << r[2];
    s << "\n";
  }
  return s.str();
}

std::string si(double value, const std::string& unit) {
  if (value == 0.0 || !std::isfinite(value)) return fixed(value, 0) + " " + unit;
  static const char* prefixes[] = {"p", "n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
  int exp3 = static_cast<int>(std::floor(std::log10(std::fabs(value)) / 3.0));
  exp3 = std::max(-4, std::min(6, exp3));
  double scaled = value / std::pow(10.0, 3 * exp3);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g %s%s", scaled, prefixes[exp3 + 4], unit.c_str());
  return buf;
}

std::string g3(double value, const std::string& unit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g %s", value, unit.c_str());
  return buf;
}

std::string fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

}  // namespace sim
