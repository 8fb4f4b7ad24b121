#pragma once
// Chrome/Perfetto trace (JSON "trace event" format, opens in ui.perfetto.dev):
// one process per chip, one thread (track) per engine, one complete event
// ("ph": "X") per op with its simulated start and duration. Ops that overlap
// on one track are written on sub-tracks ("mxu0 #1", ...) so that every
// written track's slices are disjoint, which Perfetto's nesting needs. A trace keeps
// at most kMaxEvents ops and counts the rest (dropped()), so a trace of a
// large pod stays a file a viewer opens (and fits in memory).
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace sim {

// A number shown with a slice in the viewer (its "args"); `name` is a
// string literal.
struct TraceArg {
  const char* name;
  double value;
};

// Which chips a trace writes (tpusim run --trace, --trace-chips): `chips`
// empty writes the simulated chips (each a representative, standing for its
// replicas); else those chips, a replica with its representative's ops.
// Converts from bool so that a caller that only asks for a trace says so.
struct TraceRequest {
  bool on = false;
  std::vector<std::uint32_t> chips;            // ascending, no repeats
  bool json = true;                            // false: the caller writes trace.json from the run's result
  TraceRequest(bool on_ = false) : on(on_) {}  // NOLINT(google-explicit-constructor): `trace = true`
  explicit operator bool() const { return on; }
};

// "0,5,12-15" (chip ids and inclusive ranges) or "all-simulated" (empty
// list); throws std::invalid_argument naming the bad part.
std::vector<std::uint32_t> parse_trace_chips(const std::string& text);

// Throws std::invalid_argument naming the first of `chips` past a pod of
// `pod_chips` chips.
void check_trace_chips(const std::vector<std::uint32_t>& chips, std::size_t pod_chips);

// The chips `request` writes of a pod whose chip c is simulated by
// representative[c]; throws std::invalid_argument for a chip past the pod.
std::vector<std::uint32_t> chips_to_trace(const TraceRequest& request,
                                          const std::vector<std::uint32_t>& representative);

class TraceWriter {
 public:
  // About 150 MB of trace.json (Perfetto's UI loads files up to about 1 GB).
  static constexpr std::size_t kMaxEvents = 1000000;
  // An aggregated trace's bins: the step's span in this many.
  static constexpr std::uint64_t kAggregateBins = 1000;
  explicit TraceWriter(std::size_t max_events = kMaxEvents) : max_events_(max_events) {}

  // The bin to aggregate a trace in (aggregate()), or 0 to write it op by
  // op: a default request (no --trace-chips) of about `events` ops and
  // counter samples, more than kMaxEvents, over `span_ps`, is aggregated in
  // kAggregateBins bins rather than cut off at the bound (the chips past it
  // were left out whole: the last stages of a pipeline).
  static std::uint64_t aggregate_bin_ps(const TraceRequest& request, double events, std::uint64_t span_ps);
  // From now on each track's mergeable ops that start in one bin of
  // `bin_ps` are one slice ("37 mxu ops", args summed, with `ops` and
  // `busy_s`), each counter is its time-weighted mean over each bin (what
  // it integrates to is kept), and flows are left out; trace.json's
  // otherData.tpusim says so.
  void aggregate(std::uint64_t bin_ps);
  std::uint64_t bin_ps() const { return bin_ps_; }

  // Names a track once; `pid` groups tracks (a chip), `tid` is the track.
  void name_process(std::uint32_t pid, const std::string& name);
  void name_track(std::uint32_t pid, std::uint32_t tid, const std::string& name);
  // Returns the op's index for flow(), or kNone when past the bound.
  static constexpr std::size_t kNone = ~std::size_t{0};
  // `mergeable` false keeps the op a slice of its own in an aggregated
  // trace (a pipeline task, which the run page names).
  std::size_t op(std::uint32_t pid, std::uint32_t tid, const std::string& name, std::uint64_t start_ps,
                 std::uint64_t end_ps, const std::string& category = "op", std::vector<TraceArg> args = {},
                 bool mergeable = true);
  // An arrow from op `from` (at its start) to op `to` (at its end), such as
  // a send to its receive; ignored when either is kNone.
  void flow(std::size_t from, std::size_t to);
  // A counter track `name` of process `pid` ("ph": "C"): `value` from
  // `at_ps` until its next sample. Counted against the bound as ops are.
  void counter(std::uint32_t pid, const std::string& name, std::uint64_t at_ps, double value);
  std::string json() const;                         // {"traceEvents": [...], "displayTimeUnit": "ns"}
  std::size_t ops() const;                          // slices and counter samples trace.json holds
  std::size_t dropped() const { return dropped_; }  // ops past the bound, not recorded

  // The written tid of lane `lane` of track `tid`: lane 0 keeps the track's
  // own id, so a trace without overlaps is written as before.
  static std::uint32_t lane_tid(std::uint32_t tid, std::uint32_t lane) { return tid + lane * kLaneStride; }
  static constexpr std::uint32_t kLaneStride = 1000000, kMaxLanes = 4096;

 private:
  struct Event {
    std::uint32_t pid, tid;
    std::string name, category;
    std::uint64_t start_ps, end_ps;
    std::vector<TraceArg> args;
    std::uint64_t ops = 1, busy_ps = 0;  // aggregated: the ops merged and their durations summed
  };
  struct Name {
    std::uint32_t pid, tid;
    bool process;
    std::string name;
  };
  struct Counter {
    std::uint32_t pid;
    std::string name;
    std::uint64_t at_ps;
    double value;
  };
  // An aggregated counter: its last sample, and the bin it is in with the
  // integral of the counter over the bin so far.
  struct OpenCounter {
    std::uint64_t last_ps = 0, bin = 0;
    double value = 0, integral = 0;  // value x ps
  };
  void close_bin(std::uint32_t pid, const std::string& name, OpenCounter& c);
  // What the bound counts: recorded events, an open counter as one.
  std::size_t recorded() const { return events_.size() + counters_.size() + open_counters_.size(); }
  std::vector<std::uint32_t> lanes() const;  // per event: its lane on its track
  std::vector<Event> events_;
  std::vector<std::pair<std::size_t, std::size_t>> flows_;
  std::vector<Counter> counters_;
  std::vector<Name> names_;
  std::size_t max_events_, dropped_ = 0;
  std::uint64_t bin_ps_ = 0;
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint64_t>, std::size_t> bins_;  // (pid, tid, bin) -> event
  std::map<std::pair<std::uint32_t, std::string>, OpenCounter> open_counters_;           // (pid, name)
};

}  // namespace sim
