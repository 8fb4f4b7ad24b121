#pragma once
// Builds the pod's network module for the configured model.
#include <memory>
#include <string>

#include "interconnect/network.h"
#include "interconnect/pod_config.h"

namespace interconnect {

std::unique_ptr<Network> make_network(const std::string& name, const Topology& topology, const PodNetworkConfig& pod);

}  // namespace interconnect
