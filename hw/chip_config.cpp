#include "hw/chip_config.h"

#include <algorithm>
#include <stdexcept>

namespace hw {

namespace {

sim::ParamTable<MxuConfig> mxu_params() {
  sim::ParamTable<MxuConfig> t("mxu", "systolic array (MXU)");
  t.integer<std::uint32_t>("rows", &MxuConfig::rows, "PEs", 128, sim::between(2, 256),
                           "array rows = contraction (k) extent of a weight tile")
      .integer<std::uint32_t>("cols", &MxuConfig::cols, "PEs", 128, sim::between(2, 256),
                              "array columns = output (n) extent of a weight tile")
      .flag("double_buffer", &MxuConfig::double_buffer, true,
            "two weight banks: load the next tile while the current one streams")
      .enumeration("schedule", &MxuConfig::schedule, mxu_schedule_names(), MxuSchedule::overlapped,
                   "how consecutive weight tiles share the array (docs/mxu.md, \"Fold-serial schedule\")")
      .enumeration("dataflow", &MxuConfig::dataflow, mxu_dataflow_names(), MxuDataflow::ws,
                   "which operand stays in the PEs (docs/mxu.md, \"Dataflows\"): SCALE-Sim's Dataflow field");
  return t;
}

sim::ParamTable<MxuFormats> format_params() {
  sim::ParamTable<MxuFormats> t("formats",
                                "8-bit formats of the MXUs, as MACs per PE per cycle relative to bf16 (bf16 is 1 "
                                "on every chip); 0 = the chip lacks the format (docs/calibration.md#number-formats)");
  t.integer<std::uint32_t>("int8", &MxuFormats::int8, "x bf16", 0, sim::between(0, 4),
                           "int8 rate: the published int8 peak over the bf16 peak")
      .integer<std::uint32_t>("fp8", &MxuFormats::fp8, "x bf16", 0, sim::between(0, 4),
                              "fp8 rate: the published fp8 peak over the bf16 peak");
  return t;
}

sim::ParamTable<HbmConfig> hbm_params() {
  sim::ParamTable<HbmConfig> t("hbm", "high-bandwidth memory");
  t.integer<std::uint64_t>("capacity", &HbmConfig::capacity_bytes, "B", std::nullopt, sim::at_least(1), "capacity")
      .real("bandwidth", &HbmConfig::bandwidth_bytes_per_s, "B/s", std::nullopt, sim::positive(),
            "peak bandwidth of the whole device")
      .integer<std::uint32_t>("channels", &HbmConfig::channels, "channels", 32, sim::between(1, 1024),
                              "independent channels sharing the bandwidth equally")
      .real("latency", &HbmConfig::latency_s, "s", 250e-9, sim::between(0, 1e-3),
            "access latency added once per DMA transfer")
      .real("efficiency", &HbmConfig::efficiency, "", 1.0, sim::between(0.01, 1),
            "share of the peak bandwidth the DRAM sustains on streaming traffic (refresh, turnarounds); "
            "docs/calibration.md#hbm-efficiency")
      .integer<std::uint64_t>("interleave", &HbmConfig::interleave_bytes, "B", 256, sim::between(32, 1 << 20),
                              "address interleave granularity across channels");
  return t;
}

sim::ParamTable<IciParams> ici_params() {
  sim::ParamTable<IciParams> t("ici", "inter-chip interconnect links of this chip");
  t.real("link_bandwidth", &IciParams::link_bandwidth, "B/s", std::nullopt, sim::positive(),
         "bandwidth of one link in one direction")
      .real("link_latency", &IciParams::link_latency, "s", 1e-6, link_latency_range(), "latency per hop")
      .integer<std::uint32_t>("links_per_chip", &IciParams::links_per_chip, "links", 4, sim::between(1, 6),
                              "ICI ports per chip: a pod whose topology joins a chip to more neighbour links "
                              "is refused")
      .informational("a check on the pod: it refuses topologies, it times nothing")
      .real("collective_launch", &IciParams::collective_launch, "s", 0.0, sim::between(0, 1e-3),
            "fixed cost of one collective on each chip, from issue to its first transfer (synchronisation "
            "and setup of the collective's program; docs/calibration.md#collective-launch)");
  return t;
}

// Defaults are v5e's (docs/reference/tpu-specs.md#v5e.host, v5e.pcie_bw,
// v5e.dcn_bw, v5e.host_memory): a chip file names its own generation's.
// No source gives a SparseCore's own HBM bandwidth: chip files say
// ASSUMPTION where they set one (docs/reference/tpu-specs.md#common.sparsecore).
sim::ParamTable<SparseCoreParams> sparsecore_params() {
  sim::ParamTable<SparseCoreParams> t("sparsecore",
                                      "the chip's SparseCores: units beside the TensorCores that run XLA's "
                                      "sparsecore thread and offloaded collectives (docs/hlo.md#sparsecore)");
  t.integer<std::uint32_t>("count", &SparseCoreParams::count, "SparseCores", 0, sim::between(0, 16),
                           "SparseCores per chip (0: none)")
      .real("hbm_bandwidth", &SparseCoreParams::hbm_bandwidth, "B/s", 0.0, sim::between(0, 1e14),
            "bytes one SparseCore moves to and from HBM per second (its flows share the chip's HBM with the "
            "TensorCore's)");
  return t;
}

sim::ParamTable<HostParams> host_params() {
  sim::ParamTable<HostParams> t("host", "the host a chip hangs off, and its way into the data-center network (DCN)");
  t.integer<std::uint32_t>("chips", &HostParams::chips, "chips", 8, sim::between(1, 64), "chips per host")
      .real("pcie_bandwidth", &HostParams::pcie_bandwidth, "B/s", 1.6e10, sim::positive(),
            "one chip's PCIe link to the host, each way")
      .real("nic_bandwidth", &HostParams::nic_bandwidth, "B/s", 2.5e10, sim::positive(),
            "all of the host's NICs into the DCN together, each way")
      .integer<std::uint64_t>("memory", &HostParams::memory, "B", 512ull << 30, sim::at_least(1),
                              "the host's DRAM, shared by its chips (what remat: offload may fill)")
      .real("dcn_sync", &HostParams::dcn_sync, "s", 0.0, sim::between(0, 1),
            "TensorCore stall per ring step of a collective across slices (calibrated: docs/calibration.md#dcn-sync)")
      .real("serve_step", &HostParams::serve_step, "s", 0.0, sim::between(0, 1),
            "the serving host's work per server step (scheduling, input preparation, the sampled tokens' "
            "return), in series with a synchronous server's steps (calibrated: docs/calibration.md#serve-step)");
  return t;
}

// Defaults: 0, energy not modelled; every shipped chip file sets its own
// (docs/reference/energy.md).
sim::ParamTable<EnergyParams> energy_params() {
  sim::ParamTable<EnergyParams> t("energy", "energy per operation, for result.energy (docs/mxu.md#energy)");
  t.real("mac_pj", &EnergyParams::mac_pj, "pJ", 0.0, sim::between(0, 1e4),
         "one multiply-accumulate of the MXU (its multiply and its add)")
      .real("vmem_pj_per_byte", &EnergyParams::vmem_pj_per_byte, "pJ/B", 0.0, sim::between(0, 1e4),
            "one byte the MXU reads from or writes to VMEM (operands in, accumulators read and written)")
      .real("hbm_pj_per_byte", &EnergyParams::hbm_pj_per_byte, "pJ/B", 0.0, sim::between(0, 1e5),
            "one byte read from or written to HBM");
  return t;
}

}  // namespace

const sim::ParamTable<ChipConfig>& chip_params() {
  static const sim::ParamTable<ChipConfig> table = [] {
    sim::ParamTable<ChipConfig> t("chip", "one TPU chip");
    t.text("name", &ChipConfig::name, "", "chip name, e.g. tpu-v4")
        .informational("a label in reports")
        .custom("base", {"chip file name", "", "none", ""},
                "in an experiment's `chip:` mapping only: a shipped chip whose keys the mapping's other keys "
                "change, e.g. {base: tpu-v5e, hbm: {bandwidth: 2.4e12}} (a what-if; report.json's "
                "experiment.chip)",
                [](const sim::YamlNode& n, ChipConfig&) {
                  n.fail("a chip file cannot name a base; an experiment's chip: mapping can (chip: {base: NAME, ...})");
                })
        .real("clock", &ChipConfig::clock, "Hz", std::nullopt, sim::between(1e6, 1e10),
              // The period is a whole number of the kernel's picoseconds: at
              // most 10 GHz keeps its rounding within 0.5 %; at least 1 MHz
              // keeps an op's cycles x period far inside simulated time.
              "core clock")
        .integer<std::uint32_t>("tensorcores", &ChipConfig::tensorcores, "cores", 1, sim::between(1, 16),
                                "TensorCores per chip")
        .integer<std::uint32_t>("devices", &ChipConfig::devices, "devices", 1, sim::between(1, 16),
                                "JAX devices per chip: 1 (one core, or a megacore of two) or one per TensorCore "
                                "(v2, v3, 7x); meshes count devices (docs/interconnect.md#devices-and-chips)")
        .integer<std::uint32_t>("mxus_per_core", &ChipConfig::mxus_per_core, "MXUs", 1, sim::between(1, 16),
                                "MXUs per TensorCore")
        .group("mxu", &ChipConfig::mxu, mxu_params())
        .group("formats", &ChipConfig::formats, format_params())
        .real("vector_flops_per_cycle", &ChipConfig::vector_flops_per_cycle, "FLOP/cycle", std::nullopt,
              sim::positive(), "vector unit throughput per TensorCore")
        .integer<std::uint64_t>("vmem", &ChipConfig::vmem, "B", std::nullopt, sim::at_least(4096),
                                "vector memory (VMEM) per TensorCore")
        .group("hbm", &ChipConfig::hbm, hbm_params())
        .integer<std::uint32_t>("dma_engines", &ChipConfig::dma_engines, "engines", 4, sim::between(1, 64),
                                "DMA engines per chip (concurrent HBM streams)")
        .real("kernel_launch", &ChipConfig::kernel_launch, "s", 0.0, sim::between(0, 1e-3),
              "fixed cost of one kernel, from issue to its first transfer (the scalar unit's setup and "
              "synchronisation; docs/calibration.md#kernel-launch)")
        .real("compute_efficiency", &ChipConfig::compute_efficiency, "", 1.0, sim::between(0.01, 1),
              "share of the nominal clock the MXUs and vector unit sustain through long compute-bound "
              "kernels (what a large matmul loses beyond the modelled fill, drain and DMA pipeline); "
              "peak, MFU and ridge stay at `clock`; docs/calibration.md#compute-efficiency")
        .group("ici", &ChipConfig::ici, ici_params())
        .group("host", &ChipConfig::host, host_params())
        .group("sparsecore", &ChipConfig::sparsecore, sparsecore_params())
        .group("energy", &ChipConfig::energy, energy_params());
    return t;
  }();
  return table;
}

ChipConfig load_chip(const sim::YamlNode& node) {
  ChipConfig c;
  chip_params().load(node, c);
  if (c.devices != 1 && c.devices != c.tensorcores)
    node["devices"].fail("a chip is 1 device or one device per TensorCore (" + std::to_string(c.tensorcores) +
                         "), got " + std::to_string(c.devices));
  return c;
}

ChipConfig ChipConfig::device() const {
  ChipConfig d = *this;
  if (devices <= 1) return d;
  const double n = devices;
  d.devices = 1;
  d.tensorcores = tensorcores / devices;
  d.hbm.capacity_bytes = hbm.capacity_bytes / devices;
  d.hbm.bandwidth_bytes_per_s = hbm.bandwidth_bytes_per_s / n;
  d.hbm.channels = std::max<std::uint32_t>(1, hbm.channels / devices);
  d.dma_engines = std::max<std::uint32_t>(1, dma_engines / devices);
  d.ici.link_bandwidth = ici.link_bandwidth / n;
  d.host.chips = host.chips * devices;
  d.host.pcie_bandwidth = host.pcie_bandwidth / n;
  d.sparsecore.count = sparsecore.count / devices;  // each device its share of the SparseCores
  return d;
}

std::uint32_t ChipConfig::format_rate(NumberFormat f) const {
  switch (f) {
    case NumberFormat::bf16: return 1;
    case NumberFormat::int8: return formats.int8;
    case NumberFormat::fp8: return formats.fp8;
  }
  return 0;
}

std::string ChipConfig::format_list() const {
  std::string s;
  for (const auto& c : number_format_names().choices())
    if (format_rate(c.value) > 0) s += (s.empty() ? "" : ", ") + c.name;
  return s;
}

ChipConfig ChipConfig::for_format(NumberFormat f) const {
  const std::uint32_t rate = format_rate(f);
  if (rate == 0) throw std::logic_error(name + " has no " + to_string(f) + " MXU path");
  ChipConfig c = *this;
  c.mxus_per_core = mxus_per_core * rate;
  return c;
}

}  // namespace hw
