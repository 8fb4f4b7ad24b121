#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include <iostream>

#include "app/cli.h"
#include "hw/chip_config.h"
#include "hw/mxu_explain.h"
#include "sim/output.h"

namespace po = boost::program_options;

namespace app {

namespace {

int explain_mxu(const std::vector<std::string>& args) {
  po::options_description opts("tpusim explain mxu");
  std::uint32_t rows = 128, cols = 128;
  std::uint64_t m = 128, k = 128, n = 128, seed = 1;
  std::string dataflow = "ws", fidelity = "tile";
  opts.add_options()("help,h", "this text")("rows", po::value(&rows)->default_value(128), "array rows (2..256)")(
      "cols", po::value(&cols)->default_value(128), "array columns (2..256)")(
      "m", po::value(&m)->default_value(128), "rows of A (streamed activations)")(
      "k", po::value(&k)->default_value(128), "contraction dimension")(
      "n", po::value(&n)->default_value(128), "columns of B (stationary weights)")(
      "dataflow", po::value(&dataflow)->default_value("ws"), "ws (weight-stationary)")(
      "fidelity", po::value(&fidelity)->default_value("tile"), "tile (closed form) or pe (every PE, every cycle)")(
      "no-double-buffer", po::bool_switch(), "one weight bank: loads do not overlap streaming")(
      "seed", po::value(&seed)->default_value(1), "operands of a pe run")("json", po::bool_switch(),
                                                                          "print a JSON object");
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(opts).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << opts;
    return 0;
  }
  if (dataflow != "ws") throw UsageError("--dataflow: only ws (weight-stationary) is modelled, got '" + dataflow + "'");
  if (fidelity != "tile" && fidelity != "pe") throw UsageError("--fidelity: expected tile or pe, got '" + fidelity + "'");

  hw::MxuExplainRequest req;
  req.config.rows = rows;
  req.config.cols = cols;
  req.config.double_buffer = !vm["no-double-buffer"].as<bool>();
  req.shape = {m, k, n};
  req.fidelity = fidelity == "pe" ? hw::Fidelity::pe : hw::Fidelity::tile;
  req.seed = seed;
  hw::MxuExplainResult r = hw::mxu_explain(req);

  if (vm["json"].as<bool>()) {
    nlohmann::json j{{"cycles", r.cycles},     {"rows", rows},
                     {"cols", cols},           {"m", m},
                     {"k", k},                 {"n", n},
                     {"dataflow", dataflow},   {"fidelity", fidelity},
                     {"double_buffer", req.config.double_buffer},
                     {"macs", r.macs},         {"utilization", r.utilization},
                     {"wall_time_s", r.wall_time_s}};
    if (r.checked) j["matches_reference"] = r.matches_reference;
    std::cout << j.dump(2) << "\n";
  } else {
    sim::Table t("MXU " + std::to_string(rows) + "x" + std::to_string(cols) + " (weight-stationary, " +
                 (req.config.double_buffer ? "double-buffered" : "single-buffered") + " weights, " + fidelity +
                 " fidelity): A " + std::to_string(m) + "x" + std::to_string(k) + " x B " + std::to_string(k) +
                 "x" + std::to_string(n));
    t.row("cycles", std::to_string(r.cycles), "(first weight-load cycle .. last result out)");
    t.row("MACs", std::to_string(r.macs));
    t.row("utilization", sim::fixed(100.0 * r.utilization, 2), "% of rows*cols*cycles");
    if (r.checked) t.row("values", r.matches_reference ? "match host reference" : "MISMATCH with host reference");
    t.row("wall time", sim::fixed(r.wall_time_s, 4), "s");
    std::cout << t.str();
  }
  return r.checked && !r.matches_reference ? 1 : 0;
}

// Prints a parameter table (name, type, unit, default, range, meaning) from
// the same declarations that load and validate the YAML.
void print_params(const nlohmann::json& table, const std::string& prefix) {
  for (const auto& p : table["params"]) {
    const std::string name = prefix + p["name"].get<std::string>();
    if (p.contains("params")) {
      std::cout << "  " << name << ": " << p["description"].get<std::string>() << "\n";
      print_params(p, name + ".");
      continue;
    }
    std::cout << "  " << name << " (" << p["type"].get<std::string>();
    if (!p["unit"].get<std::string>().empty()) std::cout << ", " << p["unit"].get<std::string>();
    std::cout << ", default " << p["default"].get<std::string>();
    if (p.contains("range") && !p["range"].get<std::string>().empty()) std::cout << ", " << p["range"].get<std::string>();
    std::cout << "): " << p["description"].get<std::string>() << "\n";
  }
}

}  // namespace

int cmd_explain(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "-h" || args[0] == "--help") {
    std::cout << "tpusim explain mxu [options]: one MXU op explained (tpusim explain mxu --help)\n"
                 "tpusim explain chip: the keys of a chip file, with units, defaults and ranges\n";
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "mxu") return explain_mxu(std::vector<std::string>(args.begin() + 1, args.end()));
  if (args[0] == "chip") {
    std::cout << "chip file keys (configs/chips/*.yaml), SI units:\n";
    print_params(hw::chip_params().describe(), "");
    return 0;
  }
  throw UsageError("explain: unknown topic '" + args[0] + "'; expected mxu or chip");
}

}  // namespace app
