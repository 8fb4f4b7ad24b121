#include "workloads/train/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "sim/kernel.h"
#include "sim/output.h"
#include "sim/trace.h"
#include "workloads/pod_report.h"
#include "workloads/report.h"

namespace workloads {

namespace {

// The step's work, over all chips.
struct Work {
  double flops = 0;        // model training FLOPs (forward + backward, matmuls + elementwise)
  double model_flops = 0;  // matmul FLOPs only: PaLM's MFU numerator (appendix B)
  double tokens = 0;
  double mxu_flops = 0;  // what the MXUs executed (padding included)
};

struct ProgramFlops {
  double mxu = 0, vector = 0;
};

// FLOPs of each of the pod's programs.
std::vector<ProgramFlops> program_flops(const runtime::PodProgram& pod) {
  std::vector<ProgramFlops> out(pod.programs.size());
  for (std::size_t i = 0; i < pod.programs.size(); ++i)
    for (const auto& op : pod.programs[i].ops) {
      if (op.engine.kind == hw::EngineKind::mxu) out[i].mxu += op.flops;
      if (op.engine.kind == hw::EngineKind::vector) out[i].vector += op.flops;
    }
  return out;
}

Work work(const TrainRun& r) {
  Work w;
  const double replicas_x_micro = double(r.spec.parallelism.data.degree) * r.spec.parallelism.microbatches;
  w.flops = r.micro.flops_per_step() * replicas_x_micro;
  w.model_flops = r.micro.matmul_flops_per_step() * replicas_x_micro;
  w.tokens = double(r.micro.tokens()) * replicas_x_micro;
  const runtime::PodProgram& pod = r.program.pod;
  const std::vector<ProgramFlops> flops = program_flops(pod);
  for (std::uint32_t c = 0; c < pod.chip_count(); ++c) w.mxu_flops += flops[pod.program_of[c]].mxu;
  return w;
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0.0 : s / double(v.size());
}

nlohmann::json axes_json(const ParallelAxes& a) { return {{"axes", a.axes}, {"degree", a.degree}}; }

std::size_t fullest_chip(const std::vector<ChipMemory>& memory) {
  std::size_t worst = 0;
  for (std::size_t c = 1; c < memory.size(); ++c)
    if (memory[c].total() > memory[worst].total()) worst = c;
  return worst;
}

double ideal_bubble(std::uint32_t p, std::uint32_t m) { return double(p - 1) / double(m + p - 1); }

}  // namespace

nlohmann::json train_report(const TrainRun& r) {
  const Work w = work(r);
  const hw::ChipConfig& chip = r.exp.chip;
  const TrainParallelism& par = r.spec.parallelism;
  const double step = r.run.step_time_s;
  const double peak = chip.peak_flops_per_s() * double(r.layout.chips());

  nlohmann::json rep = report_header(r.exp);
  nlohmann::json res = pod_result(r.exp, summarize(r.exp, r.run), w.flops);
  res["model_flops"] = w.model_flops;
  res["mfu"] = step > 0 ? w.model_flops / step / peak : 0.0;
  res["mxu_utilization"] = step > 0 ? w.mxu_flops / step / peak : 0.0;
  res["tokens"] = w.tokens;
  res["tokens_per_s"] = step > 0 ? w.tokens / step : 0.0;
  const TrainMeasurement& m = r.measured;
  if (par.pipeline.degree > 1) {
    res["pipeline"] = {{"stages", par.pipeline.degree},
                       {"microbatches", par.microbatches},
                       {"schedule", to_string(par.schedule)},
                       {"bubble_fraction", m.bubble_fraction},
                       {"bubble_fraction_ideal", ideal_bubble(par.pipeline.degree, par.microbatches)},
                       {"span_s", m.span_s()},
                       {"stage_busy_s", m.stage_busy_s},
                       {"peak_microbatches_in_flight", m.peak_in_flight}};
  } else {
    res["pipeline"] = nullptr;
  }
  const std::size_t worst = fullest_chip(r.memory);
  const ChipMemory& mem = r.memory[worst];
  res["memory"] = {{"per_chip_bytes", mem.total()},
                   {"capacity_bytes", chip.hbm.capacity_bytes},
                   {"params_bytes", mem.params},
                   {"grads_bytes", mem.grads},
                   {"optimizer_bytes", mem.optimizer},
                   {"activations_bytes", mem.activations},
                   {"activations_per_microbatch_bytes", mem.activations_per_microbatch},
                   {"microbatches_in_flight", mem.microbatches_in_flight},
                   {"chip", worst},
                   {"fits", mem.total() <= chip.hbm.capacity_bytes}};
  res["functional"] = nullptr;
  res["parallelism"] = {{"data", axes_json(par.data)},
                        {"tensor", axes_json(par.tensor)},
                        {"pipeline", axes_json(par.pipeline)},
                        {"microbatches", par.microbatches},
                        {"microbatch_size", r.spec.microbatch_size()},
                        {"global_batch", r.spec.global_batch},
                        {"schedule", to_string(par.schedule)},
                        {"optimizer", r.spec.optimizer.name},
                        {"overlap", r.spec.overlap},
                        {"sync_gradients", par.sync_gradients},
                        {"elementwise", to_string(r.spec.elementwise)}};
  res["phases"] = {
      {"forward_s", mean(m.forward_s)}, {"backward_s", mean(m.backward_s)}, {"optimizer_s", mean(m.optimizer_s)}};
  res["model"] = {{"type", r.micro.type},
                  {"params", r.micro.param_count()},
                  {"layers", r.micro.layers.size()},
                  {"seq_len", r.micro.seq_len}};
  rep["result"] = res;

  nlohmann::json colls = pod_collectives(r.run);
  for (std::size_t i = 0; i < colls.size(); ++i)
    colls[i]["purpose"] = r.program.gradient_collective[i] ? "gradients" : "tensor_parallel";
  rep["collectives"] = colls;

  nlohmann::json per_chip = pod_per_chip(r.exp, r.run);
  const std::vector<ProgramFlops> flops = program_flops(r.program.pod);
  for (std::uint32_t c = 0; c < r.layout.chips(); ++c) {
    const ChipRole& role = r.layout.roles[c];
    const ChipMemory& cm = r.memory[c];
    const ProgramFlops& f = flops[r.program.pod.program_of[c]];
    nlohmann::json& pc = per_chip[c];
    pc["ranks"] = {{"data", role.data}, {"tensor", role.tensor}, {"stage", role.stage}};
    pc["forward_s"] = m.forward_s[c];
    pc["backward_s"] = m.backward_s[c];
    pc["optimizer_s"] = m.optimizer_s[c];
    pc["end_s"] = r.run.chips[c].end_s;
    pc["ops"] = r.program.pod.chip(c).ops.size();
    pc["mxu_flops"] = f.mxu;
    pc["vector_flops"] = f.vector;
    pc["memory"] = {{"total_bytes", cm.total()},
                    {"params_bytes", cm.params},
                    {"grads_bytes", cm.grads},
                    {"optimizer_bytes", cm.optimizer},
                    {"activations_bytes", cm.activations},
                    {"activations_per_microbatch_bytes", cm.activations_per_microbatch},
                    {"microbatches_in_flight", cm.microbatches_in_flight}};
  }
  rep["per_chip"] = per_chip;
  rep["simulator"] = pod_simulator_section(r.exp, r.wall_time_s, r.run);
  return rep;
}

std::string train_table(const TrainRun& r, const nlohmann::json& report) {
  const nlohmann::json& res = report["result"];
  const TrainParallelism& par = r.spec.parallelism;
  auto degree = [](const ParallelAxes& a) {
    std::string s = std::to_string(a.degree);
    if (!a.axes.empty()) {
      s += " (";
      for (std::size_t i = 0; i < a.axes.size(); ++i) s += (i ? "," : "") + a.axes[i];
      s += ")";
    }
    return s;
  };
  sim::Table t("tpusim: " + r.exp.name + " (train " + r.micro.type + ", " + sim::si(double(r.micro.param_count()), "") +
               " params, on " + std::to_string(r.layout.chips()) + " x " + r.exp.chip.name + ")");
  t.row("data x tensor x pipeline", degree(par.data) + " x " + degree(par.tensor) + " x " + degree(par.pipeline));
  t.row("batch", std::to_string(r.spec.global_batch) + " = " + std::to_string(par.data.degree) + " replicas x " +
                     std::to_string(par.microbatches) + " microbatches x " + std::to_string(r.spec.microbatch_size()));
  t.row("optimizer, overlap", r.spec.optimizer.name + ", " + (r.spec.overlap ? "on" : "off"));
  t.row("step time", sim::si(res["step_time_s"].get<double>(), "s"));
  t.row("tokens/s", sim::si(res["tokens_per_s"].get<double>(), ""));
  t.row("MFU", sim::fixed(100.0 * res["mfu"].get<double>(), 1), "%");
  t.row("arithmetic intensity", sim::fixed(res["arithmetic_intensity"].get<double>(), 1), "FLOP/B");
  t.row("forward / backward / optimizer", sim::si(res["phases"]["forward_s"].get<double>(), "s") + " / " +
                                              sim::si(res["phases"]["backward_s"].get<double>(), "s") + " / " +
                                              sim::si(res["phases"]["optimizer_s"].get<double>(), "s"));
  const auto& comm = res["communication"];
  t.row("compute (per chip)", sim::si(comm["compute_time_s"].get<double>(), "s"));
  t.row("communication (per chip)", sim::si(comm["collective_time_s"].get<double>(), "s"));
  t.row("exposed communication", sim::si(comm["exposed_time_s"].get<double>(), "s"));
  t.row("overlap fraction",
        comm["overlap_fraction"].is_null() ? "-" : sim::fixed(comm["overlap_fraction"].get<double>(), 3));
  if (!res["pipeline"].is_null()) {
    const auto& p = res["pipeline"];
    t.row("pipeline", std::to_string(par.pipeline.degree) + " stages, " + std::to_string(par.microbatches) +
                          " microbatches, " + to_string(par.schedule));
    t.row("bubble (measured / ideal)", sim::fixed(p["bubble_fraction"].get<double>(), 3) + " / " +
                                           sim::fixed(p["bubble_fraction_ideal"].get<double>(), 3));
  }
  t.row("bound (measured)", res["roofline"]["bound"].get<std::string>());
  if (!res["functional"].is_null()) {  // functional mini-training (train_functional.h)
    const auto& f = res["functional"];
    auto sci = [](double v) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.3g", v);
      return std::string(buf);
    };
    t.row("functional: loss", sim::fixed(f["loss_per_step"][0].get<double>(), 4) + " -> " +
                                  sim::fixed(f["final_loss"].get<double>(), 4) + " after " +
                                  std::to_string(f["steps"].get<int>()) + " SGD steps (lr " +
                                  sci(f["learning_rate"].get<double>()) + ", gradients " +
                                  (par.sync_gradients ? "all-reduced" : "not synchronized") + ")");
    t.row("functional: replicas' max weight diff", sci(f["replicas_max_weight_diff"].get<double>()));
    if (!f["reference_step1"].is_null())
      t.row("functional: step 1 vs double reference",
            sci(f["reference_step1"]["max_abs_diff"].get<double>()) +
                " <= " + sci(f["reference_step1"]["bound"].get<double>()) + ": " +
                (f["matches_reference"].get<bool>() ? "matches" : "DOES NOT MATCH"));
  }
  t.row("ops, wall time", std::to_string(report["per_chip"][0]["ops"].get<std::size_t>()) + " ops on chip 0, " +
                              sim::fixed(report["simulator"]["wall_time_s"].get<double>(), 3) + " s");
  const ChipMemory& mem = r.memory[res["memory"]["chip"].get<std::size_t>()];
  t.section("memory, fullest chip (" + std::to_string(res["memory"]["chip"].get<std::size_t>()) + ")");
  t.row("total / capacity",
        binary_bytes(double(mem.total())) + " / " + binary_bytes(double(r.exp.chip.hbm.capacity_bytes)));
  t.row("parameters, gradients", binary_bytes(double(mem.params)) + ", " + binary_bytes(double(mem.grads)));
  t.row("optimizer state", binary_bytes(double(mem.optimizer)));
  t.row("activations", binary_bytes(double(mem.activations)) + " = " + std::to_string(mem.microbatches_in_flight) +
                           " in flight x " + binary_bytes(double(mem.activations_per_microbatch)));
  return t.str();
}

std::string train_trace(const TrainRun& r) {
  static const char* kIciQueueNames[] = {"ici tensor-parallel", "ici gradients", "ici send", "ici recv (waiting)"};
  constexpr std::uint32_t kPipelineTrack = 0;
  sim::TraceWriter tw;
  for (std::uint32_t c = 0; c < r.layout.chips(); ++c) {
    const ChipRole& role = r.layout.roles[c];
    tw.name_process(c, "chip" + std::to_string(c) + " (stage " + std::to_string(role.stage) + ", data " +
                           std::to_string(role.data) + ", tensor " + std::to_string(role.tensor) + ")");
    tw.name_track(c, kPipelineTrack, "pipeline tasks");
    const hw::Program& prog = r.program.pod.chip(c);
    const auto& timing = *r.run.chips[c].ops;
    std::vector<char> named(4 * 1000 + 8, 0);
    for (std::size_t i = 0; i < prog.ops.size(); ++i) {
      const hw::Op& op = prog.ops[i];
      const std::uint32_t tid = 1 + static_cast<std::uint32_t>(op.engine.kind) * 1000 + std::min(op.engine.index, 999u);
      if (!named[tid]) {
        named[tid] = 1;
        tw.name_track(c, tid,
                      op.engine.kind == hw::EngineKind::ici && op.engine.index < 4
                          ? std::string(kIciQueueNames[op.engine.index])
                          : std::string(hw::engine_kind_name(op.engine.kind)) + std::to_string(op.engine.index));
      }
      tw.op(c, tid, op.name, timing[i].start_ps, timing[i].end_ps, hw::engine_kind_name(op.engine.kind));
    }
    const ChipProgramMap& map = r.program.map(c);
    auto slice = [&](const std::string& name, std::uint32_t begin, std::uint32_t end, bool own_work_only) {
      std::uint64_t lo = UINT64_MAX, hi = 0;
      for (std::uint32_t i = begin; i < end; ++i) {
        if (own_work_only && !is_task_work(prog.ops[i])) continue;
        lo = std::min(lo, timing[i].start_ps);
        hi = std::max(hi, timing[i].end_ps);
      }
      if (lo <= hi) tw.op(c, kPipelineTrack, name, lo, hi, "pipeline");
    };
    for (const auto& t : map.tasks)
      slice(std::string(t.task.backward ? "B" : "F") + std::to_string(t.task.microbatch), t.begin, t.end, true);
    slice("optimizer", map.optimizer_begin, map.optimizer_end, false);
  }
  return tw.json();
}

}  // namespace workloads
