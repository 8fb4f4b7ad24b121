#pragma once
// Chrome/Perfetto trace (JSON "trace event" format, opens in ui.perfetto.dev):
// one process per chip, one thread (track) per engine, one complete event
// ("ph": "X") per op with its simulated start and duration. A trace keeps
// at most kMaxEvents ops and counts the rest (dropped()), so a trace of a
// large pod stays a file a viewer opens (and fits in memory).
#include <cstdint>
#include <string>
#include <vector>

namespace sim {

// A number shown with a slice in the viewer (its "args"); `name` is a
// string literal.
struct TraceArg {
  const char* name;
  double value;
};

class TraceWriter {
 public:
  // About 150 MB of trace.json (Perfetto's UI loads files up to about 1 GB).
  static constexpr std::size_t kMaxEvents = 1000000;
  explicit TraceWriter(std::size_t max_events = kMaxEvents) : max_events_(max_events) {}

  // Names a track once; `pid` groups tracks (a chip), `tid` is the track.
  void name_process(std::uint32_t pid, const std::string& name);
  void name_track(std::uint32_t pid, std::uint32_t tid, const std::string& name);
  void op(std::uint32_t pid, std::uint32_t tid, const std::string& name, std::uint64_t start_ps, std::uint64_t end_ps,
          const std::string& category = "op", std::vector<TraceArg> args = {});
  std::string json() const;  // {"traceEvents": [...], "displayTimeUnit": "ns"}
  std::size_t ops() const { return events_.size(); }
  std::size_t dropped() const { return dropped_; }  // ops past the bound, not recorded

 private:
  struct Event {
    std::uint32_t pid, tid;
    std::string name, category;
    std::uint64_t start_ps, end_ps;
    std::vector<TraceArg> args;
  };
  struct Name {
    std::uint32_t pid, tid;
    bool process;
    std::string name;
  };
  std::vector<Event> events_;
  std::vector<Name> names_;
  std::size_t max_events_, dropped_ = 0;
};

}  // namespace sim
