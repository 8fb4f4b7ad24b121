#include "workloads/hlo/workload.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "hw/host_link.h"
#include "hw/sparsecore.h"
#include "interconnect/mesh.h"
#include "kernels/program_append.h"
#include "kernels/train_kernels.h"
#include "runtime/run_budget.h"
#include "sim/error.h"
#include "sim/host.h"
#include "sim/output.h"
#include "sim/text.h"
#include "workloads/pod_report.h"
#include "workloads/report.h"
#include "workloads/validation.h"

namespace workloads {

namespace {

class HloWorkload : public Workload {
 public:
  explicit HloWorkload(HloSpec s) : spec_(std::move(s)) {}
  std::string kind() const override { return "hlo"; }
  RunOutput run(const Experiment& exp, const RunOptions& opts) const override { return run_hlo(exp, spec_, opts); }

 private:
  HloSpec spec_;
};

[[noreturn]] void fail_at(const hlo::Module& m, const hlo::Location& at, const std::string& construct,
                          const std::string& what) {
  throw sim::ConfigError(sim::SourceLocation{m.file, at.line, at.column}, construct, what);
}

std::string groups_str(const std::vector<std::vector<std::int64_t>>& groups) {
  std::string s = "{";
  for (std::size_t g = 0; g < groups.size(); ++g) {
    s += g ? ",{" : "{";
    for (std::size_t i = 0; i < groups[g].size(); ++i) s += (i ? "," : "") + std::to_string(groups[g][i]);
    s += "}";
  }
  return s + "}";
}

// The mesh axes whose collective groups (interconnect::chip_groups) are
// exactly `groups`, devices being chips in id order; throws at the
// instruction when no set of the pod's mesh axes has those groups.
std::vector<std::string> axes_of(const hlo::Module& m, const hlo::Instruction& in,
                                 const std::vector<std::vector<std::int64_t>>& groups,
                                 const interconnect::Topology& topology, const interconnect::Mesh& mesh) {
  std::set<std::vector<int>> want;
  for (const auto& g : groups) {
    std::vector<int> v(g.begin(), g.end());
    std::sort(v.begin(), v.end());
    want.insert(v);
  }
  const std::size_t n = mesh.axes().size();
  for (std::uint32_t subset = 0; subset < (1u << n); ++subset) {
    std::vector<std::string> names;
    for (std::size_t a = 0; a < n; ++a)
      if (subset & (1u << a)) names.push_back(mesh.axes()[a].name);
    if (names.empty()) continue;
    const auto got = interconnect::chip_groups(topology, mesh.resolve(names, "mesh"));
    if (std::set<std::vector<int>>(got.begin(), got.end()) == want) return names;
  }
  std::string axes;
  for (const auto& a : mesh.axes()) axes += (axes.empty() ? "" : ", ") + a.name;
  fail_at(m, in.where, "replica_groups",
          "groups " + groups_str(groups) + " are not the groups of any set of the pod's mesh axes (" + axes +
              "); tpusim runs a collective over mesh axes");
}

interconnect::CollectiveOp op_of(hlo::CollectiveKind k) {
  switch (k) {
    case hlo::CollectiveKind::all_gather: return interconnect::CollectiveOp::all_gather;
    case hlo::CollectiveKind::reduce_scatter: return interconnect::CollectiveOp::reduce_scatter;
    case hlo::CollectiveKind::collective_permute: return interconnect::CollectiveOp::permute;
    case hlo::CollectiveKind::all_to_all: return interconnect::CollectiveOp::all_to_all;
    default: return interconnect::CollectiveOp::all_reduce;
  }
}

const hlo::Computation& entry_of(const HloSpec& spec) {
  const hlo::Module& m = *spec.module;
  if (!spec.entry.empty()) return m.computation(spec.entry, m.where);
  return m.computations[*m.entry];
}

// What the build needs of the pod, made once.
struct PodView {
  const hlo::Module& m;
  const interconnect::PodNetworkConfig net;
  const interconnect::Topology topology;
  const interconnect::Mesh mesh;
};

// A collective instruction as a pod collective on the ICI engine after
// `after`; its sinks (none for a group of one device).
std::vector<std::uint32_t> add_collective(const PodView& pod, const hlo::CostModel& model, const hlo::Instruction& in,
                                          HloStep& step, HloProgram& out, hw::Program& prog,
                                          const std::vector<std::uint32_t>& after, std::uint32_t queue) {
  const hlo::Module& m = pod.m;
  const hlo::Cost& c = step.cost;
  const hlo::Instruction& coll = *model.collective_of(in);
  interconnect::CollectiveSpec cs;
  cs.op = op_of(c.collective);
  cs.bytes = c.collective_bytes;
  cs.element_bytes = c.element_bytes;
  cs.sparsecore = hw::is_sparsecore_ici_queue(queue);  // its reductions on the SparseCores
  if (c.collective == hlo::CollectiveKind::collective_permute) {
    for (const auto& [src, dst] : hlo::device_pairs(m, coll))
      cs.pairs.emplace_back(static_cast<int>(src), static_cast<int>(dst));
  } else {
    const auto groups = hlo::device_groups(m, coll);
    if (groups.front().size() > 1) step.axes = axes_of(m, coll, groups, pod.topology, pod.mesh);
    cs.axes = step.axes;
  }
  if (step.axes.empty() && cs.pairs.empty()) return {};
  // Checked here, at the instruction, not later by the runtime (which
  // knows no file: "<input>: workload.pairs").
  try {
    cs.validate(pod.net);
  } catch (const sim::ConfigError& e) {
    throw e.at(sim::SourceLocation{m.file, coll.where.line, coll.where.column}, "instruction %" + coll.name);
  }
  step.collective = static_cast<int>(out.pod.collectives.size());
  out.pod.collectives.push_back(cs);
  out.pod.collective_names.push_back(in.name);
  return {prog.add(
      {in.name, {hw::EngineKind::ici, queue}, hw::CommOp{static_cast<std::uint32_t>(step.collective)}, after, 0})};
}

// An instruction's work on the TensorCore: its matmuls on the MXUs, its
// other HBM bytes and vector work as a stream, and its host-memory bytes
// over the host link (a DMA from the host before the rest, to it after;
// hw/host_link.h), each link-side copy standing for its HBM side too.
std::vector<std::uint32_t> add_work(const Experiment& exp, kernels::MatmulPrograms& matmuls, const hlo::Cost& c,
                                    const std::string& name, hw::Program& prog, std::vector<std::uint32_t> deps) {
  const hw::ChipConfig& chip = exp.chip;
  if (c.host_read_bytes > 0)
    deps = {prog.add({name + " from host",
                      {hw::EngineKind::dma, hw::host_dma_engine(chip, true)},
                      hw::DmaOp{0, c.host_read_bytes, true},
                      deps,
                      0})};
  std::uint64_t matmul_bytes = 0;
  for (const hlo::Matmul& mm : c.matmuls) {
    if (mm.m == 0 || mm.n == 0) continue;
    deps = kernels::append_program(prog, matmuls.get(1, mm.m, mm.k, mm.n), deps, " " + name);
    matmul_bytes += 2 * (mm.m * mm.k + mm.k * mm.n + mm.m * mm.n);  // bf16 operands and result
  }
  // What the matmul kernels and the host copies do not move or compute: the
  // fusion's other HBM bytes and its elementwise work.
  const std::uint64_t read = c.read_bytes - std::min(c.read_bytes, c.host_written_bytes);
  const std::uint64_t written = c.written_bytes - std::min(c.written_bytes, c.host_read_bytes);
  kernels::StreamWork w;
  const std::uint64_t moved = read + written;
  const std::uint64_t rest = moved > matmul_bytes ? moved - matmul_bytes : 0;
  const double share = moved ? double(rest) / double(moved) : 0.0;
  w.load_bytes = static_cast<std::uint64_t>(double(read) * share);
  w.store_bytes = static_cast<std::uint64_t>(double(written) * share);
  w.elements = c.elements;
  w.flops_per_element = c.flops_per_element;
  deps = kernels::append_stream(prog, chip, exp.fidelity, w, deps, name);
  if (c.host_written_bytes > 0)
    deps = {prog.add({name + " to host",
                      {hw::EngineKind::dma, hw::host_dma_engine(chip, false)},
                      hw::DmaOp{0, c.host_written_bytes, false},
                      deps,
                      0})};
  return deps;
}

// An instruction on the SparseCore thread: its HBM bytes split evenly over
// the chip's SparseCores, each a flow no faster than one SparseCore's HBM
// bandwidth (hw/sparsecore.h), beside the TensorCore's engines.
std::vector<std::uint32_t> add_sparsecore_work(const Experiment& exp, const hlo::Instruction& in, const hlo::Cost& c,
                                               hw::Program& prog, const std::vector<std::uint32_t>& after) {
  const hw::ChipConfig& chip = exp.chip;
  const std::uint32_t n = chip.sparsecore.count;
  const std::uint64_t bytes = c.read_bytes + c.written_bytes;
  std::vector<std::uint32_t> sinks;
  for (std::uint32_t i = 0; i < n && bytes > 0; ++i) {
    const std::uint64_t share = bytes / n + (i < bytes % n ? 1 : 0);
    sinks.push_back(prog.add({in.name + " sparsecore" + std::to_string(i),
                              {hw::EngineKind::dma, hw::sparsecore_engine(chip, i)},
                              hw::DmaOp{0, share, false},
                              after,
                              0}));
  }
  return sinks.empty() ? after : sinks;
}

// Where a step runs: the TensorCore ("main"), or the chip's SparseCores;
// another execution thread is not modelled (exit 2 at the instruction).
bool on_sparsecore(const Experiment& exp, const hlo::Module& m, const hlo::CostModel::Step& s) {
  if (s.thread == "main") return false;
  const hlo::Instruction& in = *s.instruction;
  if (s.thread != "sparsecore")
    fail_at(m, in.where, "instruction %" + in.name,
            "runs on execution thread '" + s.thread + "'; tpusim models \"main\" (the TensorCore) and \"sparsecore\"");
  if (exp.chip.sparsecore.count == 0)
    fail_at(m, in.where, "instruction %" + in.name,
            "runs on the SparseCore thread, but chip " + exp.chip.name +
                " has no SparseCores (sparsecore.count is 0; docs/hlo.md#sparsecore)");
  if (exp.fidelity != hw::Fidelity::kernel)
    fail_at(m, in.where, "instruction %" + in.name,
            "runs on the SparseCore thread, which tpusim models at fidelity: kernel only");
  return true;
}

using sim::ends_with;

// The order XLA runs a TensorCore's instructions in: one at a time in
// schedule order; only async work (collectives, copies, wrapped
// computations) runs beside them, from its start to its done.
class Order {
 public:
  explicit Order(const std::vector<hlo::CostModel::Step>& schedule) : schedule_(schedule) {}

  // What a step's first ops wait for: the schedule so far, or for an
  // instruction inside an async wrapper, the one before it there.
  const std::vector<std::uint32_t>& after(const hlo::CostModel::Step& s) const {
    const auto own = s.started_by >= 0 ? wrapped_.find(s.started_by) : wrapped_.end();
    return own != wrapped_.end() ? own->second : chain_;
  }

  void place(const hlo::CostModel::Step& s, const std::vector<std::uint32_t>& sinks) {
    const hlo::Instruction& in = *s.instruction;
    if (s.started_by >= 0) {
      if (!sinks.empty()) wrapped_[s.started_by] = sinks;
      auto& p = pending_[schedule_[static_cast<std::size_t>(s.started_by)].instruction->name];
      p.insert(p.end(), sinks.begin(), sinks.end());
    } else if (ends_with(in.opcode, "-start")) {
      pending_[in.name] = sinks;
    } else if (ends_with(in.opcode, "-update")) {
      // An update passes its start's work on to the next update or done.
      if (auto it = !in.operands.empty() ? pending_.find(in.operands[0]) : pending_.end(); it != pending_.end()) {
        std::vector<std::uint32_t> work = std::move(it->second);
        pending_.erase(it);
        pending_[in.name] = std::move(work);
      }
    } else if (ends_with(in.opcode, "-done")) {
      if (auto it = !in.operands.empty() ? pending_.find(in.operands[0]) : pending_.end(); it != pending_.end()) {
        chain_.insert(chain_.end(), it->second.begin(), it->second.end());
        pending_.erase(it);
      }
    } else if (!sinks.empty() && sinks != chain_) {
      chain_ = sinks;
    }
  }

 private:
  const std::vector<hlo::CostModel::Step>& schedule_;
  std::vector<std::uint32_t> chain_;
  std::map<std::string, std::vector<std::uint32_t>>
      pending_;                                         // async start (or its last update) -> its work's last ops
  std::map<long, std::vector<std::uint32_t>> wrapped_;  // async start's position -> its work's last ops so far
};

}  // namespace

HloProgram build_hlo_program(const Experiment& exp, const HloSpec& spec) {
  const hlo::Module& m = *spec.module;
  if (static_cast<std::uint32_t>(m.devices()) != exp.pod.devices())
    fail_at(m, m.where, "HloModule",
            "the module is compiled for " + std::to_string(m.devices()) + " devices (num_partitions " +
                std::to_string(m.num_partitions) + " x replica_count " + std::to_string(m.replica_count) +
                "); the pod has " + std::to_string(exp.pod.devices()));
  const interconnect::PodNetworkConfig net = pod_network_config(exp);
  const interconnect::Topology topology = net.make_topology();
  const PodView pod{m, net, topology, interconnect::Mesh(topology, net.mesh)};
  kernels::MatmulPrograms matmuls(exp.chip, exp.fidelity);

  hlo::CostModel model(m, spec.custom_call_flops);
  HloProgram out;
  hw::Program prog;
  const auto schedule = model.schedule(entry_of(spec));
  Order order(schedule);
  std::size_t sparsecore_compute = 0;
  for (const auto& s : schedule) {
    const hlo::Instruction& in = *s.instruction;
    HloStep step;
    step.instruction = &in;
    step.cost = model.cost(*s.computation, in);
    step.first_op = static_cast<std::uint32_t>(prog.ops.size());
    std::vector<std::uint32_t> sinks;
    // An offloaded collective drives the same ICI links from the
    // SparseCore: its own queue, so it never waits behind the TensorCore's.
    const bool sparsecore = !step.cost.free && on_sparsecore(exp, m, s);
    if (step.cost.collective != hlo::CollectiveKind::none)
      sinks = add_collective(pod, model, in, step, out, prog, order.after(s), sparsecore ? hw::kSparseCoreIciQueue : 0);
    else if (sparsecore)
      sinks = add_sparsecore_work(exp, in, step.cost, prog, order.after(s));
    else if (!step.cost.free)
      sinks = add_work(exp, matmuls, step.cost, in.name, prog, order.after(s));
    if (sparsecore && (!step.cost.matmuls.empty() || step.cost.flops_per_element > 0)) ++sparsecore_compute;
    order.place(s, sinks);
    step.end_op = static_cast<std::uint32_t>(prog.ops.size());
    out.steps.push_back(std::move(step));
  }
  out.pod.add_replicas(std::move(prog), exp.pod.devices());
  out.approximations = model.approximations();
  if (sparsecore_compute > 0)
    out.approximations.push_back("sparsecore: computing instructions costed by their HBM bytes alone (" +
                                 std::to_string(sparsecore_compute) + " instructions)");
  return out;
}

namespace {

void load_custom_call_flops(const sim::YamlNode& node, HloSpec& spec) {
  if (!node.is_map()) node.fail("expected a mapping of instruction name to FLOPs, e.g. {splash_mha_fwd: 2.1e9}");
  for (const std::string& name : node.keys()) {
    const sim::YamlNode value = node[name];
    const double flops = value.as_double();
    if (!(flops >= 0 && flops < hlo::kMaxKernelCount))
      value.fail("FLOPs of a kernel must be at least 0 and below 2^62");
    spec.custom_call_flops[name] = flops;
  }
}

const sim::ParamTable<HloSpec>& load_params() {
  static const sim::ParamTable<HloSpec> t = [] {
    sim::ParamTable<HloSpec> p("workload.hlo", "the program XLA compiled, from its HLO text (docs/hlo.md)");
    p.text(
         "file", [](HloSpec& s) -> std::string& { return s.file; }, std::nullopt,
         "HLO text of an SPMD-partitioned module (as_text() of a compiled jax.jit), relative to this file")
        .text(
            "entry", [](HloSpec& s) -> std::string& { return s.entry; }, std::string(),
            "the computation to run, without '%' (default: the module's ENTRY)")
        .flag(
            "cut_short", [](HloSpec& s) -> bool& { return s.cut_short; }, false,
            "the file is the head of a longer dump: parse up to its last whole computation (then name `entry`)")
        .informational(
            "decides only whether a file cut off inside a computation is accepted; whole computations "
            "cost the same either way")
        .custom("custom_call_flops", {"mapping of instruction name to FLOPs", "FLOP", "none", ""},
                "FLOPs of custom-calls whose backend_config has no cost_estimate (a Pallas kernel), by "
                "instruction name or by the name without its .N (every instance); run on the MXUs",
                load_custom_call_flops)
        .allow("kind");
    return p;
  }();
  return t;
}

// Each name of workload.custom_call_flops must be a custom-call of the
// module, by its name or its name without `.N`.
void check_custom_calls(const sim::YamlNode& node, const HloSpec& spec) {
  if (spec.custom_call_flops.empty()) return;
  std::set<std::string> names;
  for (const hlo::Computation& c : spec.module->computations)
    for (const hlo::Instruction& in : c.instructions)
      if (in.opcode == "custom-call") {
        names.insert(in.name);
        names.insert(hlo::base_name(in.name));
      }
  for (const auto& [name, flops] : spec.custom_call_flops)
    if (!names.count(name)) {
      const std::string hint = sim::did_you_mean(name, {names.begin(), names.end()});
      node["custom_call_flops"][name].fail("no custom-call " + sim::quote_short(name) + " in " + spec.file +
                                           (hint.empty() ? "" : "; " + hint));
    }
}

}  // namespace

nlohmann::json hlo_params() { return load_params().describe(); }

std::unique_ptr<Workload> load_hlo_workload(const sim::YamlNode& node, const Experiment& exp) {
  HloSpec spec;
  load_params().load(node, spec);
  std::filesystem::path path(spec.file);
  if (path.is_relative()) path = std::filesystem::path(node.location().file).parent_path() / path;
  spec.file = path.lexically_normal().string();
  if (!std::filesystem::is_regular_file(spec.file)) node["file"].fail("no HLO file " + sim::quote_short(spec.file));
  // The parse's cost, against limits.max_memory before reading (a 1 GB
  // module ran out of memory in the parser: an internal error).
  std::error_code ec;
  const auto text_bytes = std::filesystem::file_size(spec.file, ec);
  if (!ec && text_bytes <= hlo::kMaxModuleBytes) {
    runtime::MemoryEstimate est;
    est.add("the HLO text (" + sim::si(double(text_bytes), "B") + ") and its parsed module",
            double(text_bytes) * (1.0 + hlo::kModuleBytesPerTextByte));
    runtime::check_memory(exp.limits, est, "reading the HLO module");
  }
  spec.module = std::make_shared<const hlo::Module>(hlo::load_module(spec.file, spec.cut_short));
  if (!spec.module->entry && spec.entry.empty())
    node["entry"].fail("the module has no ENTRY computation; name the one to run");
  if (!spec.entry.empty() && !spec.module->find(spec.entry))
    node["entry"].fail("no computation " + sim::quote_short(spec.entry) + " in " + spec.file);
  check_custom_calls(node, spec);
  build_hlo_program(exp, spec);  // the module must fit the pod: located errors before any run
  return std::make_unique<HloWorkload>(std::move(spec));
}

RunOutput run_hlo(const Experiment& exp, const HloSpec& spec, const RunOptions& opts) {
  sim::WallTimer wall;
  HloProgram hp = build_hlo_program(exp, spec);
  runtime::PodRunResult run = runtime::run_pod(pod_config(exp), hp.pod, opts.trace);
  const PodSummary sum = summarize(exp, run);
  double flops = 0, bytes = 0;
  for (const HloStep& s : hp.steps) {
    flops += s.cost.flops;
    bytes += s.cost.bytes();
  }
  const double devices = exp.pod.devices();
  Report rep = report_for(exp);
  rep.per_chip = pod_per_chip(exp, run);
  rep.result = pod_result(exp, sum, flops * devices);
  rep.collectives = pod_collectives(run);
  rep.stats = run.stats;
  rep.simulator = pod_simulator(exp, wall.seconds(), run);

  // Time of each instruction on chip 0: its ops' first start to last end.
  const auto& timing = *run.timings[0];
  struct Agg {
    double time_s = 0, bytes = 0, flops = 0;
    int count = 0;
  };
  std::map<std::string, Agg> by_opcode, by_instruction;
  for (const HloStep& s : hp.steps) {
    if (s.end_op == s.first_op) continue;
    std::uint64_t a = UINT64_MAX, b = 0;
    for (std::uint32_t o = s.first_op; o < s.end_op; ++o) {
      a = std::min(a, timing[o].start_ps);
      b = std::max(b, timing[o].end_ps);
    }
    const double t = double(b - a) * 1e-12;
    for (Agg* g : {&by_opcode[s.instruction->opcode], &by_instruction[s.instruction->name]}) {
      g->time_s += t;
      g->bytes += s.cost.bytes();
      g->flops += s.cost.flops;
      ++g->count;
    }
  }
  auto top = [](const std::map<std::string, Agg>& m) {
    std::vector<std::pair<std::string, Agg>> v(m.begin(), m.end());
    std::stable_sort(v.begin(), v.end(),
                     [](const auto& x, const auto& y) { return x.second.time_s > y.second.time_s; });
    if (v.size() > 10) v.resize(10);
    return v;
  };
  nlohmann::json j = to_json(rep);
  nlohmann::json h;
  h["file"] = spec.file;
  h["module"] = spec.module->name;
  h["entry"] = entry_of(spec).name;
  h["instructions_executed"] = hp.steps.size();
  h["flops_per_device"] = flops;
  h["hbm_bytes_per_device"] = bytes;
  for (const auto& [name, g] : top(by_opcode))
    h["top_opcodes"].push_back(
        {{"opcode", name}, {"count", g.count}, {"time_s", g.time_s}, {"bytes", g.bytes}, {"flops", g.flops}});
  for (const auto& [name, g] : top(by_instruction))
    h["top_instructions"].push_back(
        {{"name", name}, {"count", g.count}, {"time_s", g.time_s}, {"bytes", g.bytes}, {"flops", g.flops}});
  h["collectives"] = nlohmann::json::array();
  for (const HloStep& s : hp.steps)
    if (s.collective >= 0) {
      const auto& c = run.collectives[static_cast<std::size_t>(s.collective)];
      h["collectives"].push_back({{"name", s.instruction->name},
                                  {"op", hlo::to_string(s.cost.collective)},
                                  {"axes", s.axes},
                                  {"bytes", s.cost.collective_bytes},
                                  {"time_s", c.time_s()}});
    }
  h["approximations"] = hp.approximations;
  j["result"]["hlo"] = h;

  sim::Table t("tpusim: " + exp.name + " (HLO " + spec.module->name + " %" + entry_of(spec).name + " on " +
               pod_label(exp) + ")");
  t.row("step time", sim::si(sum.step_s, "s"), validation_remark(exp));
  t.row("instructions executed", std::to_string(hp.steps.size()));
  t.row("FLOPs per device (dots)", sim::si(flops, "FLOP"));
  t.row("HBM bytes per device", sim::si(bytes, "B"));
  t.row("communication (per chip)", sim::si(sum.comm_s, "s"));
  t.row("exposed communication", sim::si(sum.exposed_s(), "s"));
  t.row("overlap fraction", sum.comm_s > 0 ? sim::fixed(sum.overlap_fraction(), 3) : "-");
  try {  // only runs that used the SparseCores have these (docs/hlo.md#sparsecore)
    const sim::StatGroup& prog = run.chip_stats(0).child("program");
    t.row("SparseCore time (chip 0)", sim::si(prog.value("sparsecore_time"), "s"),
          sim::si(prog.value("hidden_sparsecore_time"), "s") + " of it beside the TensorCore's compute");
  } catch (const std::out_of_range&) {
  }
  t.row("MFU", sim::fixed(100.0 * flops / sum.step_s / exp.chip.peak_flops_per_s(), 1), "%  " + validation_remark(exp));
  for (const auto& [name, g] : top(by_opcode))
    t.row("  " + name + " x" + std::to_string(g.count), sim::si(g.time_s, "s"), sim::si(g.bytes, "B"));
  for (const HloStep& s : hp.steps)
    if (s.collective >= 0) {
      std::string axes;
      for (const auto& a : s.axes) axes += (axes.empty() ? "" : ",") + a;
      t.row("  " + s.instruction->name + " over " + axes,
            sim::si(run.collectives[static_cast<std::size_t>(s.collective)].time_s(), "s"),
            sim::si(double(s.cost.collective_bytes), "B"));
    }
  for (const auto& a : hp.approximations) t.row("approximation", a);
  t.row("wall time", sim::fixed(rep.simulator.wall_time_s, 3), "s");
  return RunOutput{j, t.str(), run.trace_json};
}

}  // namespace workloads
