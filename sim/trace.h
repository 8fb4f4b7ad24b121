#pragma once
// Chrome/Perfetto trace (JSON "trace event" format, opens in ui.perfetto.dev):
// one process per chip, one thread (track) per engine, one complete event
// ("ph": "X") per op with its simulated start and duration.
#include <cstdint>
#include <string>
#include <vector>

namespace sim {

class TraceWriter {
 public:
  // Names a track once; `pid` groups tracks (a chip), `tid` is the track.
  void name_process(std::uint32_t pid, const std::string& name);
  void name_track(std::uint32_t pid, std::uint32_t tid, const std::string& name);
  void op(std::uint32_t pid, std::uint32_t tid, const std::string& name, std::uint64_t start_ps, std::uint64_t end_ps,
          const std::string& category = "op");
  std::string json() const;  // {"traceEvents": [...], "displayTimeUnit": "ns"}
  std::size_t ops() const { return events_.size(); }

 private:
  struct Event {
    std::uint32_t pid, tid;
    std::string name, category;
    std::uint64_t start_ps, end_ps;
  };
  struct Name {
    std::uint32_t pid, tid;
    bool process;
    std::string name;
  };
  std::vector<Event> events_;
  std::vector<Name> names_;
};

}  // namespace sim
