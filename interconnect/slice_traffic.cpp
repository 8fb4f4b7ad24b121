#include "interconnect/slice_traffic.h"

#include <map>
#include <utility>

namespace interconnect {

namespace {
// The sends of one chip's schedule whose peer sits in another slice.
std::vector<Transfer> crossing_sends(const ChipSchedule& chip, int slice, const Topology& topology) {
  std::vector<Transfer> out;
  chip.for_each_step([&](const Step& step) {
    for (const Transfer& t : step.sends)
      if (topology.slice_of(t.peer) != slice) out.push_back(t);
  });
  return out;
}
}  // namespace

std::vector<SliceTraffic> slice_traffic(const CollectivePlan& plan, const Topology& topology) {
  const Translations translations(topology, plan.images_along);
  std::map<std::pair<int, int>, std::uint64_t> bytes;
  if (topology.slices() > 1) {
    const auto element_bytes = static_cast<std::uint64_t>(plan.element_bytes);
    // Per orbit chip, its crossing sends, worked out once: a translation
    // moves a chip and its peer together, so an image's send crosses too.
    std::map<int, std::vector<Transfer>> of_rep;
    for (std::size_t c = 0; c < plan.chips.size(); ++c) {
      const int chip = static_cast<int>(c);
      const int from = topology.slice_of(chip);
      if (translations.none()) {
        for (const Transfer& t : crossing_sends(plan.chips[c], from, topology))
          bytes[{from, topology.slice_of(t.peer)}] += t.count * element_bytes;
        continue;
      }
      const int rep = translations.rep(chip);
      auto [it, fresh] = of_rep.emplace(rep, std::vector<Transfer>{});
      if (fresh) it->second = crossing_sends(plan.chips[rep], topology.slice_of(rep), topology);
      const Translations::Move mv = translations.move(rep, chip);
      for (const Transfer& t : it->second)
        bytes[{from, topology.slice_of(translations.moved(t.peer, mv))}] += t.count * element_bytes;
    }
  }
  std::vector<SliceTraffic> out;
  for (const auto& [pair, b] : bytes) out.push_back({pair.first, pair.second, b});
  return out;
}

}  // namespace interconnect
