#include <boost/program_options.hpp>

#include <filesystem>
#include <iostream>

#include "app/cli.h"
#include "app/command_line.h"
#include "sim/output.h"
#include "workloads/experiment.h"

namespace po = boost::program_options;

namespace app {

int cmd_run(const std::vector<std::string>& args) {
  po::options_description opts("tpusim run EXPERIMENT.yaml");
  std::vector<std::string> sets;
  std::string out_dir;
  opts.add_options()("help,h", "this text")("out", po::value(&out_dir),
                                            "output directory (default runs/<experiment-name>/)")(
      "set", po::value(&sets)->composing(), "override a scalar: KEY.PATH=VALUE (repeatable)")(
      "trace", po::bool_switch(), "write trace.json (Perfetto / Chrome trace)")(
      "vcd", po::bool_switch(), "write mxu.vcd (pe fidelity)")("experiment", po::value<std::string>(),
                                                               "experiment file");
  po::positional_options_description pos;
  pos.add("experiment", 1);
  po::variables_map vm;
  if (!parse_command_line(args, opts, pos, vm)) return 0;
  if (!vm.count("experiment")) throw UsageError("run needs an experiment file");

  workloads::Experiment exp = workloads::load_experiment(vm["experiment"].as<std::string>(), sets);
  workloads::RunOptions ro;
  ro.trace = vm["trace"].as<bool>();
  ro.vcd = vm["vcd"].as<bool>();
  ro.out_dir = out_dir.empty() ? (std::filesystem::path("runs") / exp.name).string() : out_dir;

  if (ro.vcd && exp.workload->kind() != "matmul")
    throw UsageError("--vcd records the PE array of MXU 0 on chip 0 in kind: matmul runs (fidelity: pe); this is a " +
                     exp.workload->kind() + " experiment");
  prepare_output_dir(ro.out_dir, {"report.json", "trace.json", "mxu.vcd"}, out_dir.empty() ? "output folder" : "--out");
  // What a killed run left here; then this run's outputs, replaced as one
  // set once it has succeeded (a failed run leaves the earlier set as it was).
  sim::remove_stale_temps(ro.out_dir);
  sim::OutputSet outputs(ro.out_dir, {"report.json", "trace.json", "mxu.vcd"});
  if (ro.vcd) ro.vcd_path = outputs.stage("mxu.vcd", ".vcd");
  workloads::RunOutput out = exp.workload->run(exp, ro);
  const std::string report_path = (std::filesystem::path(ro.out_dir) / "report.json").string();
  if (!out.trace_json.empty()) outputs.write("trace.json", out.trace_json);
  outputs.write("report.json", out.report.dump(2) + "\n");
  outputs.commit();
  std::cout << out.table << "report: " << report_path << "\n";
  return 0;
}

}  // namespace app
