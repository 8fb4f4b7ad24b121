// `tpusim plan PLAN.yaml` (or the common case from flags: `tpusim plan
// --model llama3.1-70b --chip tpu-v6e --chips 256 --batch 1024 --seq 8192`):
// finds the fastest mesh, remat policy and microbatch count for a model on
// a slice, simulating the candidates a lower bound cannot rule out, and
// says why every other one lost (docs/plan.md).
#include <boost/program_options.hpp>

#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include "app/cli.h"
#include "app/command_line.h"
#include "plan/outputs.h"
#include "plan/search.h"
#include "plan/spec.h"
#include "sim/output.h"
#include "sweep/mpi.h"
#include "sweep/plot.h"
#include "sweep/process.h"
#include "sweep/runner.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace app {

namespace {

struct PlanOptions {
  std::string plan_path, out_dir, model, chip, remat, axes, name;
  std::uint32_t chips = 0, slices = 0, top = 0;
  std::uint64_t batch = 0, tokens = 0, seq = 0;
  int jobs = 0;
  bool exhaustive = false, plot = true;
};

PlanOptions parse_plan_options(const std::vector<std::string>& args, bool& help) {
  po::options_description opts("tpusim plan PLAN.yaml | tpusim plan --model M --chip C --chips N --batch B --seq T");
  PlanOptions o;
  opts.add_options()("help,h", "this text")("out", po::value(&o.out_dir), "output directory (default runs/<name>/)")(
      "jobs,j", po::value(&o.jobs), "candidates simulated at once (default: every core; under mpirun, per rank)")(
      "exhaustive", po::bool_switch(&o.exhaustive), "simulate every candidate that fits (no bound pruning)")(
      "no-plot", po::bool_switch(), "do not draw plan.png")("model", po::value(&o.model),
                                                            "a MaxText model_name (configs/maxtext/models/)")(
      "chip", po::value(&o.chip), "the chip (configs/chips/)")("chips", po::value(&o.chips), "chips in the slice")(
      "slices", po::value(&o.slices), "slices of --chips over DCN (default 1)")(
      "batch", po::value(&o.batch), "global batch, sequences per step")("tokens", po::value(&o.tokens),
                                                                        "tokens per step, instead of --batch")(
      "seq", po::value(&o.seq), "tokens per sequence")("remat", po::value(&o.remat),
                                                       "remat policies to try, comma-separated")(
      "axes", po::value(&o.axes), "parallelisms to consider, comma-separated (data,fsdp,tensor,...)")(
      "top", po::value(&o.top), "best candidates written as best-<k>.yaml (default 3)")(
      "name", po::value(&o.name), "the plan's name (default: the model, chip and chips)")(
      "plan", po::value(&o.plan_path), "plan file");
  po::positional_options_description pos;
  pos.add("plan", 1);
  po::variables_map vm;
  help = !parse_command_line(args, opts, pos, vm);
  if (help) return o;
  if (vm.count("jobs") && o.jobs < 1) throw UsageError("-j: expected a number of processes >= 1");
  const bool flags = !o.model.empty() || !o.chip.empty() || o.chips || o.batch || o.tokens || o.seq;
  if (o.plan_path.empty() && !flags)
    throw UsageError("plan needs a plan file, or --model, --chip, --chips, --batch and --seq");
  if (!o.plan_path.empty() && flags) throw UsageError("give a plan file or the flags --model ..., not both");
  o.plot = !vm["no-plot"].as<bool>();
  return o;
}

// The flags as a plan file's text, read by the same table.
std::string plan_text(const PlanOptions& o) {
  std::string t;
  const std::string name = o.name.empty() ? o.model + "-" + o.chip + "-" + std::to_string(o.chips) : o.name;
  t += "name: \"" + name + "\"\n";
  if (!o.model.empty()) t += "model: \"" + o.model + "\"\n";
  if (!o.chip.empty()) t += "chip: \"" + o.chip + "\"\n";
  if (o.chips) t += "chips: " + std::to_string(o.chips) + "\n";
  if (o.slices) t += "slices: " + std::to_string(o.slices) + "\n";
  if (o.batch) t += "global_batch: " + std::to_string(o.batch) + "\n";
  if (o.tokens) t += "tokens: " + std::to_string(o.tokens) + "\n";
  if (o.seq) t += "seq_len: " + std::to_string(o.seq) + "\n";
  if (!o.remat.empty()) t += "remat: [" + o.remat + "]\n";
  if (!o.axes.empty()) t += "axes: [" + o.axes + "]\n";
  if (o.top) t += "top: " + std::to_string(o.top) + "\n";
  if (o.exhaustive) t += "exhaustive: true\n";
  return t;
}

}  // namespace

int cmd_plan(const std::vector<std::string>& args) {
  bool help = false;
  const PlanOptions o = parse_plan_options(args, help);
  if (help) return 0;
  plan::PlanSpec spec =
      o.plan_path.empty() ? plan::load_plan_text(plan_text(o), "command line") : plan::load_plan_file(o.plan_path);
  if (o.exhaustive) spec.exhaustive = true;
  const std::string out_dir = o.out_dir.empty() ? (fs::path("runs") / spec.name).string() : o.out_dir;
  const std::string flag = o.out_dir.empty() ? "output folder" : "--out";
  prepare_output_dir(out_dir, {"plan.csv", "plan.json", "plan.png"}, flag);
  // Under mpirun every rank enumerates the same candidates and simulates
  // its share; rank 0 alone holds the folder and writes the plan.
  std::unique_ptr<sweep::MpiSweep> mpi;
  if (sweep::launched_by_mpirun()) {
    if (!sweep::mpi_available())
      throw UsageError("started by mpirun, but this tpusim was built without MPI (scripts/setup, then rebuild)");
    mpi = std::make_unique<sweep::MpiSweep>();
  }
  const bool root = !mpi || mpi->rank() == 0;
  std::optional<OutputLock> lock;
  if (root) lock.emplace(out_dir, flag);
  if (root) sim::remove_stale_temps(out_dir);
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int jobs = o.jobs > 0 ? o.jobs : std::max(1, cores / (mpi ? mpi->ranks_on_this_node() : 1));
  sweep::install_interrupt_handlers();
  const plan::PlanResult result = plan::run_plan(spec, {out_dir, sweep::self_executable(), jobs, mpi.get()});
  if (sweep::interrupted()) {
    if (root) std::cerr << "plan: interrupted; nothing written\n";
    return 130;
  }
  if (!root) return 0;
  plan::write_plan_outputs(out_dir, result,
                           {{"wall_time_s", result.wall_time_s},
                            {"jobs", jobs},
                            {"mpi_ranks", mpi ? mpi->size() : 1},
                            {"processes", result.processes}});
  std::cout << plan::plan_table(result, 20);
  if (o.plot) {
    const sweep::PlotResult p = sweep::draw_plot(out_dir, "plot_plan", "plan.png", "plan.json");
    std::cout << "\n  " << (p.drawn ? "memory per chip vs step time: " + p.path : p.note) << "\n";
  }
  std::cout << "  " << result.set.candidates.size() << " candidates considered, " << result.processes
            << " simulated, wall " << sim::fixed(result.wall_time_s, 1) << " s; " << out_dir << "/plan.csv, plan.json";
  if (!result.ranking.empty()) std::cout << ", best-1.yaml";
  std::cout << "\n";
  if (result.ranking.empty()) {
    std::cerr << "simulation failed: no candidate fits and runs (plan.csv says why each lost)\n";
    return 3;
  }
  return 0;
}

}  // namespace app
