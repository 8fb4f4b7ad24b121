#include "interconnect/pod_config.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <utility>

#include "interconnect/mesh.h"
#include "sim/error.h"
#include "sim/output.h"
#include "sim/params.h"
#include "sim/text.h"

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

const sim::ParamTable<LinkFault>& link_fault_params() {
  static const sim::ParamTable<LinkFault> t = [] {
    sim::ParamTable<LinkFault> p("links", "an ICI link slower than the rest, or failed");
    const sim::ListSize coords{1, 3, false};
    p.list("from", &LinkFault::from, sim::integer_item<int>("chips", sim::between(0, 65535)), coords, nullptr,
           "one end: the chip's coordinates, one per axis of the pod's shape (x first)")
        .list("to", &LinkFault::to, sim::integer_item<int>("chips", sim::between(0, 65535)), coords, nullptr,
              "the other end: a neighbour of `from` (one step along one axis, or across a wraparound)")
        .real("bandwidth", &LinkFault::bandwidth, "", "1, or 0 with failed: true", sim::between(0, 1),
              "share of the link's nominal bandwidth it keeps; 0: failed")
        .flag("failed", &LinkFault::failed, false, "the link carries nothing: routes take a detour round it")
        .flag("one_way", &LinkFault::one_way, false, "only the direction from -> to (else both directions)");
    return p;
  }();
  return t;
}

namespace {
std::string coords_text(const std::vector<int>& c) {
  std::string s = "(";
  for (std::size_t i = 0; i < c.size(); ++i) s += (i ? "," : "") + std::to_string(c[i]);
  return s + ")";
}
}  // namespace

std::optional<LinkFaultProblem> find_link_fault_problem(const std::vector<int>& shape,
                                                        const std::vector<bool>& wraparound,
                                                        const std::vector<LinkFault>& links) {
  const std::string dims = sim::shape_text(shape);
  const auto wraps = [&](std::size_t a) { return wraparound.empty() ? shape[a] >= 3 : bool(wraparound[a]); };
  const auto chip_index = [&](const std::vector<int>& c) {
    long long id = 0, stride = 1;
    for (std::size_t a = 0; a < c.size(); ++a) {
      id += c[a] * stride;
      stride *= shape[a];
    }
    return id;
  };
  std::set<std::pair<long long, long long>> directions;
  for (std::size_t i = 0; i < links.size(); ++i) {
    const LinkFault& f = links[i];
    const auto problem = [&](const char* field, std::string message) {
      return LinkFaultProblem{i, field, std::move(message)};
    };
    for (const char* field : {"from", "to"}) {
      const std::vector<int>& c = std::string(field) == "from" ? f.from : f.to;
      if (c.size() != shape.size())
        return problem(field, "expected " + std::to_string(shape.size()) + " coordinates of a chip of the " + dims +
                                  " pod, got " + std::to_string(c.size()));
      for (std::size_t a = 0; a < c.size(); ++a)
        if (c[a] >= shape[a])
          return problem(field, "chip " + coords_text(c) + " is outside the pod: it is " + dims + ", so " +
                                    axis_name(static_cast<int>(a)) + " runs from 0 to " + std::to_string(shape[a] - 1));
    }
    std::vector<std::size_t> differ;
    for (std::size_t a = 0; a < shape.size(); ++a)
      if (f.from[a] != f.to[a]) differ.push_back(a);
    const std::string pair = "chips " + coords_text(f.from) + " and " + coords_text(f.to);
    if (differ.empty()) return problem("to", "from and to are the same chip " + coords_text(f.from));
    if (differ.size() > 1) {
      std::string axes;
      for (std::size_t k = 0; k < differ.size(); ++k)
        axes += std::string(k ? " and " : "") + axis_name(static_cast<int>(differ[k]));
      return problem("to", pair + " are not neighbours: they differ along " + axes +
                               "; a link joins chips one step apart along one axis");
    }
    const std::size_t a = differ.front();
    const int apart = std::abs(f.from[a] - f.to[a]);
    if (apart != 1 && !(wraps(a) && apart == shape[a] - 1))
      return problem("to", pair + " are not neighbours: they are " + std::to_string(apart) + " apart along " +
                               axis_name(static_cast<int>(a)) + (wraps(a) ? "" : " (which does not wrap around)") +
                               "; a link joins chips one step apart along one axis, or the two ends of an axis "
                               "that wraps around");
    if (f.failed && f.bandwidth && *f.bandwidth > 0)
      return problem("failed", "a failed link carries nothing, but this one keeps " +
                                   sim::g3(*f.bandwidth, "of its bandwidth; give one of them"));
    if (!f.failed && !f.bandwidth)
      return problem("", "give the share of the link's bandwidth it keeps (bandwidth: 0.5) or failed: true");
    const long long from = chip_index(f.from), to = chip_index(f.to);
    for (const auto& d : f.one_way ? std::vector<std::pair<long long, long long>>{{from, to}}
                                   : std::vector<std::pair<long long, long long>>{{from, to}, {to, from}}) {
      if (!directions.insert(d).second) {
        std::size_t earlier = 0;
        for (std::size_t j = 0; j < i; ++j) {
          const long long x = chip_index(links[j].from), y = chip_index(links[j].to);
          if ((x == d.first && y == d.second) || (!links[j].one_way && x == d.second && y == d.first)) earlier = j;
        }
        return problem("to", "the link " + coords_text(f.from) + " - " + coords_text(f.to) + " is already in entry " +
                                 std::to_string(earlier) + " (each link direction once)");
      }
    }
  }
  return std::nullopt;
}

void PodNetworkConfig::validate() const {
  validate_topology(topology, shape, wraparound, "pod");
  long long product = 1;
  for (int s : shape) product *= s;
  if (chips != 0 && chips != product) {
    sim::reject("pod.shape", sim::shape_text(shape) + " holds " + std::to_string(product) + " chips, but the pod has " +
                                 std::to_string(chips));
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
  if (!links.empty() && slices > 1)
    sim::reject("pod.links",
                "degraded and failed links are for a pod of one slice, this one has " + std::to_string(slices));
  if (const auto p = find_link_fault_problem(shape, wraparound, links))
    sim::reject("pod.links[" + std::to_string(p->entry) + "]" + (p->field.empty() ? "" : "." + p->field), p->message);
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
  Topology topo(topology, shape, wraparound, layout);
  // Each entry on every device of its chips (a core axis comes first; the
  // slice's DCN axes, of one slice, stay at 0).
  const int core = devices_per_chip > 1 ? 1 : 0;
  for (const LinkFault& f : links) {
    int axis = 0;
    while (f.from[static_cast<std::size_t>(axis)] == f.to[static_cast<std::size_t>(axis)]) ++axis;
    for (int k = 0; k < std::max(devices_per_chip, 1); ++k) {
      std::vector<int> a(static_cast<std::size_t>(topo.axes()), 0), b = a;
      a[0] = b[0] = k;
      std::copy(f.from.begin(), f.from.end(), a.begin() + core);
      std::copy(f.to.begin(), f.to.end(), b.begin() + core);
      const int from = topo.chip_at(a), to = topo.chip_at(b);
      const int dir = topo.neighbor(from, axis + core, +1) == to ? +1 : -1;
      topo.set_link_fraction(topo.link_id(from, axis + core, dir), f.fraction());
      if (!f.one_way) topo.set_link_fraction(topo.link_id(to, axis + core, -dir), f.fraction());
    }
  }
  return topo;
}

}  // namespace interconnect
