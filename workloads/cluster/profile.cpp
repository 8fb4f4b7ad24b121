#include "workloads/cluster/profile.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

namespace workloads::cluster {

JobProfile profile_of(const nlohmann::json& report, std::uint32_t connections) {
  JobProfile out;
  out.step = to_ps(report.at("result").at("step_time_s").get<double>());
  struct Span {
    Ps start = 0, end = 0;
    std::map<std::pair<int, int>, std::uint64_t> bytes;
  };
  std::vector<Span> spans;
  if (report.contains("collectives"))
    for (const auto& c : report.at("collectives")) {
      if (!c.contains("dcn_traffic")) continue;
      Span s;
      s.start = to_ps(c.value("start_s", 0.0));
      s.end = s.start + to_ps(c.at("time_s").get<double>());
      for (const auto& t : c.at("dcn_traffic"))
        s.bytes[{t.at("from_slice").get<int>(), t.at("to_slice").get<int>()}] += t.at("bytes").get<std::uint64_t>();
      spans.push_back(std::move(s));
    }
  std::stable_sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
  // Collectives across slices that overlap share one phase: their bytes
  // move over the same span.
  std::vector<Span> merged;
  for (auto& s : spans) {
    if (!merged.empty() && s.start < merged.back().end) {
      Span& m = merged.back();
      m.end = std::max(m.end, s.end);
      for (const auto& [pair, b] : s.bytes) m.bytes[pair] += b;
    } else {
      merged.push_back(std::move(s));
    }
  }
  for (const Span& m : merged) {
    ProfilePhase p;
    p.start = m.start;
    p.time = std::max<Ps>(1, m.end - m.start);
    for (const auto& [pair, b] : m.bytes)
      if (b > 0) p.flows.push_back({pair.first, pair.second, b, connections});
    if (!p.flows.empty()) out.phases.push_back(std::move(p));
  }
  // A step shorter than its last collective's end (rounding): the step holds it.
  if (!out.phases.empty()) out.step = std::max(out.step, out.phases.back().start + out.phases.back().time);
  return out;
}

}  // namespace workloads::cluster
