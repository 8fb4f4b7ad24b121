#include "interconnect/network_factory.h"

#include "interconnect/ici_network.h"
#include "interconnect/packet_network.h"

namespace interconnect {

std::unique_ptr<Network> make_network(const std::string& name, const Topology& topology, const PodNetworkConfig& pod) {
  if (pod.model == NetworkModel::packet) {
    return std::make_unique<PacketNetwork>(name.c_str(), topology, pod.link);
  }
  return std::make_unique<IciNetwork>(name.c_str(), topology, pod.link);
}

}  // namespace interconnect
