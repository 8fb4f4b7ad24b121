#pragma once
// Everything that describes one TPU chip, as loaded from configs/chips/*.yaml.
// The parameter table in chip_config.cpp is the single place where each
// field's name, unit, default, range and meaning are declared.
#include <cstdint>
#include <string>

#include "hw/hbm_config.h"
#include "hw/mxu_config.h"
#include "hw/number_format.h"
#include "sim/params.h"

namespace hw {

// The latency of one ICI hop, a chip's ici.link_latency or a pod's
// pod.link_latency: 0 to 10 ms (measured hops are about a microsecond,
// docs/reference/tpu-specs.md#common.ici_hop_latency).
inline sim::Range link_latency_range() { return sim::between(0, 1e-2); }

struct IciParams {
  double link_bandwidth = 0;  // bytes/s per direction
  double link_latency = 0;    // s per hop
  std::uint32_t links_per_chip = 0;
  // Fixed cost of launching one collective on this chip (s): the time from
  // issuing it to its first transfer (docs/calibration.md#collective-launch).
  double collective_launch = 0;
};

// The host a chip hangs off: chips sharing it, the chip's PCIe link to it,
// and the host's NICs into the data-center network (multislice pods).
struct HostParams {
  std::uint32_t chips = 1;
  double pcie_bandwidth = 0;  // bytes/s each way, per chip
  double nic_bandwidth = 0;   // bytes/s each way, all of the host's NICs
  std::uint64_t memory = 0;   // bytes of DRAM, all of the host's (remat: offload keeps activations there)
  // Seconds a TensorCore issues nothing while a collective across slices
  // takes one step of its ring (the hosts' DCN handshake),
  // docs/calibration.md#dcn-sync; 0: none.
  double dcn_sync = 0;
  // Seconds of the serving host's work per server step (scheduling, input
  // preparation, the sampled tokens' return), which a synchronous server
  // runs between device steps and an asynchronous one beside them
  // (workload.scheduling, docs/serving.md#host-time-per-step;
  // docs/calibration.md#serve-step); 0: none.
  double serve_step = 0;
  // One chip's share of the host's DRAM.
  std::uint64_t memory_per_chip() const { return memory / chips; }
};

// The chip's SparseCores (hw/sparsecore.h): how many, and how fast one
// moves bytes to and from HBM. 0 SparseCores: none modelled (v2, v3, v5e).
struct SparseCoreParams {
  std::uint32_t count = 0;
  double hbm_bandwidth = 0;  // bytes/s, one SparseCore, reads and writes together
};

// The 8-bit formats of a chip's MXUs: MACs per PE per cycle relative to
// bf16 (1 = bf16's rate, 2 = twice it), 0 where the chip lacks the format.
// bf16 is every chip's, at rate 1 (docs/calibration.md#number-formats).
struct MxuFormats {
  std::uint32_t int8 = 0;
  std::uint32_t fp8 = 0;
};

// Energy per operation (docs/mxu.md#energy): a report's energy is MACs x
// mac_pj + VMEM bytes x vmem_pj_per_byte + HBM bytes x hbm_pj_per_byte.
struct EnergyParams {
  double mac_pj = 0;            // pJ per multiply-accumulate
  double vmem_pj_per_byte = 0;  // pJ per byte read from or written to VMEM
  double hbm_pj_per_byte = 0;   // pJ per byte read from or written to HBM
  // Joules of `macs`, `vmem_bytes` and `hbm_bytes`.
  double mac_j(double macs) const { return macs * mac_pj * 1e-12; }
  double vmem_j(double bytes) const { return bytes * vmem_pj_per_byte * 1e-12; }
  double hbm_j(double bytes) const { return bytes * hbm_pj_per_byte * 1e-12; }
  double total_j(double macs, double vmem_bytes, double hbm_bytes) const {
    return mac_j(macs) + vmem_j(vmem_bytes) + hbm_j(hbm_bytes);
  }
};

struct ChipConfig {
  std::string name;
  double clock = 0;  // Hz
  std::uint32_t tensorcores = 1;
  // JAX devices the chip exposes: 1 (a single core, or v4/v5p's megacore
  // fusing two) or one per TensorCore (v2, v3, 7x: each core has its own
  // HBM and is a device of its own).
  std::uint32_t devices = 1;
  std::uint32_t mxus_per_core = 1;
  MxuConfig mxu;
  MxuFormats formats;
  double vector_flops_per_cycle = 0;  // per TensorCore
  std::uint64_t vmem = 0;             // bytes per TensorCore
  HbmConfig hbm;
  std::uint32_t dma_engines = 1;  // per chip
  // Fixed cost of launching one kernel (s): the scalar unit's issue and
  // synchronisation before the kernel's first transfer (docs/calibration.md#kernel-launch).
  double kernel_launch = 0;
  // Share of `clock` the TensorCore's engines (MXUs, vector unit) sustain
  // through long compute-bound kernels (docs/calibration.md#compute-efficiency):
  // the simulated chip runs at sustained_clock(); peak FLOP/s, MFU and the
  // ridge stay at the nominal clock, as the published figures are.
  double compute_efficiency = 1.0;
  IciParams ici;
  HostParams host;
  SparseCoreParams sparsecore;
  EnergyParams energy;

  std::uint32_t mxus() const { return tensorcores * mxus_per_core; }
  double sustained_clock() const { return clock * compute_efficiency; }
  // 2 FLOPs per MAC, every MAC of every MXU each cycle.
  double peak_flops_per_s() const { return 2.0 * mxus() * double(mxu.rows) * double(mxu.cols) * clock; }
  double ridge_intensity() const { return peak_flops_per_s() / hbm.bandwidth_bytes_per_s; }
  // One of the chip's `devices` as tpusim simulates it: its share of the
  // cores, HBM, DMA engines and PCIe link, and of each ICI link (the cores
  // of a chip share its links; tpusim gives each device an equal part).
  // The chip itself for a chip of one device.
  ChipConfig device() const;
  // MACs per PE per cycle in `f` relative to bf16; 0 where the chip lacks it.
  std::uint32_t format_rate(NumberFormat f) const;
  // The formats the chip has, "bf16, int8" (for messages).
  std::string format_list() const;
  // The chip as a matmul in `f` sees it: an MXU that does `rate` MACs per
  // PE per cycle is modelled as `rate` arrays of the same size working side
  // by side (the same peak, fill and drain per tile as one array packing
  // `rate` products into each PE). Throws std::logic_error for a format the
  // chip lacks: callers check format_rate first, where the error can be
  // located.
  ChipConfig for_format(NumberFormat f) const;
};

const sim::ParamTable<ChipConfig>& chip_params();

// Loads and validates a chip from a mapping (a chip file's root or an inline
// `chip:` mapping in an experiment).
ChipConfig load_chip(const sim::YamlNode& node);

}  // namespace hw
