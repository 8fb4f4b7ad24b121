#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/cli.h"
#include "app/command_line.h"
#include "app/html_page.h"
#include "app/run_experiment.h"
#include "app/run_folder.h"
#include "app/run_page.h"
#include "sim/trace.h"
#include "workloads/experiment.h"
#include "workloads/report.h"
#include "workloads/validation_case.h"

namespace po = boost::program_options;

namespace app {

namespace {

// `tpusim run --hlo FILE --chip NAME [--pod POD] [--mesh MESH] [--entry E]
// [--cut-short]`: the experiment file those flags stand for (docs/hlo.md),
// located at "(tpusim run --hlo)" beside the HLO file, so that errors in
// the flags' values name the flag's key and the file path resolves as in an
// experiment file of that folder. Values go in as YAML double-quoted
// scalars (JSON strings), except --pod and --mesh when they are mappings.
workloads::Experiment hlo_experiment(const po::variables_map& vm, const std::vector<std::string>& sets) {
  // The path as given (a relative one stays relative: no absolute path of
  // this machine in the report), named from a location beside the file.
  const std::filesystem::path hlo = std::filesystem::path(vm["hlo"].as<std::string>()).lexically_normal();
  if (!vm.count("chip")) throw UsageError("--hlo needs --chip (a chip file name such as tpu-v6e)");
  const auto scalar = [](const std::string& v) { return nlohmann::json(v).dump(); };
  const auto value = [&scalar](const std::string& v) { return !v.empty() && v[0] == '{' ? v : scalar(v); };
  std::string stem = hlo.filename().string();
  for (const char* ext : {".txt", ".hlo"})
    if (stem.size() > std::string(ext).size() && stem.substr(stem.size() - std::string(ext).size()) == ext)
      stem.resize(stem.size() - std::string(ext).size());
  std::string text = "name: " + scalar(stem) + "\nchip: " + scalar(vm["chip"].as<std::string>()) + "\n";
  if (vm.count("pod")) text += "pod: " + value(vm["pod"].as<std::string>()) + "\n";
  if (vm.count("mesh")) text += "mesh: " + vm["mesh"].as<std::string>() + "\n";
  text += "workload:\n  kind: hlo\n  file: " + scalar(hlo.filename().string()) + "\n";
  if (vm.count("entry")) text += "  entry: " + scalar(vm["entry"].as<std::string>()) + "\n";
  if (vm["cut-short"].as<bool>()) text += "  cut_short: true\n";
  return workloads::load_experiment_text(text, (hlo.parent_path() / "(tpusim run --hlo)").string(), sets);
}

}  // namespace

int cmd_run(const std::vector<std::string>& args) {
  po::options_description opts(
      "tpusim run EXPERIMENT.yaml | tpusim run validation/cases/CASE.yaml | tpusim run --hlo FILE --chip NAME [--pod "
      "POD]");
  std::vector<std::string> sets;
  std::string out_dir;
  opts.add_options()("help,h", "this text")(
      "out", po::value(&out_dir),
      "output directory (default runs/<experiment-name>/, or runs/<experiment-name>-2/, -3/, ... when an earlier "
      "run's report.json is there)")("set", po::value(&sets)->composing(),
                                     "override a scalar: KEY.PATH=VALUE (repeatable)")(
      "trace", po::bool_switch(), "write trace.json (Perfetto / Chrome trace)")(
      "html", po::value<std::string>()->value_name("FILE.html"),
      "also write the run as one self-contained web page: engines over time per simulated chip, the pipeline "
      "schedule, the roofline with the run's point, memory per chip (implies --trace)")(
      "trace-chips", po::value<std::string>()->value_name("LIST"),
      "with --trace (implies it): the chips trace.json writes, e.g. 0,5,12-15 (a replica with its simulated "
      "chip's ops), or all-simulated (the default)")(
      "report-detail", po::value<std::string>()->value_name("summary|full"),
      "what report.json keeps of the collectives and chips: summary (the default: collective_summary, one entry "
      "per op, axes and size; past 64 chips per_chip lists chip 0 and the outliers of per_chip_summary) or full "
      "(also collectives, one entry per collective of the step, and every chip in per_chip)")(
      "vcd", po::bool_switch(), "write mxu.vcd (pe fidelity)")("experiment", po::value<std::string>(),
                                                               "experiment file")(
      "hlo", po::value<std::string>()->value_name("FILE"),
      "run the HLO text of a compiled module instead of an experiment file (kind: hlo; docs/hlo.md)")(
      "chip", po::value<std::string>()->value_name("NAME"), "with --hlo: the chip file (e.g. tpu-v6e)")(
      "pod", po::value<std::string>()->value_name("POD"),
      "with --hlo: a pod file name or an inline mapping such as '{topology: torus2d, shape: [2, 2]}' (default: "
      "one chip)")("mesh", po::value<std::string>()->value_name("MESH"),
                   "with --hlo: the mesh as an inline mapping, e.g. '{data: 2, model: 2}'")(
      "entry", po::value<std::string>()->value_name("NAME"), "with --hlo: the computation to run")(
      "cut-short", po::bool_switch(), "with --hlo: the file is the head of a longer dump");
  po::positional_options_description pos;
  pos.add("experiment", 1);
  po::variables_map vm;
  if (!parse_command_line(args, opts, pos, vm)) return 0;
  const bool hlo = vm.count("hlo") > 0;
  if (hlo && vm.count("experiment"))
    throw UsageError("--hlo runs an HLO file in place of an experiment file: give one or the other");
  for (const char* flag : {"chip", "pod", "mesh", "entry"})
    if (!hlo && vm.count(flag)) throw UsageError(std::string("--") + flag + " goes with --hlo");
  if (!hlo && vm["cut-short"].as<bool>()) throw UsageError("--cut-short goes with --hlo");
  if (!hlo && !vm.count("experiment")) throw UsageError("run needs an experiment file (or --hlo FILE --chip NAME)");

  workloads::Experiment exp =
      hlo ? hlo_experiment(vm, sets) : workloads::load_run_file(vm["experiment"].as<std::string>(), sets);
  workloads::RunOptions ro;
  const std::string html_path = vm.count("html") ? vm["html"].as<std::string>() : "";
  if (vm.count("html")) check_output_file("--html", html_path);  // before the run, not after it
  ro.trace = vm["trace"].as<bool>() || vm.count("trace-chips") > 0 || !html_path.empty();
  if (vm.count("trace-chips")) {
    try {
      ro.trace.chips = sim::parse_trace_chips(vm["trace-chips"].as<std::string>());
      // Checked here, before the run, against the pod the experiment describes.
      sim::check_trace_chips(ro.trace.chips, exp.pod.chips());
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  if (vm.count("report-detail")) {
    const std::string word = vm["report-detail"].as<std::string>();
    const auto detail = workloads::report_detail_names().find(word);
    if (!detail) throw UsageError("--report-detail: " + workloads::report_detail_names().unknown(word));
    ro.report_detail = *detail;
  }
  ro.vcd = vm["vcd"].as<bool>();
  ro.out_dir = out_dir.empty() ? default_run_folder(exp.name) : out_dir;

  if (ro.vcd && exp.workload->kind() != "matmul")
    throw UsageError("--vcd records the PE array of MXU 0 on chip 0 in kind: matmul runs (fidelity: pe); this is a " +
                     exp.workload->kind() + " experiment");
  workloads::RunOutput out = run_experiment(exp, ro, out_dir.empty() ? "output folder" : "--out");
  const std::string report_path = (std::filesystem::path(ro.out_dir) / "report.json").string();
  if (!html_path.empty()) write_html_page("--html", html_path, render_run_html(out.report, out.trace_json));
  std::cout << out.table << "report: " << report_path << "\n";
  if (out_dir.empty() && ro.out_dir != (std::filesystem::path("runs") / exp.name).string())
    std::cout << "(runs/" << exp.name << "/ holds an earlier run, kept; --out DIR chooses the folder)\n";
  if (!html_path.empty()) std::cout << "page: " << html_path << "\n";
  return 0;
}

}  // namespace app
