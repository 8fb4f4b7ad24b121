// tpusim: a cycle-level simulator of TPU pods. Dispatches subcommands and
// maps every failure to its exit status, so bad input never crashes.
#include <boost/program_options.hpp>
#include <systemc>

#include <cstdlib>
#include <iostream>

#include "app/cli.h"
#include "sim/error.h"
#include "sim/log.h"

namespace po = boost::program_options;

namespace {

const char* kUsage =
    "usage: tpusim [-v | --log-level LEVEL] COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  run EXPERIMENT.yaml [--out DIR] [--set KEY.PATH=VALUE]... [--trace] [--vcd]\n"
    "                          simulate an experiment; writes DIR/report.json\n"
    "  sweep SWEEP.yaml [--out DIR] [-j N] [--resume] [--dry-run] [--no-plot]\n"
    "                          run an experiment at many points (chips, batch, ...) as\n"
    "                          parallel processes (or under mpirun); writes sweep.csv,\n"
    "                          summary.json (speedup, Amdahl fit) and its pictures\n"
    "  plan PLAN.yaml [--out DIR] [-j N] [--exhaustive] [--no-plot]\n"
    "  plan --model M --chip C --chips N --batch B --seq T [--out DIR] [-j N]\n"
    "                          find the fastest mesh, remat and microbatches for a model on a\n"
    "                          slice: ranked plan.csv, plan.json, best-<k>.yaml, plan.png\n"
    "  maxtext --chip C (--pod AxB | --chips N) [--slices N] [--out DIR] WORD...\n"
    "                          a pasted MaxText launch (model_name=... key=value ...,\n"
    "                          LIBTPU_INIT_ARGS=...) run as kind: maxtext; writes experiment.yaml\n"
    "  validate FILE.yaml      check a chip, pod or experiment file; run nothing\n"
    "  compare A B [--json] [--html FILE]\n"
    "                          two runs (folders or report.json files) side by side: step time,\n"
    "                          phases, exposed communication, memory, busy fractions, what moved most\n"
    "  scalesim CONFIG.cfg TOPOLOGY.csv [--out DIR] [--fidelity tile|pe]\n"
    "                          SCALE-Sim v2 inputs (config, convolution or GEMM topology) on a\n"
    "                          fold-serial array; writes COMPUTE_REPORT.csv, BANDWIDTH_REPORT.csv,\n"
    "                          ACCESS_REPORT.csv and report.json\n"
    "  explain mxu [--rows R --cols C --m M --k K --n N] [--fidelity tile|pe]\n"
    "              [--schedule overlapped|fold_serial] [--dataflow ws|os|is] [--json]\n"
    "                          one MXU op, cycle count and utilization\n"
    "  explain mxu --walk [--play SECONDS | --no-pager] [--vcd FILE.vcd] --rows 4 --cols 4 ...\n"
    "                          the systolic array cycle by cycle (pe fidelity, up to 16x16);\n"
    "                          --vcd writes every PE's signals for GTKWave\n"
    "  explain chip            the keys of a chip file: units, defaults, ranges\n"
    "  explain chip --diff A B two chips side by side, the keys that differ marked\n"
    "  explain experiment | pod | sweep | KIND\n"
    "                          the keys of an experiment, a pod, a sweep file or a workload\n"
    "                          kind (tpusim explain --help lists the kinds)\n"
    "\n"
    "options:\n"
    "  -h, --help              this text (COMMAND --help for a command's options)\n"
    "  --version               print the version\n"
    "  -v                      verbose logging (same as --log-level debug)\n"
    "  --log-level LEVEL       trace, debug, info (default: progress of long runs), warn, error, off\n"
    "\n"
    "exit status: 0 ok, 1 internal error, 2 bad input, 3 the simulated system fails\n";

int dispatch(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string level = "info";
  std::size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      return 0;
    }
    if (a == "--version") {
      std::cout << "tpusim " << TPUSIM_VERSION << " (SystemC " << sc_core::sc_release() << ")\n";
      return 0;
    }
    if (a == "-v") {
      level = "debug";
    } else if (a == "--log-level") {
      if (i + 1 >= args.size()) throw app::UsageError("--log-level needs a value");
      level = args[++i];
    } else if (a.rfind("--log-level=", 0) == 0) {
      level = a.substr(12);
    } else {
      break;
    }
  }
  try {
    sim::init_logging(level);
  } catch (const std::invalid_argument& e) {
    throw app::UsageError(e.what());
  }
  if (i >= args.size()) throw app::UsageError("no command given");
  const std::string cmd = args[i];
  std::vector<std::string> rest(args.begin() + static_cast<long>(i) + 1, args.end());
  if (cmd == "run") return app::cmd_run(rest);
  if (cmd == "sweep") return app::cmd_sweep(rest);
  if (cmd == "plan") return app::cmd_plan(rest);
  if (cmd == "validate") return app::cmd_validate(rest);
  if (cmd == "explain") return app::cmd_explain(rest);
  if (cmd == "scalesim") return app::cmd_scalesim(rest);
  if (cmd == "compare") return app::cmd_compare(rest);
  if (cmd == "maxtext") return app::cmd_maxtext(rest);
  throw app::UsageError("unknown command '" + cmd + "'");
}

}  // namespace

extern "C" int sc_main(int, char**) { return 0; }  // libsystemc.so needs one; main() is ours

int main(int argc, char** argv) {
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1);
  try {
    return dispatch(argc, argv);
  } catch (const app::UsageError& e) {
    std::cerr << "tpusim: " << e.what() << "\n\n" << kUsage;
    return 2;
  } catch (const po::error& e) {
    std::cerr << "tpusim: " << e.what() << " (see --help)\n";
    return 2;
  } catch (const sim::ConfigError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const sim::SimFailure& e) {
    std::cerr << "simulation failed: " << e.what() << "\n";
    return 3;
  } catch (const sc_core::sc_report& e) {
    std::cerr << "internal error: SystemC: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return 1;
  } catch (...) {
    std::cerr << "internal error: unknown exception\n";
    return 1;
  }
}
