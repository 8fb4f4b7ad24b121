#include "workloads/matmul_workload.h"

#include "kernels/kernel_ops.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>

#include "hw/mxu_timing.h"
#include "hw/mxu_vcd.h"
#include "runtime/pod_run.h"
#include "runtime/run_budget.h"
#include "sim/error.h"
#include "sim/host.h"
#include "sim/kernel.h"
#include "sim/log.h"
#include "sim/output.h"
#include "workloads/pod_report.h"
#include "workloads/report.h"
#include "workloads/validation.h"

namespace workloads {

namespace {

// The deepest int8 matmul whose FP32 sums are exact: |a b| <= 128 x 128 =
// 2^14 per product, so k products sum below 2^24 (FP32's 24-bit
// significand) for k <= 2^10.
constexpr std::uint64_t kInt8ExactDepth = 1024;

class MatmulWorkload : public Workload {
 public:
  explicit MatmulWorkload(MatmulWorkloadSpec s) : spec_(s) {}
  std::string kind() const override { return "matmul"; }
  RunOutput run(const Experiment& exp, const RunOptions& opts) const override { return run_matmul(exp, spec_, opts); }

 private:
  MatmulWorkloadSpec spec_;
};

const sim::ParamTable<kernels::MatmulBlocking>& block_params() {
  static const sim::ParamTable<kernels::MatmulBlocking> t = [] {
    using kernels::MatmulBlocking;
    sim::ParamTable<MatmulBlocking> p("workload.matmul.block",
                                      "the VMEM blocking, forced (give all of bm, bk, bn, or leave block out)");
    const sim::Range edge = sim::at_least(1);
    p.integer<std::uint64_t>("bm", &MatmulBlocking::bm, "elements", std::nullopt, edge, "rows of an A and C block")
        .integer<std::uint64_t>("bk", &MatmulBlocking::bk, "elements", std::nullopt, edge, "depth of an A and B block")
        .integer<std::uint64_t>("bn", &MatmulBlocking::bn, "elements", std::nullopt, edge,
                                "columns of a B and C block");
    return p;
  }();
  return t;
}

}  // namespace

const sim::ParamTable<MatmulWorkloadSpec>& matmul_params() {
  static const sim::ParamTable<MatmulWorkloadSpec> t = [] {
    sim::ParamTable<MatmulWorkloadSpec> p("workload.matmul",
                                          "C = A (m x k) x B (k x n), A, B and C in `dtype`, accumulated in FP32 "
                                          "(int32 for int8)");
    const sim::Range dim = sim::between(1, 1 << 20);
    p.integer<std::uint64_t>("m", &MatmulWorkloadSpec::m, "elements", std::nullopt, dim, "rows of A and C")
        .integer<std::uint64_t>("k", &MatmulWorkloadSpec::k, "elements", std::nullopt, dim, "contraction dimension")
        .integer<std::uint64_t>("n", &MatmulWorkloadSpec::n, "elements", std::nullopt, dim, "columns of B and C")
        .enumeration("dtype", &MatmulWorkloadSpec::dtype, hw::number_format_names(), hw::NumberFormat::bf16,
                     "number format of A, B and C: its bytes in HBM and VMEM, and the MXU rate the chip file "
                     "gives it (chip.formats); a format the chip lacks is refused (docs/calibration.md#number-formats)")
        .optional_group("block", &MatmulWorkloadSpec::blocking, block_params(), "chosen by the kernel")
        .integer<std::uint64_t>("seed", &MatmulWorkloadSpec::seed, "", 1, sim::at_least(0),
                                "random operands of functional runs")
        .real("host_dispatch", &MatmulWorkloadSpec::host_dispatch, "s", 0.0, sim::between(0, 1),
              "host time on the timed path of each call, added in series to the chip's time, for a measurement "
              "timed from the host (Python dispatch and the host round trip; docs/matmul.md#host-dispatch); 0: the "
              "chip's time alone")
        .real("host_overlap", &MatmulWorkloadSpec::host_overlap, "s", 0.0, sim::between(0, 1),
              "host time of each call that runs while the chip computes (JAX's asynchronous dispatch returns "
              "before the kernel ends): the call takes host_dispatch + max(the chip's time, host_overlap), so "
              "only a kernel shorter than it waits for the host (docs/matmul.md#host-dispatch); 0: none")
        .real("block_epilogue", &MatmulWorkloadSpec::block_epilogue, "s", 0.0, sim::between(0, 1e-3),
              "time per output block of a kernel whose grid `block` fixes (a Pallas kernel), in series with the "
              "chip's time: the accumulator's cast and store and the block's writeback before the next block "
              "(docs/matmul.md#block-epilogue); not paid by a blocking tpusim chooses; 0: none")
        .allow("kind");
    return p;
  }();
  return t;
}

namespace {

// Host reference: double-precision GEMM of the BF16 values, and the FP32
// accumulation error bound gamma_k * sum |a||b| (Higham, Accuracy and
// Stability of Numerical Algorithms, eq. 3.5) for each output.
FunctionalCheck check_against_host(const std::vector<hw::bf16>& a, const std::vector<hw::bf16>& b,
                                   const std::vector<float>& y, std::uint64_t m, std::uint64_t k, std::uint64_t n) {
  FunctionalCheck c;
  c.matches_reference = true;
  c.max_abs_error = 0.0;
  const double u = std::ldexp(1.0, -24);
  const double gamma = (double(k) + 1) * u / (1 - (double(k) + 1) * u);
  std::vector<double> exact(n), mag(n);
  for (std::uint64_t i = 0; i < m; ++i) {
    std::fill(exact.begin(), exact.end(), 0.0);
    std::fill(mag.begin(), mag.end(), 0.0);
    for (std::uint64_t p = 0; p < k; ++p) {
      const double av = a[i * k + p].to_float();
      for (std::uint64_t j = 0; j < n; ++j) {
        const double prod = av * double(b[p * n + j].to_float());
        exact[j] += prod;
        mag[j] += std::fabs(prod);
      }
    }
    for (std::uint64_t j = 0; j < n; ++j) {
      const double err = std::fabs(double(y[i * n + j]) - exact[j]);
      c.max_abs_error = std::max(*c.max_abs_error, err);
      if (err > gamma * mag[j]) c.matches_reference = false;
    }
  }
  return c;
}

// int8 operands as the MXU's int8 path takes them: int32 products summed in
// int32. The host reference sums the same integer products exactly (64 bits)
// and every output must equal it. The simulated datapath multiplies the int8
// values as bf16 (exact: 8 significant bits) and adds in FP32, which equals
// int32 accumulation while every partial sum stays below 2^24 in magnitude
// (kInt8ExactDepth, checked when the experiment loads).
FunctionalCheck check_int8_against_host(const std::vector<hw::bf16>& a, const std::vector<hw::bf16>& b,
                                        const std::vector<float>& y, std::uint64_t m, std::uint64_t k,
                                        std::uint64_t n) {
  FunctionalCheck c;
  c.matches_reference = true;
  c.max_abs_error = 0.0;
  std::uint64_t mismatches = 0;
  std::vector<std::int64_t> exact(n);
  for (std::uint64_t i = 0; i < m; ++i) {
    std::fill(exact.begin(), exact.end(), 0);
    for (std::uint64_t p = 0; p < k; ++p) {
      const auto av = static_cast<std::int64_t>(a[i * k + p].to_float());
      for (std::uint64_t j = 0; j < n; ++j) exact[j] += av * static_cast<std::int64_t>(b[p * n + j].to_float());
    }
    for (std::uint64_t j = 0; j < n; ++j) {
      const double err = std::fabs(double(y[i * n + j]) - double(exact[j]));
      c.max_abs_error = std::max(*c.max_abs_error, err);
      if (err != 0.0 && mismatches++ == 0)
        c.first_mismatch = "C[" + std::to_string(i) + "][" + std::to_string(j) + "] = " + sim::g3(y[i * n + j], "") +
                           ", int32 reference " + std::to_string(exact[j]);
    }
  }
  c.matches_reference = mismatches == 0;
  c.mismatches = mismatches;
  return c;
}

// --vcd: MXU 0 of chip 0 dumps every cycle of its ops into OUT/mxu.vcd.
// Checked before the run: it needs pe fidelity and a small enough array and
// op list (the closed form gives each op's cycles without running it).
void check_mxu_vcd(const Experiment& exp, const hw::Program& program) {
  if (exp.fidelity != hw::Fidelity::pe)
    throw sim::ConfigError(
        {"command line"}, "--vcd",
        "mxu.vcd shows the PE array cycle by cycle, which needs fidelity: pe (add --set fidelity=pe)");
  if (exp.chip.mxu.dataflow == hw::MxuDataflow::os)
    throw sim::ConfigError({"command line"}, "--vcd",
                           "mxu.vcd draws the PEs' weight registers, which an output-stationary array "
                           "(mxu.dataflow: os) does not have; use ws or is");
  std::uint64_t cycles = 0, ops = 0;
  for (const hw::Op& op : program.ops) {
    if (op.engine.kind != hw::EngineKind::mxu || op.engine.index != 0) continue;
    const auto& mm = std::get<hw::MatmulOp>(op.payload);
    cycles += hw::mxu_tile_cycles(exp.chip.mxu, {mm.m, mm.k, mm.n});
    ++ops;
  }
  try {
    hw::check_mxu_vcd_size(exp.chip.mxu, cycles, "MXU 0's " + std::to_string(ops) + " ops");
  } catch (const sim::ConfigError& e) {
    throw e.at({"command line"}, "--vcd");
  }
}

// The file, in the kernel of the run (made when the run has built chip 0).
std::unique_ptr<hw::MxuVcd> open_mxu_vcd(const Experiment& exp, const std::string& path) {
  std::error_code ignored;  // an unusable directory is reported by MxuVcd, naming the file
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ignored);
  try {
    return std::make_unique<hw::MxuVcd>(path, exp.chip.mxu);
  } catch (const sim::ConfigError& e) {
    throw e.at({"command line"}, "--vcd");
  }
}

}  // namespace

std::unique_ptr<Workload> load_matmul_workload(const sim::YamlNode& node, const Experiment& exp) {
  MatmulWorkloadSpec spec;
  matmul_params().load(node, spec);

  const hw::ChipConfig& chip = exp.chip;
  if (spec.dtype != hw::NumberFormat::bf16) {
    const sim::YamlNode dtype = node["dtype"];
    const std::string f = hw::to_string(spec.dtype);
    check_chip_format(dtype, chip, spec.dtype);
    if (exp.functional && spec.dtype == hw::NumberFormat::fp8)
      dtype.fail(
          "functional runs compute bf16 and int8 values; fp8's rounding is not modelled, so fp8 matmuls are timed "
          "only (functional: false)");
    if (exp.functional && spec.k > kInt8ExactDepth)
      node["k"].fail(
          "an int8 functional run is exact (int32 accumulation) while every partial sum stays below 2^24 "
          "in the FP32 datapath: k <= " +
          std::to_string(kInt8ExactDepth) + " (got " + std::to_string(spec.k) + ")");
  }
  spec.blocking.element_bytes = spec.blocking.b_element_bytes = hw::element_bytes(spec.dtype);
  const sim::YamlNode block = node["block"];
  if (block.present()) {
    if (spec.blocking.vmem_bytes() > chip.vmem)
      block.fail("blocks need " + std::to_string(spec.blocking.vmem_bytes()) + " bytes of VMEM per core but " +
                 chip.name + " has " + std::to_string(chip.vmem));
  }
  if (exp.functional && double(spec.m) * double(spec.k) * double(spec.n) > 1.1e10)
    node.fail("functional mode checks every value against a host GEMM; keep m*k*n <= 1.1e10 (got " +
              sim::fixed(double(spec.m) * double(spec.k) * double(spec.n), 0) + ")");
  if (exp.pod.chips() != 1)
    node.fail("kind: matmul runs on one chip (on one device of a chip of several); use kind: sharded_matmul for a pod");
  return std::make_unique<MatmulWorkload>(spec);
}

namespace {

// run_matmul's steps: choose and check the blocking, make the functional
// operands, simulate the program on one chip, measure the run, and write the
// result and the table.

// The blocking given, or the kernel's choice, in the format's element size;
// a SimFailure when no blocking fits VMEM or A, B and C do not fit HBM.
kernels::MatmulBlocking checked_blocking(const hw::ChipConfig& chip, const MatmulWorkloadSpec& spec) {
  // A, B and C in the format (C as jnp.matmul returns two such operands' product).
  const std::uint64_t eb = hw::element_bytes(spec.dtype);
  kernels::MatmulBlocking blocking =
      spec.blocking.bm ? spec.blocking : kernels::choose_blocking(chip, spec.m, spec.k, spec.n, {}, {eb, eb, eb});
  blocking.element_bytes = blocking.b_element_bytes = blocking.out_element_bytes = eb;
  if (blocking.bm == 0)
    throw sim::SimFailure("no blocking of " + std::to_string(spec.m) + "x" + std::to_string(spec.k) + "x" +
                          std::to_string(spec.n) + " fits the " + std::to_string(chip.vmem) +
                          " bytes of VMEM per core");
  // Checked again before planning: the plan of a matmul far too large for
  // HBM would take minutes and gigabytes to build (kernels::plan_matmul's footprint).
  const double footprint = double(eb) * (double(spec.m) * double(spec.k) + double(spec.k) * double(spec.n) +
                                         double(spec.m) * double(spec.n));
  if (footprint > double(chip.hbm.capacity_bytes))
    throw sim::SimFailure("does not fit: A, B and C need " + sim::si(footprint, "B") + " of HBM but " + chip.name +
                              " has " + sim::si(double(chip.hbm.capacity_bytes), "B"),
                          {{"needed_bytes", footprint}, {"capacity_bytes", double(chip.hbm.capacity_bytes)}});
  return blocking;
}

// A functional run's values: random A and B from the spec's seed (integers
// for int8), C zeroed; empty for a timing run.
struct Operands {
  std::vector<hw::bf16> a, b;
  std::vector<float> y;
  kernels::MatmulData data() {
    return a.empty() ? kernels::MatmulData{} : kernels::MatmulData{a.data(), b.data(), y.data()};
  }
};

Operands random_operands(const Experiment& exp, const MatmulWorkloadSpec& spec) {
  Operands o;
  if (!exp.functional) return o;
  // The values and the host reference's two rows (runtime/run_budget.h).
  runtime::MemoryEstimate memory;
  memory.add("functional A, B and C", runtime::pe_operand_bytes({spec.m, spec.k, spec.n}) + 16.0 * spec.n);
  runtime::check_memory(exp.limits, memory, "the functional matmul");
  std::mt19937_64 rng(spec.seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::uniform_int_distribution<int> int8(-128, 127);
  const bool integers = spec.dtype == hw::NumberFormat::int8;
  o.a.resize(spec.m * spec.k);
  o.b.resize(spec.k * spec.n);
  for (auto& v : o.a) v = hw::bf16::from_float(integers ? float(int8(rng)) : dist(rng));
  for (auto& v : o.b) v = hw::bf16::from_float(integers ? float(int8(rng)) : dist(rng));
  o.y.assign(spec.m * spec.n, 0.0f);
  return o;
}

// Runs the program on one device of `chip`, MXU 0 dumping its cycles into
// mxu.vcd when asked.
runtime::PodRunResult simulate(const Experiment& exp, const hw::ChipConfig& chip, const runtime::PodProgram& pp,
                               const RunOptions& opts) {
  if (opts.vcd) check_mxu_vcd(exp, pp.chip(0));
  std::unique_ptr<hw::MxuVcd> vcd;
  runtime::Observers watch;
  if (opts.vcd)
    watch.chip0 = [&](hw::Chip& chip0) {
      vcd = open_mxu_vcd(exp, opts.vcd_path);
      chip0.mxus().at(0)->set_cycle_hook(vcd.get());
    };
  runtime::PodConfig config = one_device_config(exp);
  config.chip = chip;
  runtime::PodRunResult run = runtime::run_pod(config, pp, opts.trace, watch);
  vcd.reset();  // closes mxu.vcd
  return run;
}

// The output blocks' epilogues of a kernel whose grid the workload fixes
// (docs/matmul.md#block-epilogue): one per block of C, ceil(m / bm) x
// ceil(n / bn), each in series with the pipeline.
double epilogue_time(const MatmulWorkloadSpec& spec) {
  if (spec.blocking.bm == 0 || spec.block_epilogue <= 0) return 0;
  const auto blocks = [](std::uint64_t d, std::uint64_t b) { return double((d + b - 1) / b); };
  return blocks(spec.m, spec.blocking.bm) * blocks(spec.n, spec.blocking.bn) * spec.block_epilogue;
}

// What the run measured on its chip.
struct Measured {
  double step = 0, flops = 0, hbm_bytes = 0, vmem_bytes = 0, macs = 0, cycles = 0;
  double mxu_busy_fraction = 0, hbm_busy_fraction = 0;
};

Measured measure(const hw::ChipConfig& chip, const MatmulWorkloadSpec& spec, const runtime::PodRunResult& run) {
  const sim::StatGroup& stats = run.chip_stats(0);
  Measured m;
  // A call timed from the host also waits for the host: its dispatch in
  // series, and the host work after the dispatch returned in parallel with
  // the chip's (docs/matmul.md#host-dispatch).
  m.step = spec.host_dispatch + std::max(run.step_time_s + epilogue_time(spec), spec.host_overlap);
  m.flops = 2.0 * double(spec.m) * double(spec.k) * double(spec.n);
  m.hbm_bytes = stats.value("hbm_bytes");
  m.vmem_bytes = stats.value("vmem_bytes");
  for (std::uint32_t x = 0; x < chip.mxus(); ++x) m.macs += stats.value("mxu" + std::to_string(x) + ".macs");
  m.cycles = std::round(m.step * chip.clock);
  m.mxu_busy_fraction = m.step > 0 ? stats.value("mxu_busy_time_max") / m.step : 0;
  m.hbm_busy_fraction = m.step > 0 ? m.hbm_bytes / (chip.hbm.bandwidth_bytes_per_s * m.step) : 0;
  return m;
}

// report.json's result (on what report_for filled in): the roofline, energy
// and footprint of the run, its kernel's blocking, and the functional check
// against the host.
void fill_result(Result& res, const Experiment& exp, const hw::ChipConfig& chip, const MatmulWorkloadSpec& spec,
                 const kernels::MatmulBlocking& blocking, const runtime::PodProgram& pp, const Measured& m,
                 const Operands& o) {
  const double peak = chip.peak_flops_per_s();
  const double cells = double(chip.mxu.rows) * chip.mxu.cols * chip.mxus();
  const std::uint64_t footprint_bytes =
      hw::element_bytes(spec.dtype) * (spec.m * spec.k + spec.k * spec.n + spec.m * spec.n);
  res.step_time_s = m.step;
  res.cycles = m.cycles;
  res.flops = m.flops;
  res.hbm_bytes = m.hbm_bytes;
  res.arithmetic_intensity = m.hbm_bytes > 0 ? m.flops / m.hbm_bytes : 0;
  res.achieved_flops_per_s = m.step > 0 ? m.flops / m.step : 0;
  res.mfu = m.step > 0 ? m.flops / m.step / peak : 0;
  res.mxu_utilization = m.cycles > 0 ? m.macs / (cells * m.cycles) : 0;
  res.roofline = make_roofline(chip, m.flops, m.hbm_bytes, m.mxu_busy_fraction, m.hbm_busy_fraction, 0.0);
  Energy energy;
  add_chip_energy(energy, chip, m.macs, m.vmem_bytes, m.hbm_bytes);
  energy.set_step(m.step);
  res.energy = energy;
  Memory mem;
  mem.per_chip_bytes = footprint_bytes;
  mem.capacity_bytes = chip.hbm.capacity_bytes;
  mem.activations_bytes = footprint_bytes;
  res.memory = mem;
  res.kernel = KernelSection{spec.m,
                             spec.k,
                             spec.n,
                             blocking.bm,
                             blocking.bk,
                             blocking.bn,
                             blocking.buffers,
                             blocking.accumulators,
                             blocking.vmem_bytes(),
                             chip.vmem,
                             pp.chip(0).ops.size(),
                             kernels::matmul_traffic(spec.m, spec.k, spec.n, blocking).total()};
  if (exp.functional) {
    res.functional = spec.dtype == hw::NumberFormat::int8
                         ? check_int8_against_host(o.a, o.b, o.y, spec.m, spec.k, spec.n)
                         : check_against_host(o.a, o.b, o.y, spec.m, spec.k, spec.n);
  }
}

std::string matmul_table(const Experiment& exp, const hw::ChipConfig& chip, const MatmulWorkloadSpec& spec,
                         const kernels::MatmulBlocking& blocking, const Measured& m, const Report& rep,
                         const RunOptions& opts) {
  const double peak = chip.peak_flops_per_s();
  const double step = m.step, flops = m.flops, hbm_bytes = m.hbm_bytes;
  sim::Table t("tpusim: " + exp.name + " (matmul " + std::to_string(spec.m) + "x" + std::to_string(spec.k) + "x" +
               std::to_string(spec.n) + " on " + chip.name + ")");
  t.row("step time", sim::si(step, "s"), validation_remark(exp));
  if (spec.host_dispatch > 0)
    t.row("of which host dispatch", sim::si(spec.host_dispatch, "s"), "(workload.host_dispatch)");
  if (epilogue_time(spec) > 0 && m.step - spec.host_dispatch > spec.host_overlap)  // else the host ends the call
    t.row("of which output blocks' epilogues", sim::si(epilogue_time(spec), "s"), "(workload.block_epilogue)");
  if (spec.host_overlap > 0 && m.step - spec.host_dispatch <= spec.host_overlap)
    t.row("chip waits for the host", sim::si(spec.host_overlap, "s"),
          "(workload.host_overlap: the kernel is shorter than the host's work beside it)");
  t.row("cycles", sim::fixed(m.cycles, 0), "@ " + sim::si(chip.clock, "Hz"));
  t.row("FLOPs", sim::si(flops, "FLOP"));
  t.row("HBM traffic", sim::si(hbm_bytes, "B"));
  t.row("arithmetic intensity", sim::fixed(hbm_bytes > 0 ? flops / hbm_bytes : 0, 1), "FLOP/B");
  t.row("ridge intensity", sim::fixed(peak / chip.hbm.bandwidth_bytes_per_s, 1), "FLOP/B");
  verdict_rows(t, rep.result.roofline);
  t.row("achieved", sim::si(flops / step, "FLOP/s"), "of " + sim::si(peak, "FLOP/s") + " peak");
  t.row("MFU", sim::fixed(100.0 * flops / step / peak, 1), "%  " + validation_remark(exp));
  t.row("blocking bm x bk x bn",
        std::to_string(blocking.bm) + " x " + std::to_string(blocking.bk) + " x " + std::to_string(blocking.bn));
  if (exp.functional) {
    // The largest |simulated - reference| is the number a student compares
    // with BF16's rounding (docs/tutorial/01-mxu.md#bf16-in-fp32-out).
    const auto& check = std::get<FunctionalCheck>(rep.result.functional);
    t.row("functional check", check.matches_reference ? "matches reference" : "MISMATCH",
          check.max_abs_error ? "max |error| " + sim::g3(*check.max_abs_error, "against a double-precision GEMM") : "");
  }
  if (opts.vcd) t.row("VCD (MXU 0)", (std::filesystem::path(opts.out_dir) / "mxu.vcd").string());
  t.row("wall time", sim::fixed(rep.simulator.wall_time_s, 3), "s");
  return t.str();
}

}  // namespace

RunOutput run_matmul(const Experiment& exp, const MatmulWorkloadSpec& spec, const RunOptions& opts) {
  sim::WallTimer wall;
  // The chip as this format sees it (its MXU rate); bf16 is the chip itself.
  const hw::ChipConfig chip = exp.chip.for_format(spec.dtype);
  const kernels::MatmulBlocking blocking = checked_blocking(chip, spec);
  Operands operands = random_operands(exp, spec);
  runtime::PodProgram pp;
  pp.add_chip(kernels::matmul_program(chip, exp.fidelity, spec.m, spec.k, spec.n, blocking, operands.data()));
  spdlog::debug(
      "matmul {}x{}x{} on {}: blocks {}x{}x{}, {} buffers, {} accumulators, {} ops, {} B of HBM traffic planned",
      spec.m, spec.k, spec.n, chip.name, blocking.bm, blocking.bk, blocking.bn, blocking.buffers, blocking.accumulators,
      pp.chip(0).ops.size(), kernels::matmul_traffic(spec.m, spec.k, spec.n, blocking).total());
  const runtime::PodRunResult run = simulate(exp, chip, pp, opts);
  const Measured measured = measure(chip, spec, run);

  Report rep = report_for(exp);
  fill_result(rep.result, exp, chip, spec, blocking, pp, measured, operands);
  rep.per_chip = pod_per_chip(exp, run);
  rep.collectives = pod_collectives(run);
  rep.stats = run.stats;
  rep.simulator = pod_simulator(exp, wall.seconds(), run);
  return RunOutput{to_json(rep), matmul_table(exp, chip, spec, blocking, measured, rep, opts), run.trace_json};
}

}  // namespace workloads
