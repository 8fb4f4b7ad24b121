#include "interconnect/slice_traffic.h"

#include <map>
#include <utility>

namespace interconnect {

std::vector<SliceTraffic> slice_traffic(const CollectivePlan& plan, const Topology& topology) {
  std::map<std::pair<int, int>, std::uint64_t> bytes;
  if (topology.slices() > 1) {
    Step step;
    for (std::size_t c = 0; c < plan.chips.size(); ++c) {
      const int from = topology.slice_of(static_cast<int>(c));
      for (const Stream& stream : plan.chips[c].streams)
        for (const Phase& phase : stream.phases)
          for (const auto& pass : phase.passes)
            for (int k = 0; k < pass->steps(); ++k) {
              step.clear();
              pass->step(k, step);
              for (const Transfer& t : step.sends) {
                const int to = topology.slice_of(t.peer);
                if (to != from) bytes[{from, to}] += t.count * static_cast<std::uint64_t>(plan.element_bytes);
              }
            }
    }
  }
  std::vector<SliceTraffic> out;
  for (const auto& [pair, b] : bytes) out.push_back({pair.first, pair.second, b});
  return out;
}

}  // namespace interconnect
