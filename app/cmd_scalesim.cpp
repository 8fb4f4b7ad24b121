// `tpusim scalesim CONFIG.cfg TOPOLOGY.csv`: SCALE-Sim v2's inputs run on
// tpusim's array (workloads/scalesim.h, docs/scalesim.md).
#include <boost/program_options.hpp>

#include <filesystem>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

#include "app/cli.h"
#include "app/command_line.h"
#include "hw/mxu_config.h"
#include "sim/host.h"
#include "sim/output.h"
#include "sim/params.h"
#include "workloads/experiment.h"
#include "workloads/scalesim.h"

namespace po = boost::program_options;

namespace app {

namespace {

const char* kFiles[] = {"report.json", "COMPUTE_REPORT.csv", "BANDWIDTH_REPORT.csv", "ACCESS_REPORT.csv"};

std::string layer_table(const std::vector<workloads::ScaleSimLayerRecord>& layers) {
  std::ostringstream t;
  t << std::left << std::setw(24) << "layer" << std::right << std::setw(10) << "M" << std::setw(8) << "K"
    << std::setw(8) << "N" << std::setw(8) << "folds" << std::setw(14) << "cycles" << std::setw(10) << "util %\n";
  std::uint64_t cycles = 0, macs = 0;
  double energy_j = 0;
  for (const auto& l : layers) {
    t << std::left << std::setw(24) << l.name.substr(0, 23) << std::right << std::setw(10) << l.m << std::setw(8) << l.k
      << std::setw(8) << l.n << std::setw(8) << l.row_folds * l.col_folds << std::setw(14) << l.scalesim_cycles
      << std::setw(9) << sim::fixed(l.overall_util_pct, 1) << "\n";
    cycles += l.scalesim_cycles;
    macs += l.macs;
    energy_j += l.energy_j.value_or(0.0);
  }
  t << std::left << std::setw(58) << "total (SCALE-Sim's convention)" << std::right << std::setw(14) << cycles << "\n"
    << "MACs: " << macs << "\n";
  if (!layers.empty() && layers.front().energy_j) t << "energy: " << sim::si(energy_j, "J") << " (--chip's figures)\n";
  return t.str();
}

}  // namespace

int cmd_scalesim(const std::vector<std::string>& args) {
  po::options_description opts("tpusim scalesim CONFIG.cfg TOPOLOGY.csv");
  std::string out_dir, fidelity_word = "tile", chip;
  opts.add_options()("help,h", "this text")("out", po::value(&out_dir), "output directory (default runs/<run_name>/)")(
      "fidelity", po::value(&fidelity_word),
      "tile: each layer's cycles in closed form; pe: the PE engine steps every PE every cycle")(
      "chip", po::value(&chip),
      "a chip name or file (e.g. tpu-v4): each layer's energy from its MACs and SRAM and DRAM words at the "
      "chip's energy keys (docs/scalesim.md#energy); without it, no energy")(
      "config", po::value<std::string>(), "SCALE-Sim config file")("topology", po::value<std::string>(),
                                                                   "SCALE-Sim topology CSV");
  po::positional_options_description pos;
  pos.add("config", 1).add("topology", 1);
  po::variables_map vm;
  if (!parse_command_line(args, opts, pos, vm)) return 0;
  if (!vm.count("config") || !vm.count("topology"))
    throw UsageError("scalesim needs a config file and a topology file (CONFIG.cfg TOPOLOGY.csv)");
  hw::Fidelity fidelity = hw::fidelity_names().parse(fidelity_word, "--fidelity");
  if (fidelity == hw::Fidelity::kernel)
    throw sim::ConfigError({"command line"}, "--fidelity", "scalesim runs at fidelity tile or pe");

  std::optional<hw::ChipConfig> energy_chip;
  if (!chip.empty()) energy_chip = workloads::load_chip_option(chip, "--chip");

  sim::WallTimer wall;
  const std::string config_path = vm["config"].as<std::string>();
  const std::string topology_path = vm["topology"].as<std::string>();
  const workloads::ScaleSimConfig config = workloads::load_scalesim_config(config_path);
  const workloads::ScaleSimTopology topology = workloads::load_scalesim_topology(topology_path);
  const std::string dir =
      out_dir.empty() ? (std::filesystem::path("runs") / config.general.run_name).string() : out_dir;
  const std::vector<std::string> files(std::begin(kFiles), std::end(kFiles));
  prepare_output_dir(dir, files, out_dir.empty() ? "output folder" : "--out");
  sim::remove_stale_temps(dir);

  auto layers = workloads::run_scalesim(config, topology, fidelity);
  if (energy_chip) workloads::add_scalesim_energy(layers, energy_chip->energy);
  const workloads::Report rep =
      workloads::scalesim_report(config, topology, layers, config_path, topology_path, fidelity, wall.seconds());
  sim::OutputSet outputs(dir, files);
  outputs.write("COMPUTE_REPORT.csv", workloads::scalesim_compute_report(layers));
  outputs.write("BANDWIDTH_REPORT.csv", workloads::scalesim_bandwidth_report(layers));
  outputs.write("ACCESS_REPORT.csv", workloads::scalesim_access_report(layers));
  outputs.write("report.json", workloads::report_text(workloads::to_json(rep), workloads::ReportDetail::summary));
  outputs.commit();
  std::cout << "tpusim scalesim: " << config.general.run_name << " (" << config.arch.array_height << "x"
            << config.arch.array_width << " " << hw::to_string(config.arch.dataflow) << ", fold-serial, "
            << layers.size() << " layers)\n"
            << layer_table(layers) << "reports: " << dir << "/\n";
  return 0;
}

}  // namespace app
