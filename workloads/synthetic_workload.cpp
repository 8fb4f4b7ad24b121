#include "workloads/synthetic_workload.h"

#include <cmath>

#include "kernels/kernel_ops.h"
#include "kernels/matmul_kernel.h"
#include "kernels/program_append.h"
#include "sim/error.h"
#include "sim/host.h"
#include "sim/output.h"
#include "sim/params.h"
#include "workloads/pod_report.h"
#include "workloads/report.h"
#include "workloads/validation.h"

namespace workloads {

namespace {

class SyntheticWorkload : public Workload {
 public:
  explicit SyntheticWorkload(SyntheticSpec s) : spec_(s) {}
  std::string kind() const override { return "synthetic"; }
  RunOutput run(const Experiment& exp, const RunOptions& opts) const override {
    return run_synthetic(exp, spec_, opts);
  }

 private:
  SyntheticSpec spec_;
};

const sim::ParamTable<SyntheticUnit>& unit_params() {
  static const sim::ParamTable<SyntheticUnit> t = [] {
    sim::ParamTable<SyntheticUnit> p("workload.synthetic.unit", "one unit of work: a BF16 matmul m x k x n");
    const sim::Range dim = sim::between(1, 1 << 16);
    p.integer<std::uint64_t>("m", &SyntheticUnit::m, "elements", 2048, dim, "rows of A")
        .integer<std::uint64_t>("k", &SyntheticUnit::k, "elements", 2048, dim, "contraction dimension")
        .integer<std::uint64_t>("n", &SyntheticUnit::n, "elements", 2048, dim, "columns of B");
    return p;
  }();
  return t;
}

}  // namespace

const sim::ParamTable<SyntheticSpec>& synthetic_params() {
  static const sim::ParamTable<SyntheticSpec> t = [] {
    sim::ParamTable<SyntheticSpec> p("workload.synthetic",
                                     "equal matmul units: a serial share on chip 0, the rest split over the chips");
    p.real("serial_fraction", &SyntheticSpec::serial_fraction, "", 0.1, sim::between(0, 1),
           "share of the units that only chip 0 runs (Amdahl's 1 - p)")
        .integer<std::uint64_t>("units", &SyntheticSpec::units, "", 1000, sim::between(1, 1000000),
                                "units of work in the whole job")
        .group("unit", &SyntheticSpec::unit, unit_params())
        .integer<std::uint64_t>("broadcast_bytes", &SyntheticSpec::broadcast_bytes, "bytes", 4096,
                                sim::between(0, 1ull << 40), "chip 0's broadcast between the parts (0: none)")
        .integer<std::uint64_t>("state_bytes", &SyntheticSpec::state_bytes, "bytes", 0, sim::at_least(0),
                                "resident job state, split evenly over the chips")
        .allow("kind");
    return p;
  }();
  return t;
}

namespace {

// Appends `count` copies of a unit's program, each waiting for the previous
// one (so they run strictly one after another); returns the last sinks.
std::vector<std::uint32_t> append_units(hw::Program& prog, const hw::Program& unit, std::uint64_t count,
                                        std::vector<std::uint32_t> after, const std::string& label) {
  for (std::uint64_t i = 0; i < count; ++i)
    after = kernels::append_program(prog, unit, after, " (" + label + " " + std::to_string(i) + ")");
  return after;
}

}  // namespace

std::uint64_t SyntheticSpec::serial_units() const {
  return static_cast<std::uint64_t>(std::llround(serial_fraction * double(units)));
}

std::uint64_t SyntheticSpec::parallel_units_on(std::uint32_t chip, std::uint32_t chips) const {
  const std::uint64_t p = parallel_units();
  return p / chips + (chip < p % chips ? 1 : 0);
}

std::unique_ptr<Workload> load_synthetic_workload(const sim::YamlNode& node, const Experiment& exp) {
  SyntheticSpec spec;
  synthetic_params().load(node, spec);
  const double serial = spec.serial_fraction * double(spec.units);
  if (std::fabs(serial - std::round(serial)) > 1e-9 * double(spec.units))
    node["serial_fraction"].fail("serial_fraction x units = " + sim::fixed(serial, 3) +
                                 " is not a whole number of units; choose units so that it is");
  if (exp.functional) node.fail("functional mode is not available for synthetic");
  return std::make_unique<SyntheticWorkload>(spec);
}

runtime::PodProgram build_synthetic_program(const Experiment& exp, const SyntheticSpec& spec) {
  const hw::ChipConfig& chip = exp.chip;
  const SyntheticUnit& u = spec.unit;
  const hw::Program unit =
      kernels::matmul_program(chip, exp.fidelity, u.m, u.k, u.n, kernels::choose_blocking(chip, u.m, u.k, u.n));
  const std::uint32_t chips = exp.pod.devices();
  const bool broadcast = chips > 1 && spec.broadcast_bytes > 0;
  runtime::PodProgram pp;
  if (broadcast) {
    interconnect::CollectiveSpec b;
    b.op = interconnect::CollectiveOp::broadcast;
    b.bytes = spec.broadcast_bytes;
    b.element_bytes = 1;
    b.root = 0;
    pp.collectives.push_back(b);
    pp.collective_names.push_back("broadcast from chip 0");
  }
  for (std::uint32_t c = 0; c < chips; ++c) {
    hw::Program prog;
    std::vector<std::uint32_t> after;
    if (c == 0) after = append_units(prog, unit, spec.serial_units(), {}, "serial");
    if (broadcast)
      after = {prog.add(hw::Op{"broadcast from chip 0", {hw::EngineKind::ici, 0}, hw::CommOp{0}, after, 0})};
    append_units(prog, unit, spec.parallel_units_on(c, chips), after, "parallel");
    pp.add_chip(std::move(prog));
  }
  return pp;
}

RunOutput run_synthetic(const Experiment& exp, const SyntheticSpec& spec, const RunOptions& opts) {
  sim::WallTimer wall;
  const hw::ChipConfig& chip = exp.chip;
  const SyntheticUnit& u = spec.unit;
  const std::uint32_t chips = exp.pod.devices();
  const kernels::MatmulPlan unit_plan =
      kernels::plan_matmul(chip, u.m, u.k, u.n, kernels::choose_blocking(chip, u.m, u.k, u.n));
  const std::uint64_t per_chip_bytes = unit_plan.hbm_footprint + (spec.state_bytes + chips - 1) / chips;
  if (per_chip_bytes > chip.hbm.capacity_bytes)
    throw sim::SimFailure(
        "does not fit: each of the " + std::to_string(chips) + " chips needs " + sim::si(double(per_chip_bytes), "B") +
            " (its share of state_bytes plus one unit's operands) but " + chip.name + " has " +
            sim::si(double(chip.hbm.capacity_bytes), "B") + " of HBM",
        {{"needed_bytes", double(per_chip_bytes)}, {"capacity_bytes", double(chip.hbm.capacity_bytes)}});

  const runtime::PodProgram pp = build_synthetic_program(exp, spec);
  const runtime::PodRunResult run = runtime::run_pod(pod_config(exp), pp, opts.trace);
  const double step = run.step_time_s;
  const double flops = unit_plan.flops * double(spec.units);
  const double peak = chip.peak_flops_per_s() * chips;

  const PodSummary sum = summarize(exp, run);
  const double comm = sum.comm_s;
  Report rep = report_for(exp);
  rep.per_chip = pod_per_chip(exp, run);
  for (std::uint32_t c = 0; c < chips; ++c) {
    rep.per_chip[c].end_s = run.end_s[c];
    rep.per_chip[c].units = (c == 0 ? spec.serial_units() : 0) + spec.parallel_units_on(c, chips);
  }
  Result& res = rep.result;
  res = pod_result(exp, sum, flops);
  Memory mem;
  mem.per_chip_bytes = per_chip_bytes;
  mem.capacity_bytes = chip.hbm.capacity_bytes;
  mem.optimizer_bytes = (spec.state_bytes + chips - 1) / chips;
  mem.activations_bytes = unit_plan.hbm_footprint;
  res.memory = mem;
  res.synthetic = SyntheticSection{spec.serial_fraction,
                                   spec.units,
                                   spec.serial_units(),
                                   spec.parallel_units(),
                                   spec.parallel_units_on(0, chips),
                                   {u.m, u.k, u.n},
                                   chips > 1 ? spec.broadcast_bytes : 0};
  rep.collectives = pod_collectives(run);
  rep.stats = run.stats;
  rep.simulator = pod_simulator(exp, wall.seconds(), run);

  sim::Table t("tpusim: " + exp.name + " (synthetic: " + std::to_string(spec.units) + " units of " +
               std::to_string(u.m) + "x" + std::to_string(u.k) + "x" + std::to_string(u.n) + " on " + pod_label(exp) +
               ")");
  t.row("serial units (chip 0)", std::to_string(spec.serial_units()),
        "serial_fraction " + sim::fixed(spec.serial_fraction, 4));
  t.row("parallel units", std::to_string(spec.parallel_units()),
        "at most " + std::to_string(spec.parallel_units_on(0, chips)) + " per chip");
  t.row("step time", sim::si(step, "s"), validation_remark(exp));
  t.row("communication (per chip)", sim::si(comm, "s"));
  t.row("MFU", sim::fixed(step > 0 ? 100.0 * flops / step / peak : 0.0, 1), "%  " + validation_remark(exp));
  t.row("wall time", sim::fixed(rep.simulator.wall_time_s, 3), "s");
  return RunOutput{to_json(rep), t.str(), run.trace_json};
}

}  // namespace workloads
