#include "sim/trace.h"

#include <nlohmann/json.hpp>

namespace sim {

void TraceWriter::name_process(std::uint32_t pid, const std::string& name) { names_.push_back({pid, 0, true, name}); }

void TraceWriter::name_track(std::uint32_t pid, std::uint32_t tid, const std::string& name) {
  names_.push_back({pid, tid, false, name});
}

void TraceWriter::op(std::uint32_t pid, std::uint32_t tid, const std::string& name, std::uint64_t start_ps,
                     std::uint64_t end_ps, const std::string& category) {
  events_.push_back({pid, tid, name, category, start_ps, end_ps});
}

std::string TraceWriter::json() const {
  nlohmann::json evs = nlohmann::json::array();
  for (const auto& n : names_) {
    nlohmann::json e{{"ph", "M"},
                     {"pid", n.pid},
                     {"name", n.process ? "process_name" : "thread_name"},
                     {"args", {{"name", n.name}}}};
    if (!n.process) e["tid"] = n.tid;
    evs.push_back(e);
  }
  for (const auto& n : names_)
    if (!n.process)
      evs.push_back({{"ph", "M"},
                     {"pid", n.pid},
                     {"tid", n.tid},
                     {"name", "thread_sort_index"},
                     {"args", {{"sort_index", n.tid}}}});
  // Trace timestamps are microseconds; keep picosecond resolution in the fraction.
  for (const auto& e : events_)
    evs.push_back({{"ph", "X"},
                   {"pid", e.pid},
                   {"tid", e.tid},
                   {"name", e.name},
                   {"cat", e.category},
                   {"ts", double(e.start_ps) * 1e-6},
                   {"dur", double(e.end_ps - e.start_ps) * 1e-6}});
  return nlohmann::json{{"traceEvents", evs}, {"displayTimeUnit", "ns"}}.dump() + "\n";
}

}  // namespace sim
