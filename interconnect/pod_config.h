#pragma once
// Plain configuration of a pod's interconnect, as the experiment loader fills
// it from `pod:` (docs/interface.md). validate() throws sim::ConfigError whose key
// path names the offending field ("pod.shape"); the loader adds file:line.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "interconnect/mesh.h"
#include "interconnect/topology.h"

namespace sim {
template <class T>
class ParamTable;
}

namespace interconnect {

// Cut-through: a packet's head moves on after the per-hop latency, so a
// message pays the serialization once. Store-and-forward: every hop waits for
// a whole packet before forwarding it.
enum class Switching { cut_through, store_and_forward };

// fluid: the fast model (one decision per message and per change in the set
// of messages sharing a link). packet: every packet hop by hop, the reference
// the fluid model is tested against; slow, for small runs.
enum class NetworkModel { fluid, packet };

// The YAML spellings; parse_* throw sim::ConfigError at key_path for other words.
const sim::EnumNames<Switching>& switching_names();
const sim::EnumNames<NetworkModel>& network_model_names();
Switching parse_switching(const std::string& name, const std::string& key_path);
NetworkModel parse_network_model(const std::string& name, const std::string& key_path);
const char* to_string(Switching s);
const char* to_string(NetworkModel m);

// The data-center network between slices (docs/interconnect.md, "DCN";
// defaults per generation in docs/reference/dcn.md). A message between
// slices crosses its chip's host link, its host's NICs, the fabric, then
// the same at the other end; each is a max-min fair server as ICI links are.
struct DcnConfig {
  // Bytes/s each way between a chip and its host (PCIe):
  // docs/reference/tpu-specs.md#v5e.pcie_bw.
  double host_bandwidth = 1.6e10;
  // Bytes/s each way of all of a host's NICs together: v5e's 2 x 100 Gbps
  // per host (docs/reference/tpu-specs.md#v5e.dcn_bw).
  double nic_bandwidth = 2.5e10;
  // Seconds from a message's first byte leaving the NIC to it reaching the
  // other host. ASSUMPTION: no TPU DCN latency is published
  // (docs/reference/dcn.md).
  double latency = 1.0e-5;
  // Hosts' NIC bandwidth over the fabric core's: a slice's traffic to other
  // slices shares hosts x nic_bandwidth / oversubscription each way.
  double oversubscription = 1.0;
};

struct LinkConfig {
  // Bytes/s per direction: docs/reference/tpu-specs.md#v4.ici.bw_per_link_one_way.
  double bandwidth = 4.5e10;
  // Seconds per hop: docs/reference/tpu-specs.md#common.ici_hop_latency ("typically around 1us").
  double latency = 1.0e-6;
  // Assumption: the reference gives no ICI packet size. It sets the packet
  // model's granularity, the store-and-forward delay and a reduction's tail.
  std::uint64_t packet_bytes = 4096;
  Switching switching = Switching::cut_through;
  DcnConfig dcn;  // between slices; unused in a pod of one slice
  // Between the devices of one chip (devices_per_chip > 1): a DMA from one
  // TensorCore's HBM into the other's over the chip's on-die network, so
  // bounded by a core's sustained HBM bandwidth and paying one HBM access
  // latency (docs/interconnect.md, "Devices and chips"). ASSUMPTION: no
  // figure for the on-die path of v2, v3 or 7x is published.
  double on_die_bandwidth = 0;
  double on_die_latency = 0;
};

// The default cost of a reduction on the receiving chip (ReductionModel).
struct ReductionConfig {
  // Bytes of operand reduced per second by the vector unit. DERIVED: one
  // (8,128) f32 vreg (4096 B) per cycle per TensorCore (docs/reference/tpu-specs.md
  // common.vpu_shape) x 2 TensorCores (v4.tensorcores_per_chip) x 1.05e9 Hz
  // (v4.clock_hz).
  double vector_bytes_per_s = 8.6e12;
  // docs/reference/tpu-specs.md#v4.hbm_bw (SB:tpus.md, 1.2e12 B/s).
  double hbm_bytes_per_s = 1.2e12;
  // HBM bytes per reduced byte: read the local operand, read the arrived
  // operand, write the sum.
  double hbm_bytes_per_reduced_byte = 3.0;
  // true: the vector unit reduces packets as they land, so a reduction ends
  // one packet after its data does when the unit keeps up. false: it starts
  // once the whole message is in.
  bool streaming = true;
};

// One entry of `pod.links` (docs/interconnect.md, "Degraded and failed
// links"): the link between two neighbouring chips of a slice, given by
// their coordinates, runs at a share of its nominal bandwidth, or has
// failed (carries nothing; routes go round it). Both directions unless
// one_way (then from -> to only).
struct LinkFault {
  std::vector<int> from, to;        // chip coordinates, one per axis of the topology (x first)
  std::optional<double> bandwidth;  // share of the nominal bandwidth kept, [0, 1]
  bool failed = false;
  bool one_way = false;
  double fraction() const { return failed ? 0.0 : bandwidth.value_or(1.0); }
};
// The keys of one entry, their units, defaults and ranges.
const sim::ParamTable<LinkFault>& link_fault_params();

// What is wrong with an entry of pod.links on a pod of `shape` and
// `wraparound` (empty: every axis of 3 or more chips wraps): coordinates
// outside the pod, chips that are not neighbours, a link given twice, a
// failed link with a bandwidth. `field` is the entry's key at fault ("" for
// the entry as a whole).
struct LinkFaultProblem {
  std::size_t entry = 0;
  std::string field;
  std::string message;
};
std::optional<LinkFaultProblem> find_link_fault_problem(const std::vector<int>& shape,
                                                        const std::vector<bool>& wraparound,
                                                        const std::vector<LinkFault>& links);

struct PodNetworkConfig {
  TopologyKind topology = TopologyKind::ring;
  std::vector<int> shape;
  std::vector<bool> wraparound;  // empty: every axis of 3 or more chips wraps
  int chips = 0;                 // 0: the product of shape; else must equal it
  LinkConfig link;
  ReductionConfig reduction;
  NetworkModel model = NetworkModel::fluid;
  std::vector<MeshAxis> mesh;  // empty: one mesh axis per physical axis, named x, y, z (and dcn)
  // Slices of the shape above joined by DCN; the DCN mesh axes (MeshAxis::dcn)
  // multiply to it. Empty mesh: one DCN axis named dcn.
  int slices = 1;
  int chips_per_host = 1;  // chips (devices, with devices_per_chip > 1) sharing a host and its NICs
  // JAX devices per chip (hw::ChipConfig::devices): more than one puts a
  // core axis first (Topology), each position a device.
  int devices_per_chip = 1;
  // ICI ports of each chip (its ici.links_per_chip); 0: not checked. A
  // topology that joins a chip to more link directions than it has ports
  // cannot be wired.
  int links_per_chip = 0;
  // Degraded and failed ICI links; one slice only.
  std::vector<LinkFault> links;

  void validate() const;
  Topology make_topology() const;  // validates first
};

}  // namespace interconnect
