#include "workloads/cluster/fabric.h"

namespace workloads::cluster {

std::vector<std::uint32_t> Fabric::route(std::size_t from, std::size_t to) const {
  if (from == to) return {};
  std::vector<std::uint32_t> r{up[from], down[to]};
  if (has_core) r.push_back(core);
  return r;
}

Fabric make_fabric(const DataCenter& dc, const hw::ChipConfig& chip) {
  Fabric f;
  for (const PodOfSlices& pod : dc.pods) {
    double bw = 0;
    if (pod.uplink_bandwidth) {
      bw = *pod.uplink_bandwidth;
    } else {
      double slice_chips = 1;
      for (const auto d : pod.slice) slice_chips *= d;
      const double hosts = double(pod.slices.size()) * slice_chips / double(chip.host.chips);
      bw = hosts * chip.host.nic_bandwidth / pod.oversubscription;
    }
    f.up.push_back(static_cast<std::uint32_t>(f.links.size()));
    f.links.push_back({pod.name + ".up", bw});
    f.down.push_back(static_cast<std::uint32_t>(f.links.size()));
    f.links.push_back({pod.name + ".down", bw});
  }
  if (dc.core_bandwidth) {
    f.has_core = true;
    f.core = static_cast<std::uint32_t>(f.links.size());
    f.links.push_back({"core", *dc.core_bandwidth});
  }
  return f;
}

}  // namespace workloads::cluster
