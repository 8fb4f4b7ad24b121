#include "sim/host.h"

#include <unistd.h>

#include <fstream>
#include <string>

namespace sim {

std::uint64_t peak_rss_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;  // reported in kB
  }
  return 0;
}

std::uint64_t current_rss_bytes() {
  // statm's second field: resident pages (cheaper than parsing status).
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size = 0, resident = 0;
  const long page = sysconf(_SC_PAGESIZE);
  if (!(statm >> size >> resident) || page <= 0) return 0;
  return resident * std::uint64_t(page);
}

std::uint64_t machine_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? std::uint64_t(pages) * std::uint64_t(page) : 0;
}

}  // namespace sim
