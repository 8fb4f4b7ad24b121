#include "sim/output.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <stdexcept>

namespace sim {

std::string output_path_problem(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status own = fs::symlink_status(path, ec);
  if (ec || !fs::exists(own)) return "";
  auto kind = [](const fs::file_status& st) -> std::string {
    switch (st.type()) {
      case fs::file_type::regular: return "";
      case fs::file_type::directory: return "is a directory";
      case fs::file_type::fifo: return "is a FIFO";
      case fs::file_type::socket: return "is a socket";
      case fs::file_type::character:
      case fs::file_type::block: return "is a device";
      default: return "is not a regular file";
    }
  };
  if (!fs::is_symlink(own)) {
    const std::string k = kind(own);
    return k.empty() ? "" : k + "; tpusim writes only regular files";
  }
  // A link: its target must stay in the link's own folder, and be a regular
  // file or nothing yet.
  const fs::path folder = fs::weakly_canonical(fs::absolute(path, ec).parent_path(), ec);
  const fs::path target = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec || target.parent_path() != folder)
    return "is a symbolic link to a file outside its folder; tpusim does not write through it";
  const fs::file_status to = fs::status(target, ec);
  if (ec || !fs::exists(to)) return "";
  const std::string k = kind(to);
  return k.empty() ? "" : "is a symbolic link to a file that " + k + "; tpusim writes only regular files";
}

void check_output_path(const std::string& path) {
  const std::string problem = output_path_problem(path);
  if (!problem.empty()) throw std::runtime_error(path + ": " + problem);
}

void write_new_file(const std::string& tmp, const std::string& content) {
  ::unlink(tmp.c_str());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(errno));
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(err));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) {
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(errno));
  }
}

void write_file_atomic(const std::string& path, const std::string& content) {
  namespace fs = std::filesystem;
  check_output_path(path);
  fs::path p(path);
  if (p.has_parent_path()) fs::create_directories(p.parent_path());
  const fs::path tmp = temp_path(path);
  write_new_file(tmp.string(), content);
  std::error_code ec;
  fs::rename(tmp, p, ec);
  if (ec) {
    fs::remove(tmp, ec);
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
  const std::string tmp = temp_path((std::filesystem::path(dir_) / name).string());
  check_output_path((std::filesystem::path(dir_) / name).string());
  staged_.emplace_back(name, tmp);
  write_new_file(tmp, content);
}

std::string OutputSet::stage(const std::string& name, const std::string& ext) {
  const std::string tmp = temp_path((std::filesystem::path(dir_) / name).string(), ext);
  check_output_path((std::filesystem::path(dir_) / name).string());
  staged_.emplace_back(name, tmp);
  write_new_file(tmp, "");
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
  // Values up to kAligned characters (a figure and its remark) are right-
  // aligned in one column; a longer one (a list of chips that made others
  // wait) starts where that column starts, so one long line does not push
  // every figure of the table hundreds of characters to the right.
  constexpr std::size_t kAligned = 48;
  std::size_t w0 = 0, w1 = 0;
  for (const auto& r : rows_)
    if (r.size() == 3) {
      w0 = std::max(w0, r[0].size());
      if (r[1].size() <= kAligned) w1 = std::max(w1, r[1].size());
    }
  std::ostringstream s;
  s << title_ << "\n";
  for (const auto& r : rows_) {
    if (r.size() == 1) {
      s << "  " << r[0] << "\n";
      continue;
    }
    const std::size_t pad = r[1].size() < w1 ? w1 - r[1].size() : 0;
    s << "    " << r[0] << std::string(w0 - r[0].size() + 2, ' ') << std::string(pad, ' ') << r[1];
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
