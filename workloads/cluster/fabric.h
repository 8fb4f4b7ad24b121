#pragma once
// The data center's shared links (docs/cluster.md): each pod's uplink into
// the fabric's core, one link each way, and the core when it has a
// capacity; and the route between two pods' slices over them. Links inside
// a slice's share of the fabric are the job's own and were in its run alone.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "hw/chip_config.h"
#include "workloads/cluster/spec.h"
#include "workloads/cluster/timeline.h"

namespace workloads::cluster {

struct Fabric {
  std::vector<FabricLink> links;
  std::vector<std::uint32_t> up, down;  // per pod
  bool has_core = false;
  std::uint32_t core = 0;
  // The shared links a byte from a slice of pod `from` to a slice of pod
  // `to` crosses: none within a pod; else from's up, to's down and the core.
  std::vector<std::uint32_t> route(std::size_t from, std::size_t to) const;
};

// A pod's uplink is uplink_bandwidth, else its hosts' NICs (slices x slice
// chips / chip.host.chips hosts x chip.host.nic_bandwidth) over its
// oversubscription.
Fabric make_fabric(const DataCenter& dc, const hw::ChipConfig& chip);

}  // namespace workloads::cluster
