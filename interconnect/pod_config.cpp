#include "interconnect/pod_config.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "interconnect/mesh.h"
#include "sim/error.h"
#include "sim/params.h"

namespace interconnect {

namespace {

void require_positive(double v, const std::string& key, const std::string& unit) {
  if (!(v > 0.0) || !std::isfinite(v)) {
    sim::reject(key, "must be a positive number of " + unit + ", got " + std::to_string(v));
  }
}
}  // namespace

const sim::EnumNames<Switching>& switching_names() {
  static const sim::EnumNames<Switching> names(
      "switching", {{Switching::cut_through, "cut_through", "a packet's head moves on after the hop latency"},
                    {Switching::store_and_forward, "store_and_forward", "every hop waits for the whole packet"}});
  return names;
}

const sim::EnumNames<NetworkModel>& network_model_names() {
  static const sim::EnumNames<NetworkModel> names(
      "network model", {{NetworkModel::fluid, "fluid", "max-min fair flows, the fast model"},
                        {NetworkModel::packet, "packet", "every packet hop by hop, the slow reference"}});
  return names;
}

Switching parse_switching(const std::string& name, const std::string& key_path) {
  return switching_names().parse(name, key_path);
}

NetworkModel parse_network_model(const std::string& name, const std::string& key_path) {
  return network_model_names().parse(name, key_path);
}

const char* to_string(Switching s) { return switching_names().name(s); }

const char* to_string(NetworkModel m) { return network_model_names().name(m); }

void PodNetworkConfig::validate() const {
  validate_topology(topology, shape, wraparound, "pod");
  long long product = 1;
  for (int s : shape) product *= s;
  if (chips != 0 && chips != product) {
    std::string dims;
    for (std::size_t i = 0; i < shape.size(); ++i) dims += (i ? "x" : "") + std::to_string(shape[i]);
    sim::reject("pod.shape",
                dims + " holds " + std::to_string(product) + " chips, but the pod has " + std::to_string(chips));
  }
  require_positive(link.bandwidth, "pod.link_bandwidth", "bytes/s");
  if (!(link.latency >= 0.0) || !std::isfinite(link.latency)) {
    sim::reject("pod.link_latency", "must be >= 0 seconds, got " + std::to_string(link.latency));
  }
  if (link.packet_bytes == 0) sim::reject("pod.packet_bytes", "must be >= 1 byte");
  require_positive(reduction.vector_bytes_per_s, "reduction.vector_bytes_per_s", "bytes/s");
  require_positive(reduction.hbm_bytes_per_s, "reduction.hbm_bytes_per_s", "bytes/s");
  if (!(reduction.hbm_bytes_per_reduced_byte >= 0.0)) {
    sim::reject("reduction.hbm_bytes_per_reduced_byte", "must be >= 0");
  }
  if (slices < 1) sim::reject("pod.slices", "must be >= 1, got " + std::to_string(slices));
  if (chips_per_host < 1) sim::reject("chip.host.chips", "must be >= 1, got " + std::to_string(chips_per_host));
  require_positive(link.dcn.host_bandwidth, "pod.dcn.host_bandwidth", "bytes/s");
  require_positive(link.dcn.nic_bandwidth, "pod.dcn.nic_bandwidth", "bytes/s");
  if (!(link.dcn.latency >= 0.0) || !std::isfinite(link.dcn.latency)) {
    sim::reject("pod.dcn.latency", "must be >= 0 seconds, got " + std::to_string(link.dcn.latency));
  }
  if (!(link.dcn.oversubscription >= 1.0) || !std::isfinite(link.dcn.oversubscription)) {
    sim::reject("pod.dcn.oversubscription", "must be >= 1, got " + std::to_string(link.dcn.oversubscription));
  }
  long long across = 1;
  std::string names;
  for (const MeshAxis& m : mesh) {
    if (!m.dcn) continue;
    across *= m.size;
    names += (names.empty() ? "" : " x ") + m.name + " (" + std::to_string(m.size) + ")";
  }
  if (names.empty() && !mesh.empty() && slices > 1) {
    sim::reject("pod.dcn_axes", "the " + std::to_string(slices) +
                                    " slices need the mesh axes placed across them, e.g. dcn_axes: [data]");
  }
  if (!names.empty() && across != slices) {
    sim::reject("pod.dcn_axes", names +
                                    (slices % across == 0 ? " spans " + std::to_string(across) + " slices, not all "
                                                          : " does not divide ") +
                                    std::to_string(slices) + " slices");
  }
  if (devices_per_chip > 1) {
    require_positive(link.on_die_bandwidth, "chip.hbm.bandwidth", "bytes/s");
    if (model == NetworkModel::packet)
      sim::reject("pod.network_model", "the packet model has no on-die path between a chip's devices; use fluid");
  }
  if (slices > 1 && model == NetworkModel::packet) {
    sim::reject("pod.network_model", "the packet model has no DCN; use fluid with several slices");
  }
  const Topology topo = make_topology();
  if (links_per_chip > 0) {
    // Each neighbour direction is one port (a 2-chip axis that wraps joins
    // the pair twice, as the network models it).
    int most = 0;
    for (int c = 0; c < topo.chips(); ++c) {
      int used = 0;
      for (int a = 0; a < topo.ici_axes(); ++a)
        for (int dir : {+1, -1}) used += !topo.is_core_axis(a) && topo.neighbor(c, a, dir) >= 0 ? 1 : 0;
      most = std::max(most, used);
    }
    if (most > links_per_chip)
      sim::reject("pod.shape", "this " + std::string(to_string(topology)) + " joins a chip to " + std::to_string(most) +
                                   " neighbour links, but the chip has " + std::to_string(links_per_chip) +
                                   " ICI ports (ici.links_per_chip)");
  }
  Mesh(topo, mesh);  // checks that the mesh axes map onto the shape and the slices
}

Topology PodNetworkConfig::make_topology() const {
  SliceLayout layout;
  layout.chips_per_host = chips_per_host;
  layout.devices_per_chip = devices_per_chip;
  for (const MeshAxis& m : mesh) {
    if (m.dcn) layout.dcn_shape.push_back(m.size);
  }
  if (layout.dcn_shape.empty() && slices > 1) layout.dcn_shape.push_back(slices);
  return Topology(topology, shape, wraparound, layout);
}

}  // namespace interconnect
