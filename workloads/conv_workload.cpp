#include "workloads/conv_workload.h"

#include <cmath>

#include "kernels/kernel_ops.h"
#include "kernels/matmul_kernel.h"
#include "kernels/program_append.h"
#include "runtime/pod_run.h"
#include "sim/error.h"
#include "sim/host.h"
#include "sim/output.h"
#include "workloads/pod_report.h"
#include "workloads/report.h"
#include "workloads/validation.h"

namespace workloads {

namespace {

class ConvWorkload : public Workload {
 public:
  explicit ConvWorkload(ConvWorkloadSpec s) : spec_(std::move(s)) {}
  std::string kind() const override { return "conv"; }
  RunOutput run(const Experiment& exp, const RunOptions& opts) const override { return run_conv(exp, spec_, opts); }

 private:
  ConvWorkloadSpec spec_;
};

// Sizes up to 2^20, as kind: matmul's dimensions.
const sim::Range kSize = sim::between(1, 1 << 20);

const sim::ParamTable<models::ConvLayer>& layer_params() {
  static const sim::ParamTable<models::ConvLayer> t = [] {
    using L = models::ConvLayer;
    sim::ParamTable<L> p("workload.conv.layers[]", "one convolution layer (no padding): SCALE-Sim's topology columns");
    p.text("name", &L::name, "", "names the layer in the report")
        .informational("names the layer in the report")
        .integer<std::uint64_t>("ifmap_height", &L::ifmap_h, "pixels", std::nullopt, kSize, "input height H")
        .integer<std::uint64_t>("ifmap_width", &L::ifmap_w, "pixels", std::nullopt, kSize, "input width W")
        .integer<std::uint64_t>("filter_height", &L::filter_h, "pixels", std::nullopt, kSize,
                                "filter height Fh (at most H)")
        .integer<std::uint64_t>("filter_width", &L::filter_w, "pixels", std::nullopt, kSize,
                                "filter width Fw (at most W)")
        .integer<std::uint64_t>("channels", &L::channels, "", std::nullopt, kSize, "input channels C")
        .integer<std::uint64_t>("filters", &L::filters, "", std::nullopt, kSize, "filters N (output channels)")
        .integer<std::uint64_t>("stride_height", &L::stride_h, "pixels", 1, kSize, "vertical stride Sh")
        .integer<std::uint64_t>("stride_width", &L::stride_w, "pixels", 1, kSize, "horizontal stride Sw")
        .then([](const sim::YamlNode& node, L& l) {
          if (l.filter_h > l.ifmap_h)
            node["filter_height"].fail("filter_height " + std::to_string(l.filter_h) + " is larger than ifmap_height " +
                                       std::to_string(l.ifmap_h));
          if (l.filter_w > l.ifmap_w)
            node["filter_width"].fail("filter_width " + std::to_string(l.filter_w) + " is larger than ifmap_width " +
                                      std::to_string(l.ifmap_w));
        });
    return p;
  }();
  return t;
}

}  // namespace

const sim::ParamTable<ConvWorkloadSpec>& conv_params() {
  static const sim::ParamTable<ConvWorkloadSpec> t = [] {
    sim::ParamTable<ConvWorkloadSpec> p(
        "workload.conv", "convolution layers, one after another, each an im2col BF16 matmul on one chip");
    p.integer<std::uint64_t>("batch", &ConvWorkloadSpec::batch, "images", 1, sim::between(1, 1 << 16),
                             "images per layer: M = batch x Ho x Wo")
        .custom(
            "layers", {"list of mappings", "", "(required)", "1 to 1000 layers"},
            "the layers in order, each {name, ifmap_height, ifmap_width, filter_height, filter_width, channels, "
            "filters, stride_height, stride_width}",
            [](const sim::YamlNode& n, ConvWorkloadSpec& s) {
              if (!n.is_sequence() || n.size() == 0 || n.size() > 1000)
                n.fail("expected a list of 1 to 1000 layers, got " + sim::describe_yaml(n.raw()));
              s.layers.clear();
              for (std::size_t i = 0; i < n.size(); ++i) {
                models::ConvLayer l;
                layer_params().load(n[i], l);
                if (l.name.empty()) l.name = "conv" + std::to_string(i);
                s.layers.push_back(l);
              }
            },
            true, [] { return layer_params().describe(); })
        .allow("kind");
    return p;
  }();
  return t;
}

std::unique_ptr<Workload> load_conv_workload(const sim::YamlNode& node, const Experiment& exp) {
  ConvWorkloadSpec spec;
  conv_params().load(node, spec);
  if (exp.functional) node.fail("functional mode is not available for conv");
  if (exp.pod.chips() != 1) node.fail("kind: conv runs on one chip (on one device of a chip of several)");
  for (std::size_t i = 0; i < spec.layers.size(); ++i) {
    const models::GemmShape g = models::im2col(spec.layers[i], spec.batch);
    if (g.m > (1ull << 32) || double(g.m) * double(g.k) * double(g.n) > 1e18)
      node["layers"][i].fail("the layer's im2col GEMM (" + std::to_string(g.m) + " x " + std::to_string(g.k) + " x " +
                             std::to_string(g.n) + ") is too large: M at most 2^32, M K N at most 1e18");
  }
  return std::make_unique<ConvWorkload>(spec);
}

RunOutput run_conv(const Experiment& exp, const ConvWorkloadSpec& spec, const RunOptions& opts) {
  sim::WallTimer wall;
  const hw::ChipConfig& chip = exp.chip;
  ConvSection section;
  section.batch = spec.batch;
  hw::Program program;
  std::vector<std::uint32_t> after;
  std::uint64_t footprint = 0, layer_macs = 0;
  for (const models::ConvLayer& l : spec.layers) {
    const models::GemmShape g = models::im2col(l, spec.batch);
    const kernels::MatmulBlocking blocking = kernels::choose_blocking(chip, g.m, g.k, g.n);
    if (blocking.bm == 0)
      throw sim::SimFailure("layer " + l.name + ": no blocking of its " + std::to_string(g.m) + "x" +
                            std::to_string(g.k) + "x" + std::to_string(g.n) + " GEMM fits the " +
                            std::to_string(chip.vmem) + " bytes of VMEM per core");
    // The im2col'd input, the weights and the output of a layer, in HBM.
    const std::uint64_t bytes = hw::kBf16Bytes * (g.m * g.k + g.k * g.n + g.m * g.n);
    if (bytes > chip.hbm.capacity_bytes)
      throw sim::SimFailure("does not fit: layer " + l.name + "'s im2col GEMM needs " + sim::si(double(bytes), "B") +
                                " of HBM but " + chip.name + " has " + sim::si(double(chip.hbm.capacity_bytes), "B"),
                            {{"needed_bytes", double(bytes)}, {"capacity_bytes", double(chip.hbm.capacity_bytes)}});
    footprint = std::max(footprint, bytes);
    const hw::Program mm = kernels::matmul_program(chip, exp.fidelity, g.m, g.k, g.n, blocking);
    after = kernels::append_program(program, mm, after, " [" + l.name + "]");
    section.layers.push_back(
        {l.name, l.ofmap_h(), l.ofmap_w(), g.m, g.k, g.n, g.macs(), ops_energy_j(chip.energy, mm, 0, mm.ops.size())});
    layer_macs += g.macs();
  }
  runtime::PodProgram pp;
  pp.add_chip(std::move(program));
  const runtime::PodRunResult run = runtime::run_pod(one_device_config(exp), pp, opts.trace);

  const sim::StatGroup& stats = run.chip_stats(0);
  double macs = 0;
  for (std::uint32_t m = 0; m < chip.mxus(); ++m) macs += stats.value("mxu" + std::to_string(m) + ".macs");
  section.macs = static_cast<std::uint64_t>(std::llround(macs));

  Report rep = report_for(exp);
  Result& res = rep.result;
  res = pod_result(exp, summarize(exp, run), 2.0 * double(layer_macs));
  Memory mem;
  mem.per_chip_bytes = footprint;
  mem.capacity_bytes = chip.hbm.capacity_bytes;
  mem.activations_bytes = footprint;
  res.memory = mem;
  res.conv = section;
  rep.per_chip = pod_per_chip(exp, run);
  rep.collectives = pod_collectives(run);
  rep.stats = run.stats;
  rep.simulator = pod_simulator(exp, wall.seconds(), run);

  const double step = run.step_time_s;
  sim::Table t("tpusim: " + exp.name + " (conv: " + std::to_string(spec.layers.size()) + " layers, batch " +
               std::to_string(spec.batch) + " on " + chip.name + ")");
  for (const auto& l : section.layers)
    t.row(l.name, std::to_string(l.m) + " x " + std::to_string(l.k) + " x " + std::to_string(l.n), "M x K x N");
  t.row("MACs (simulated)", sim::fixed(macs, 0), "layers: " + std::to_string(layer_macs));
  t.row("step time", sim::si(step, "s"), validation_remark(exp));
  t.row("MFU", sim::fixed(100.0 * res.mfu, 1), "%  " + validation_remark(exp));
  t.row("wall time", sim::fixed(rep.simulator.wall_time_s, 3), "s");
  return RunOutput{to_json(rep), t.str(), run.trace_json};
}

}  // namespace workloads
