#pragma once
// SCALE-Sim v2 inputs (`tpusim scalesim CONFIG.cfg TOPOLOGY.csv`,
// docs/scalesim.md): its INI config file and its topology CSVs read into
// tpusim's types, every layer run on an array built from the config with
// the fold-serial schedule (SCALE-Sim's stall-free convention), and the
// per-layer figures written in SCALE-Sim's report columns.
//
// Formats, learnt from scalesim-project/scale-sim-v2 (MIT):
//  - config: Python configparser INI. Sections [general] (run_name),
//    [architecture_presets] (ArrayHeight, ArrayWidth, IfmapSramSzkB,
//    FilterSramSzkB, OfmapSramSzkB, IfmapOffset, FilterOffset, OfmapOffset,
//    Dataflow, Bandwidth, MemoryBanks), [run_presets] (InterfaceBandwidth:
//    CALC | USER); `key = value` or `key: value`; keys case-insensitive;
//    whole-line comments start with # or ;.
//  - topology: a header row, then one layer a row, fields separated by
//    commas, conventionally with a trailing comma. Convolution rows: Layer
//    name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels,
//    Num Filter, Strides (one stride for both axes, or Stride Height and
//    Stride Width). GEMM rows: Layer, M, N, K. A layer whose name contains
//    "DP" is depthwise: SCALE-Sim runs it as one single-channel layer per
//    channel, named <name>Channel_<i>.
// Every mistake is a sim::ConfigError located at file:line:column.
#include <cstdint>
#include <string>
#include <vector>

#include "hw/chip_config.h"
#include "hw/mxu_config.h"
#include "models/conv_layer.h"
#include "sim/params.h"
#include "workloads/report.h"

namespace workloads {

struct ScaleSimArchitecture {
  std::uint32_t array_height = 0, array_width = 0;          // R (rows), C (columns)
  std::uint64_t ifmap_kb = 0, filter_kb = 0, ofmap_kb = 0;  // SRAM sizes, kB of 1-byte words
  std::uint64_t ifmap_offset = 0, filter_offset = 0, ofmap_offset = 0;
  hw::MxuDataflow dataflow = hw::MxuDataflow::ws;
  std::vector<std::uint64_t> bandwidth;  // words per cycle (USER mode; the first is used)
  std::uint32_t memory_banks = 1;
};

// The file's sections.
struct ScaleSimConfig {
  struct General {
    std::string run_name;
  } general;
  ScaleSimArchitecture arch;
  struct RunPresets {
    std::string interface_bandwidth;  // CALC | USER
  } run;
  struct NetworkPresets {
    std::string topology_csv;  // TopologyCsvLoc (the command line's topology is used)
  } network;
};

// Every section and key of the config file (tpusim explain scalesim).
const sim::ParamTable<ScaleSimConfig>& scalesim_config_params();

// Reads a SCALE-Sim .cfg file; throws sim::ConfigError located in it.
ScaleSimConfig load_scalesim_config(const std::string& path);
// The same for text that `origin` names in messages (tests).
ScaleSimConfig parse_scalesim_config(const std::string& text, const std::string& origin);

struct ScaleSimTopology {
  bool gemm = false;  // M, N, K rows (else convolution rows)
  struct Row {
    models::ConvLayer layer;  // a GEMM row as models::gemm_as_conv
    int line = 0;
  };
  std::vector<Row> layers;
};

// Reads a topology CSV, convolution or GEMM rows (told apart by the header's
// column count: 4 is GEMM, 8 or 9 convolution); throws sim::ConfigError.
ScaleSimTopology load_scalesim_topology(const std::string& path);
ScaleSimTopology parse_scalesim_topology(const std::string& text, const std::string& origin);

// The MXU a config describes: ArrayHeight x ArrayWidth, fold-serial.
hw::MxuConfig scalesim_mxu(const ScaleSimConfig& config);

// Runs every layer: its im2col GEMM (M = output pixels, K = Fh Fw C,
// N = filters) on the config's array at `fidelity` (tile: the closed form;
// pe: the PE engine, every PE every cycle), and the traffic model of
// docs/scalesim.md. Throws sim::SimFailure when a pe run is over the PE or
// memory budget.
std::vector<ScaleSimLayerRecord> run_scalesim(const ScaleSimConfig& config, const ScaleSimTopology& topology,
                                              hw::Fidelity fidelity);

// Sets each layer's energy_j at `energy`'s figures (`tpusim scalesim
// --chip`, docs/scalesim.md#energy): MACs x mac_pj + SRAM words (ifmap and
// filter reads, ofmap writes) x vmem_pj_per_byte + DRAM words x
// hbm_pj_per_byte, SCALE-Sim's words being one byte.
void add_scalesim_energy(std::vector<ScaleSimLayerRecord>& layers, const hw::EnergyParams& energy);

// report.json of a run: the scalesim section (config and layers), result
// cycles (tpusim's, summed), flops and array utilisation.
Report scalesim_report(const ScaleSimConfig& config, const ScaleSimTopology& topology,
                       const std::vector<ScaleSimLayerRecord>& layers, const std::string& config_path,
                       const std::string& topology_path, hw::Fidelity fidelity, double wall_s);

// SCALE-Sim's COMPUTE_REPORT.csv and BANDWIDTH_REPORT.csv, and the access
// counts of its DETAILED_ACCESS_REPORT.csv (ACCESS_REPORT.csv), with its
// column names.
std::string scalesim_compute_report(const std::vector<ScaleSimLayerRecord>& layers);
std::string scalesim_bandwidth_report(const std::vector<ScaleSimLayerRecord>& layers);
std::string scalesim_access_report(const std::vector<ScaleSimLayerRecord>& layers);

}  // namespace workloads
