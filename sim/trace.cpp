#include "sim/trace.h"

#include <nlohmann/json.hpp>
#include <utility>

namespace sim {

void TraceWriter::name_process(std::uint32_t pid, const std::string& name) { names_.push_back({pid, 0, true, name}); }

void TraceWriter::name_track(std::uint32_t pid, std::uint32_t tid, const std::string& name) {
  names_.push_back({pid, tid, false, name});
}

void TraceWriter::op(std::uint32_t pid, std::uint32_t tid, const std::string& name, std::uint64_t start_ps,
                     std::uint64_t end_ps, const std::string& category, std::vector<TraceArg> args) {
  if (events_.size() >= max_events_) {
    ++dropped_;
    return;
  }
  events_.push_back({pid, tid, name, category, start_ps, end_ps, std::move(args)});
}

std::string TraceWriter::json() const {
  // Written event by event (as one nlohmann::json value it would take about
  // 1 KB of host memory per event); the same text as dumping that value.
  std::string out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
  bool first = true;
  const auto push = [&](const nlohmann::json& e) {
    if (!first) out += ',';
    first = false;
    out += e.dump();
  };
  for (const auto& n : names_) {
    nlohmann::json e{{"ph", "M"},
                     {"pid", n.pid},
                     {"name", n.process ? "process_name" : "thread_name"},
                     {"args", {{"name", n.name}}}};
    if (!n.process) e["tid"] = n.tid;
    push(e);
  }
  for (const auto& n : names_)
    if (!n.process)
      push({{"ph", "M"},
            {"pid", n.pid},
            {"tid", n.tid},
            {"name", "thread_sort_index"},
            {"args", {{"sort_index", n.tid}}}});
  // Trace timestamps are microseconds; keep picosecond resolution in the fraction.
  for (const auto& e : events_) {
    nlohmann::json x{{"ph", "X"},
                     {"pid", e.pid},
                     {"tid", e.tid},
                     {"name", e.name},
                     {"cat", e.category},
                     {"ts", double(e.start_ps) * 1e-6},
                     {"dur", double(e.end_ps - e.start_ps) * 1e-6}};
    for (const TraceArg& a : e.args) x["args"][a.name] = a.value;
    push(x);
  }
  return out + "]}\n";
}

}  // namespace sim
