#include "workloads/sharding/workload.h"

#include <algorithm>
#include <optional>

#include "hw/bf16.h"
#include "kernels/kernel_ops.h"
#include "kernels/matmul_kernel.h"
#include "kernels/program_append.h"
#include "sim/host.h"
#include "sim/output.h"
#include "workloads/pod_report.h"
#include "workloads/report.h"
#include "workloads/sharding/functional.h"
#include "workloads/validation.h"

namespace workloads {

namespace {

class ShardedMatmulWorkload : public Workload {
 public:
  explicit ShardedMatmulWorkload(ShardedMatmulSpec s) : spec_(std::move(s)) {}
  std::string kind() const override { return "sharded_matmul"; }
  RunOutput run(const Experiment& exp, const RunOptions& opts) const override {
    return run_sharded_matmul(exp, spec_, opts);
  }

 private:
  ShardedMatmulSpec spec_;
};

std::string axes_list(const std::vector<std::string>& axes) {
  std::string s;
  for (const auto& a : axes) s += (s.empty() ? "" : ",") + a;
  return s;
}

// Adds a communication op that every chip joins; returns its op index.
std::uint32_t add_comm(runtime::PodProgram& pp, hw::Program& prog, bool first_chip, std::uint32_t& next_collective,
                       interconnect::CollectiveSpec spec, const std::string& name, std::vector<std::uint32_t> deps,
                       const runtime::CollectiveData* data) {
  const std::uint32_t index = next_collective++;
  if (first_chip) {
    pp.collectives.push_back(std::move(spec));
    pp.collective_names.push_back(name);
    if (data) pp.collective_data.push_back(*data);
  }
  hw::Op op{name, {hw::EngineKind::ici, 0}, hw::CommOp{index}, std::move(deps), 0};
  return prog.add(std::move(op));
}

// A step of the plan: A and B move as stored, C as its accumulator.
interconnect::CollectiveSpec collective(const ShardingStep& step, const ShardedMatmulShape& shape) {
  interconnect::CollectiveSpec c;
  c.op = step.op;
  c.bytes = step.bytes;
  c.element_bytes = step.tensor == "C" ? shape.out_element_bytes : shape.element_bytes;
  c.axes = step.axes;
  return c;
}

// The plan in words. A collective matmul does not gather first: its one
// gather becomes parts - 1 permutes round the ring, each shard multiplied
// while the next arrives (build_sharded_matmul_program below).
std::string plan_words(const ShardedMatmulSpec& spec, const MeshAxes& mesh) {
  const ShardedMatmulPlan& plan = spec.plan;
  if (!spec.collective_matmul || plan.before.size() != 1) return plan.summary;
  const ShardingStep& g = plan.before[0];
  const std::string permutes = "collective matmul: " + std::to_string(axes_size(g.axes, mesh) - 1) + " permutes of " +
                               g.tensor + "'s shards over " + axes_list(g.axes) +
                               ", each sent while the shard already here is multiplied";
  std::string text = plan.summary;
  for (const char* gather : {"all-gather first", "gather one operand"}) {
    const std::size_t at = text.find(gather);
    if (at != std::string::npos) return text.replace(at, std::string(gather).size(), permutes);
  }
  return text;
}

std::string step_name(const ShardingStep& s) {
  return std::string(interconnect::to_string(s.op)) + " " + s.tensor + "[dim " + std::to_string(s.dim) + "] over " +
         axes_list(s.axes);
}

}  // namespace

runtime::PodProgram build_sharded_matmul_program(const Experiment& exp, const ShardedMatmulSpec& spec,
                                                 ShardedMatmulData* data) {
  const ShardedMatmulPlan& plan = spec.plan;
  // The chip as the format sees it (its MXU rate; bf16: the chip itself).
  const hw::ChipConfig chip = exp.chip.for_format(spec.dtype);
  const kernels::ElementBytes bytes{static_cast<std::uint64_t>(spec.shape.element_bytes),
                                    static_cast<std::uint64_t>(spec.shape.element_bytes),
                                    static_cast<std::uint64_t>(spec.shape.out_element_bytes)};
  runtime::PodProgram pp;
  const bool split_gather = spec.collective_matmul && plan.before.size() == 1;
  auto hook = [&](runtime::CollectiveData d) {
    return data ? std::optional<runtime::CollectiveData>(std::move(d)) : std::nullopt;
  };
  for (std::uint32_t c = 0; c < exp.pod.devices(); ++c) {
    hw::Program prog;
    std::uint32_t next_collective = 0;
    const bool first = c == 0;
    const int chip_id = static_cast<int>(c);
    std::vector<std::uint32_t> stores;
    if (!split_gather) {
      std::vector<std::uint32_t> gathers;
      for (std::size_t i = 0; i < plan.before.size(); ++i) {
        auto d = data ? hook(data->before(i)) : std::nullopt;
        gathers.push_back(add_comm(pp, prog, first, next_collective, collective(plan.before[i], spec.shape),
                                   step_name(plan.before[i]), {}, d ? &*d : nullptr));
      }
      const hw::Program mm =
          kernels::matmul_program(chip, exp.fidelity, plan.local_m, plan.local_k, plan.local_n,
                                  kernels::choose_blocking(chip, plan.local_m, plan.local_k, plan.local_n, {}, bytes),
                                  data ? data->local(chip_id) : kernels::MatmulData{});
      stores = kernels::append_program(prog, mm, gathers, "");
    } else {
      // Collective matmul: the gathered operand arrives one shard per step
      // from the ring neighbour while the shard already here is multiplied.
      const ShardingStep& g = plan.before[0];
      const std::uint64_t parts = axes_size(g.axes, exp.mesh);
      std::uint64_t m = plan.local_m, k = plan.local_k, n = plan.local_n;
      const bool a_side = g.tensor == "A";
      std::uint64_t& split = a_side ? (g.dim == 0 ? m : k) : (g.dim == 0 ? k : n);
      split /= parts;
      const kernels::MatmulBlocking blocking = kernels::choose_blocking(chip, m, k, n, {}, bytes);
      std::uint32_t prev_permute = UINT32_MAX;
      for (std::uint64_t j = 0; j < parts; ++j) {
        std::vector<std::uint32_t> after;
        if (prev_permute != UINT32_MAX) after.push_back(prev_permute);
        // Forward the shard for the next step while this one is multiplied.
        if (j + 1 < parts) {
          interconnect::CollectiveSpec p;
          p.op = interconnect::CollectiveOp::permute;
          p.bytes = g.bytes / parts;
          p.element_bytes = spec.shape.element_bytes;
          p.axes = g.axes;
          auto d = data ? hook(data->permute(j)) : std::nullopt;
          prev_permute =
              add_comm(pp, prog, first, next_collective, p,
                       "permute " + g.tensor + " shard " + std::to_string(j + 1) + " over " + axes_list(g.axes), after,
                       d ? &*d : nullptr);
        }
        const hw::Program mm = kernels::matmul_program(chip, exp.fidelity, m, k, n, blocking,
                                                       data ? data->split_step(chip_id, j) : kernels::MatmulData{});
        auto s = kernels::append_program(prog, mm, after, " s" + std::to_string(j));
        stores.insert(stores.end(), s.begin(), s.end());
      }
    }
    std::vector<std::uint32_t> last = stores;
    for (std::size_t i = 0; i < plan.after.size(); ++i) {
      auto d = data ? hook(data->after(i)) : std::nullopt;
      std::uint32_t op = add_comm(pp, prog, first, next_collective, collective(plan.after[i], spec.shape),
                                  step_name(plan.after[i]), last, d ? &*d : nullptr);
      last = {op};
    }
    pp.add_chip(std::move(prog));
  }
  return pp;
}

namespace {

// Bytes of an element of C and of its partial sums: the accumulator of the
// format as MaxText's AQT configures it (layers/quantizations.py: int8's
// fwd_accumulator_dtype int32; fp8's bfloat16), bf16 for bf16.
int accumulator_bytes(hw::NumberFormat f) { return f == hw::NumberFormat::int8 ? 4 : static_cast<int>(hw::kBf16Bytes); }

// The workload mapping with the mesh its PartitionSpecs name.
struct ShardedMatmulLoad {
  ShardedMatmulSpec spec;
  const MeshAxes* mesh = nullptr;
};

const sim::ParamTable<ShardedMatmulLoad>& load_params() {
  static const sim::ParamTable<ShardedMatmulLoad> t = [] {
    using L = ShardedMatmulLoad;
    sim::ParamTable<L> p("workload.sharded_matmul",
                         "C = A (m x k) x B (k x n) over the pod, each tensor split by a PartitionSpec");
    const sim::Range dim = sim::between(1, 1 << 22);
    const sim::Doc spec_doc{"PartitionSpec", "", "replicated: [null, null]", ""};
    auto partition = [](const char* tensor, PartitionSpec ShardedMatmulSpec::*field) {
      return [tensor, field](const sim::YamlNode& n, L& l) {
        l.spec.*field = parse_partition_spec(n, 2, *l.mesh, tensor);
      };
    };
    p.integer<std::uint64_t>(
         "m", [](L& l) -> std::uint64_t& { return l.spec.shape.m; }, "elements", std::nullopt, dim, "rows of A and C")
        .integer<std::uint64_t>(
            "k", [](L& l) -> std::uint64_t& { return l.spec.shape.k; }, "elements", std::nullopt, dim,
            "contraction dimension")
        .integer<std::uint64_t>(
            "n", [](L& l) -> std::uint64_t& { return l.spec.shape.n; }, "elements", std::nullopt, dim,
            "columns of B and C")
        .custom("a_spec", spec_doc,
                "how A is split: per dimension a mesh axis, a list of axes (major first) or null, e.g. [data, null]",
                partition("A", &ShardedMatmulSpec::a))
        .custom("b_spec", spec_doc, "how B is split, as a_spec", partition("B", &ShardedMatmulSpec::b))
        .custom("out_spec", spec_doc, "how C is split, as a_spec", partition("C", &ShardedMatmulSpec::out))
        .enumeration<hw::NumberFormat>(
            "dtype", [](L& l) -> hw::NumberFormat& { return l.spec.dtype; }, hw::number_format_names(),
            hw::NumberFormat::bf16,
            "format of A and B: an 8-bit one at the chip's rate for it (chip.formats), one byte an element; C and "
            "its partial sums in the accumulator's format, int32 for int8 and bf16 for fp8 "
            "(docs/calibration.md#number-formats)")
        .flag(
            "collective_matmul", [](L& l) -> bool& { return l.spec.collective_matmul; }, false,
            "split the one all-gather into permutes that overlap the partial matmuls")
        .integer<std::uint64_t>(
            "seed", [](L& l) -> std::uint64_t& { return l.spec.seed; }, "", 1, sim::at_least(0),
            "random operands of functional runs")
        .allow("kind");
    return p;
  }();
  return t;
}

}  // namespace

nlohmann::json sharded_matmul_params() { return load_params().describe(); }

std::unique_ptr<Workload> load_sharded_matmul_workload(const sim::YamlNode& node, const Experiment& exp) {
  ShardedMatmulLoad load;
  load.mesh = &exp.mesh;
  const PartitionSpec replicated{std::vector<std::vector<std::string>>(2)};
  load.spec.a = load.spec.b = load.spec.out = replicated;
  load_params().load(node, load);
  ShardedMatmulSpec spec = std::move(load.spec);
  if (spec.dtype != hw::NumberFormat::bf16) {
    check_chip_format(node["dtype"], exp.chip, spec.dtype);
    if (exp.functional)
      node["dtype"].fail(std::string("functional sharded matmuls compute in bf16; ") + hw::to_string(spec.dtype) +
                         " ones are timed only (functional: false)");
  }
  spec.shape.element_bytes = static_cast<int>(hw::element_bytes(spec.dtype));
  spec.shape.out_element_bytes = accumulator_bytes(spec.dtype);
  spec.plan = plan_sharded_matmul(spec.shape, spec.a, spec.b, spec.out, exp.mesh, node);
  if (spec.collective_matmul && spec.plan.before.size() != 1)
    node["collective_matmul"].fail("collective matmul splits exactly one all-gather; this sharding needs " +
                                   std::to_string(spec.plan.before.size()) + " (" + spec.plan.summary + ")");
  if (exp.functional) {
    if (double(spec.shape.m) * double(spec.shape.k) * double(spec.shape.n) > 2e9)
      node.fail("functional mode checks every value against a host GEMM; keep m*k*n <= 2e9");
    ShardedMatmulData probe(exp, spec, spec.seed, node);  // rejects plans it cannot follow, with a location
  }
  return std::make_unique<ShardedMatmulWorkload>(std::move(spec));
}

RunOutput run_sharded_matmul(const Experiment& exp, const ShardedMatmulSpec& spec, const RunOptions& opts) {
  sim::WallTimer wall;
  const hw::ChipConfig& chip = exp.chip;
  std::shared_ptr<ShardedMatmulData> data;
  if (exp.functional)
    data = std::make_shared<ShardedMatmulData>(exp, spec, spec.seed, sim::YamlNode::load_string("{}", exp.config_path));
  runtime::PodProgram pp = build_sharded_matmul_program(exp, spec, data.get());
  pp.buffers = data;
  runtime::PodConfig config = pod_config(exp);
  config.chip = exp.chip.for_format(spec.dtype);
  runtime::PodRunResult run = runtime::run_pod(config, pp, opts.trace);
  const ShardedMatmulPlan& plan = spec.plan;
  const double chips = exp.pod.devices();
  const double flops = 2.0 * double(spec.shape.m) * double(spec.shape.k) * double(spec.shape.n);
  const double peak = chip.peak_flops_per_s() * chips;
  const PodSummary sum = summarize(exp, run);
  const double step = sum.step_s, comm = sum.comm_s, hidden = sum.hidden_s, compute = sum.compute_s;
  Report rep = report_for(exp);
  rep.per_chip = pod_per_chip(exp, run);
  for (auto& pc : rep.per_chip) {
    pc.shape_a = plan.a_shard;
    pc.shape_b = plan.b_shard;
    pc.shape_c = plan.c_shard;
  }
  Result& res = rep.result;
  res = pod_result(exp, sum, flops);
  Memory mem;
  mem.per_chip_bytes = std::uint64_t(spec.shape.element_bytes) *
                           (plan.a_shard[0] * plan.a_shard[1] + plan.b_shard[0] * plan.b_shard[1]) +
                       std::uint64_t(spec.shape.out_element_bytes) * plan.c_shard[0] * plan.c_shard[1];
  mem.capacity_bytes = chip.hbm.capacity_bytes;
  res.memory = mem;
  if (data) {
    const auto check = data->check();
    FunctionalCheck f;
    f.matches_reference = check.matches;
    f.max_abs_error = check.max_abs_error;
    res.functional = f;
  }
  res.sharding = ShardingSection{spec.a.str(),
                                 spec.b.str(),
                                 spec.out.str(),
                                 plan_words(spec, exp.mesh),
                                 spec.collective_matmul,
                                 {plan.local_m, plan.local_k, plan.local_n},
                                 plan.a_shard,
                                 plan.b_shard,
                                 plan.c_shard};
  rep.collectives = pod_collectives(run);
  rep.stats = run.stats;
  rep.simulator = pod_simulator(exp, wall.seconds(), run);

  sim::Table t("tpusim: " + exp.name + " (sharded matmul " + std::to_string(spec.shape.m) + "x" +
               std::to_string(spec.shape.k) + "x" + std::to_string(spec.shape.n) + " on " + pod_label(exp) + ")");
  t.row("A, B, C specs", spec.a.str() + " " + spec.b.str() + " -> " + spec.out.str());
  t.row("plan", plan_words(spec, exp.mesh));
  t.row("local matmul",
        std::to_string(plan.local_m) + " x " + std::to_string(plan.local_k) + " x " + std::to_string(plan.local_n));
  t.row("step time", sim::si(step, "s"), validation_remark(exp));
  t.row("compute (per chip)", sim::si(compute, "s"));
  t.row("communication (per chip)", sim::si(comm, "s"));
  t.row("exposed communication", sim::si(comm - hidden, "s"));
  t.row("overlap fraction", comm > 0 ? sim::fixed(hidden / comm, 3) : "-");
  for (const auto& c : run.collectives) t.row("  " + c.name, sim::si(c.time_s(), "s"), sim::si(double(c.bytes), "B"));
  t.row("MFU", sim::fixed(100.0 * flops / step / peak, 1), "%  " + validation_remark(exp));
  verdict_rows(t, res.roofline);
  t.row("wall time", sim::fixed(rep.simulator.wall_time_s, 3), "s");
  return RunOutput{to_json(rep), t.str(), run.trace_json};
}

}  // namespace workloads
