#include "sim/trace.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>
#include <tuple>
#include <utility>

namespace sim {

std::vector<std::uint32_t> parse_trace_chips(const std::string& text) {
  if (text == "all-simulated") return {};
  std::vector<std::uint32_t> chips;
  const auto number = [&](const std::string& part, const std::string& digits) {
    if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos)
      throw std::invalid_argument("--trace-chips: '" + part +
                                  "' is not a chip, a range such as 12-15, or all-simulated");
    return static_cast<std::uint32_t>(std::stoul(digits));
  };
  std::size_t begin = 0;
  for (;;) {
    const std::size_t end = text.find(',', begin);
    const std::string part = text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    const std::size_t dash = part.find('-');
    const std::uint32_t lo = number(part, part.substr(0, dash));
    const std::uint32_t hi = dash == std::string::npos ? lo : number(part, part.substr(dash + 1));
    if (hi < lo) throw std::invalid_argument("--trace-chips: range '" + part + "' runs backwards");
    for (std::uint32_t c = lo; c <= hi; ++c) chips.push_back(c);
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  std::sort(chips.begin(), chips.end());
  chips.erase(std::unique(chips.begin(), chips.end()), chips.end());
  return chips;
}

std::vector<std::uint32_t> chips_to_trace(const TraceRequest& request,
                                          const std::vector<std::uint32_t>& representative) {
  std::vector<std::uint32_t> chips;
  if (request.chips.empty()) {
    for (std::uint32_t c = 0; c < representative.size(); ++c)
      if (representative[c] == c) chips.push_back(c);
    return chips;
  }
  check_trace_chips(request.chips, representative.size());
  return request.chips;
}

void check_trace_chips(const std::vector<std::uint32_t>& chips, std::size_t pod_chips) {
  for (const std::uint32_t c : chips)
    if (c >= pod_chips)
      throw std::invalid_argument("--trace-chips: chip " + std::to_string(c) + " is not in the " +
                                  std::to_string(pod_chips) + "-chip pod");
}

void TraceWriter::name_process(std::uint32_t pid, const std::string& name) { names_.push_back({pid, 0, true, name}); }

void TraceWriter::name_track(std::uint32_t pid, std::uint32_t tid, const std::string& name) {
  names_.push_back({pid, tid, false, name});
}

std::uint64_t TraceWriter::aggregate_bin_ps(const TraceRequest& request, double events, std::uint64_t span_ps) {
  if (!request.chips.empty() || events <= double(kMaxEvents) || span_ps < kAggregateBins) return 0;
  return (span_ps + kAggregateBins - 1) / kAggregateBins;
}

void TraceWriter::aggregate(std::uint64_t bin_ps) { bin_ps_ = bin_ps; }

std::size_t TraceWriter::ops() const {
  std::size_t n = events_.size() + counters_.size();
  for (const auto& [key, c] : open_counters_) n += c.last_ps > c.bin * bin_ps_ ? 2 : 1;  // as json() closes them
  return n;
}

std::size_t TraceWriter::op(std::uint32_t pid, std::uint32_t tid, const std::string& name, std::uint64_t start_ps,
                            std::uint64_t end_ps, const std::string& category, std::vector<TraceArg> args,
                            bool mergeable) {
  if (bin_ps_ > 0 && mergeable) {
    const auto it = bins_.find({pid, tid, start_ps / bin_ps_});
    if (it != bins_.end()) {
      Event& e = events_[it->second];
      e.start_ps = std::min(e.start_ps, start_ps);
      e.end_ps = std::max(e.end_ps, end_ps);
      ++e.ops;
      e.busy_ps += end_ps - start_ps;
      for (const TraceArg& a : args) {
        const auto same = std::find_if(e.args.begin(), e.args.end(),
                                       [&](const TraceArg& b) { return std::string_view(a.name) == b.name; });
        if (same == e.args.end())
          e.args.push_back(a);
        else
          same->value += a.value;
      }
      return it->second;
    }
  }
  if (recorded() >= max_events_) {
    ++dropped_;
    return kNone;
  }
  events_.push_back({pid, tid, name, category, start_ps, end_ps, std::move(args), 1, end_ps - start_ps});
  if (bin_ps_ > 0 && mergeable) bins_[{pid, tid, start_ps / bin_ps_}] = events_.size() - 1;
  return events_.size() - 1;
}

void TraceWriter::flow(std::size_t from, std::size_t to) {
  if (from != kNone && to != kNone && bin_ps_ == 0) flows_.emplace_back(from, to);
}

void TraceWriter::close_bin(std::uint32_t pid, const std::string& name, OpenCounter& c) {
  if (recorded() >= max_events_) {
    ++dropped_;
    return;
  }
  counters_.push_back({pid, name, c.bin * bin_ps_, c.integral / double(bin_ps_)});
}

void TraceWriter::counter(std::uint32_t pid, const std::string& name, std::uint64_t at_ps, double value) {
  if (bin_ps_ == 0) {
    if (recorded() >= max_events_) {
      ++dropped_;
      return;
    }
    counters_.push_back({pid, name, at_ps, value});
    return;
  }
  // The counter held c.value from c.last_ps to at_ps: into the bins it spans.
  const auto [it, fresh] = open_counters_.try_emplace({pid, name}, OpenCounter{at_ps, at_ps / bin_ps_, value, 0.0});
  if (fresh) return;
  OpenCounter& c = it->second;
  at_ps = std::max(at_ps, c.last_ps);  // a sample out of order holds for no time
  const std::uint64_t bin = at_ps / bin_ps_;
  if (bin > c.bin) {
    c.integral += c.value * double((c.bin + 1) * bin_ps_ - c.last_ps);
    close_bin(pid, name, c);
    // Whole bins at the held value: one sample at the first (a counter holds until its next).
    if (bin > c.bin + 1 && recorded() < max_events_) counters_.push_back({pid, name, (c.bin + 1) * bin_ps_, c.value});
    c.bin = bin;
    c.integral = c.value * double(at_ps - bin * bin_ps_);
  } else {
    c.integral += c.value * double(at_ps - c.last_ps);
  }
  c.last_ps = at_ps;
  c.value = value;
}

std::vector<std::uint32_t> TraceWriter::lanes() const {
  // Perfetto draws a track's slices as a stack and needs each to nest in or
  // be disjoint from the others; an engine's ops can overlap (an ICI queue
  // with several messages in flight, a pipeline task spanning another's
  // ops). Greedy interval partitioning: each op, in start order, goes to the
  // first lane of its track free by its start, so a lane's slices are
  // disjoint and the lane count is the track's largest overlap.
  std::vector<std::uint32_t> lane(events_.size(), 0);
  std::vector<std::size_t> order(events_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const Event &x = events_[a], &y = events_[b];
    return std::tie(x.pid, x.tid, x.start_ps) < std::tie(y.pid, y.tid, y.start_ps);
  });
  std::vector<std::uint64_t> free_at;  // per lane of the current track: when its last slice ends
  for (std::size_t k = 0; k < order.size(); ++k) {
    const Event& e = events_[order[k]];
    if (k == 0 || e.pid != events_[order[k - 1]].pid || e.tid != events_[order[k - 1]].tid) free_at.clear();
    std::uint32_t l = 0;
    while (l < free_at.size() && free_at[l] > e.start_ps) ++l;
    if (l == free_at.size()) free_at.push_back(0);
    free_at[l] = e.end_ps;
    lane[order[k]] = l;
  }
  return lane;
}

std::string TraceWriter::json() const {
  // Written event by event (as one nlohmann::json value it would take about
  // 1 KB of host memory per event); the same text as dumping that value.
  std::string out = "{\"displayTimeUnit\":\"ns\",";
  if (bin_ps_ > 0)  // otherData: the trace format's place for what describes the whole trace
    out += "\"otherData\":" +
           nlohmann::json{{"tpusim", "aggregated: each track's ops that start in one bin of " +
                                         std::to_string(double(bin_ps_) * 1e-12) +
                                         " s are one slice (args: ops, busy_s, the rest summed), counters are their "
                                         "mean over each bin, flows are left out; --trace-chips LIST writes those "
                                         "chips op by op"}}
               .dump() +
           ",";
  out += "\"traceEvents\":[";
  bool first = true;
  const auto push = [&](const nlohmann::json& e) {
    if (!first) out += ',';
    first = false;
    out += e.dump();
  };
  const std::vector<std::uint32_t> lane = lanes();
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> lane_count;  // (pid, tid) -> lanes
  for (std::size_t i = 0; i < events_.size(); ++i) {
    std::uint32_t& n = lane_count[{events_[i].pid, events_[i].tid}];
    n = std::max(n, lane[i] + 1);
  }
  for (const auto& n : names_) {
    if (n.process) {
      push({{"ph", "M"}, {"pid", n.pid}, {"name", "process_name"}, {"args", {{"name", n.name}}}});
      continue;
    }
    const auto it = lane_count.find({n.pid, n.tid});
    const std::uint32_t lanes_here = it == lane_count.end() ? 1 : it->second;
    for (std::uint32_t l = 0; l < lanes_here; ++l) {
      const std::uint32_t tid = lane_tid(n.tid, l);
      push({{"ph", "M"},
            {"pid", n.pid},
            {"tid", tid},
            {"name", "thread_name"},
            {"args", {{"name", l == 0 ? n.name : n.name + " #" + std::to_string(l)}}}});
      push({{"ph", "M"},
            {"pid", n.pid},
            {"tid", tid},
            {"name", "thread_sort_index"},
            {"args", {{"sort_index", std::uint64_t(n.tid) * kMaxLanes + l}}}});
    }
  }
  // Trace timestamps are microseconds; keep picosecond resolution in the fraction.
  for (std::size_t i = 0; i < events_.size(); ++i) {
    const Event& e = events_[i];
    nlohmann::json x{{"ph", "X"},
                     {"pid", e.pid},
                     {"tid", lane_tid(e.tid, lane[i])},
                     {"name", e.ops > 1 ? std::to_string(e.ops) + " " + e.category + " ops" : e.name},
                     {"cat", e.category},
                     {"ts", double(e.start_ps) * 1e-6},
                     {"dur", double(e.end_ps - e.start_ps) * 1e-6}};
    for (const TraceArg& a : e.args) x["args"][a.name] = a.value;
    if (e.ops > 1) {
      x["args"]["ops"] = e.ops;
      x["args"]["busy_s"] = double(e.busy_ps) * 1e-12;
    }
    push(x);
  }
  // An aggregated counter's open bin: its mean up to the last sample, then that sample.
  std::vector<Counter> counters = counters_;
  for (const auto& [key, c] : open_counters_) {
    const std::uint64_t bin_start = c.bin * bin_ps_;
    if (c.last_ps > bin_start)
      counters.push_back({key.first, key.second, bin_start, c.integral / double(c.last_ps - bin_start)});
    counters.push_back({key.first, key.second, c.last_ps, c.value});
  }
  for (const Counter& c : counters)
    push({{"ph", "C"},
          {"pid", c.pid},
          {"name", c.name},
          {"ts", double(c.at_ps) * 1e-6},
          {"args", {{"value", c.value}}}});
  // Flow events bind to the slice around them on their track ("bp": "e" on
  // the finish: the enclosing slice, not the next one to start).
  for (std::size_t i = 0; i < flows_.size(); ++i) {
    const Event &from = events_[flows_[i].first], &to = events_[flows_[i].second];
    push({{"ph", "s"},
          {"id", i},
          {"pid", from.pid},
          {"tid", lane_tid(from.tid, lane[flows_[i].first])},
          {"name", "message"},
          {"cat", "flow"},
          {"ts", double(from.start_ps) * 1e-6}});
    push({{"ph", "f"},
          {"bp", "e"},
          {"id", i},
          {"pid", to.pid},
          {"tid", lane_tid(to.tid, lane[flows_[i].second])},
          {"name", "message"},
          {"cat", "flow"},
          {"ts", double(to.end_ps) * 1e-6}});
  }
  return out + "]}\n";
}

}  // namespace sim
