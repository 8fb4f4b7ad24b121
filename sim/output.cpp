#include "sim/output.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
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
  const fs::path tmp = temp_path(path);
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

std::string temp_path(const std::string& path, const std::string& ext) {
  return path + ".tmp." + std::to_string(::getpid()) + ext;
}

std::size_t remove_stale_temps(const std::string& dir) {
  namespace fs = std::filesystem;
  std::size_t removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const std::size_t at = name.find(".tmp.");
    if (at == std::string::npos || !it->is_regular_file(ec)) continue;
    std::size_t digits = at + 5;
    while (digits < name.size() && std::isdigit(static_cast<unsigned char>(name[digits]))) ++digits;
    if (digits == at + 5 || digits - at - 5 > 9) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name.substr(at + 5, digits - at - 5)));
    // Its writer is gone (kill(2) finds no such process): no one finishes it.
    if (::kill(pid, 0) == 0 || errno != ESRCH) continue;
    std::error_code gone;
    if (fs::remove(it->path(), gone)) ++removed;
  }
  return removed;
}

OutputSet::OutputSet(std::string dir, std::vector<std::string> names)
    : dir_(std::move(dir)), names_(std::move(names)) {}

OutputSet::~OutputSet() {
  std::error_code ec;
  for (const auto& [name, tmp] : staged_) std::filesystem::remove(tmp, ec);
}

void OutputSet::write(const std::string& name, const std::string& content) {
  const std::string tmp = stage(name);
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  out << content;
  out.flush();
  if (!out) throw std::runtime_error("cannot write " + tmp);
}

std::string OutputSet::stage(const std::string& name, const std::string& ext) {
  const std::string tmp = temp_path((std::filesystem::path(dir_) / name).string(), ext);
  staged_.emplace_back(name, tmp);
  return tmp;
}

void OutputSet::commit() {
  namespace fs = std::filesystem;
  // The report last: a folder whose report.json is new holds this run's set.
  std::stable_partition(staged_.begin(), staged_.end(), [](const auto& f) { return f.first != "report.json"; });
  std::error_code ec;
  for (const auto& name : names_) {
    const bool produced = std::any_of(staged_.begin(), staged_.end(), [&](const auto& f) { return f.first == name; });
    if (!produced) fs::remove(fs::path(dir_) / name, ec);
  }
  for (const auto& [name, tmp] : staged_) {
    fs::rename(tmp, fs::path(dir_) / name, ec);
    if (ec) throw std::runtime_error("cannot rename " + tmp + " to " + name + ": " + ec.message());
  }
  staged_.clear();
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
