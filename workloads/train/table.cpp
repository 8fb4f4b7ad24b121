// train_table (report.h): the text table of a training step, in the steps it
// reads in: how the step is split over the chips, how fast it ran and where
// its time went, the sections a step may have (input lengths, experts, DCN,
// pipeline, functional training), and the fullest chip's memory.
#include <cstdio>
#include <string>

#include "sim/output.h"
#include "workloads/pod_report.h"
#include "workloads/report.h"
#include "workloads/train/report.h"
#include "workloads/validation.h"

namespace workloads {

namespace {

// "4 (x,y)": a parallelism's degree and the mesh axes it takes.
std::string degree(const ParallelAxes& a) {
  std::string s = std::to_string(a.degree);
  if (!a.axes.empty()) {
    s += " (";
    for (std::size_t i = 0; i < a.axes.size(); ++i) s += (i ? "," : "") + a.axes[i];
    s += ")";
  }
  return s;
}

// The parallelism, the batch and the training recipe.
void split_rows(sim::Table& t, const TrainRun& r) {
  const TrainParallelism& par = r.spec.parallelism;
  if (par.fsdp.degree > 1) {
    t.row("data x fsdp x tensor x pipeline",
          degree(par.data) + " x " + degree(par.fsdp) + " x " + degree(par.tensor) + " x " + degree(par.pipeline));
  } else {
    t.row("data x tensor x pipeline", degree(par.data) + " x " + degree(par.tensor) + " x " + degree(par.pipeline));
  }
  if (par.context.degree > 1)
    t.row("context", degree(par.context) + ": ring attention, " + std::to_string(r.micro.seq_len) +
                         " tokens of each sequence per chip");
  if (par.zero) t.row("ZeRO", "stage " + std::to_string(par.zero) + " (optimizer state sharded over data)");
  t.row("batch", std::to_string(r.spec.global_batch) + " = " + std::to_string(par.batch_shards()) + " replicas x " +
                     std::to_string(par.microbatches) + " microbatches x " + std::to_string(r.spec.microbatch_size()));
  t.row("optimizer, overlap", r.spec.optimizer.name + ", " + (r.spec.overlap ? "on" : "off"));
  if (r.spec.remat != Remat::none) t.row("remat", to_string(r.spec.remat));
  if (r.spec.execution == Execution::eager)
    t.row("execution", "eager: every op dispatched from the host (" + sim::si(r.spec.eager_dispatch, "s") +
                           " each), no elementwise op fused");
}

// The step's speed and where its time went: compute, communication, waits.
// The trust remark is the report's validation (a kind that runs its step as
// kind: train, such as maxtext, sets its own).
void time_rows(sim::Table& t, const TrainRun& r, const Report& report) {
  const Result& res = report.result;
  const TrainSection& train = *res.train;
  const std::string remark = "(" + (report.validation ? report.validation->note : validation_for(r.exp).note) + ")";
  t.row("step time", sim::si(res.step_time_s, "s"), remark);
  t.row("tokens/s", sim::si(train.tokens_per_s, ""), remark);
  t.row("MFU", sim::fixed(100.0 * res.mfu, 1), "%  " + remark);
  if (r.spec.remat != Remat::none || train.hfu != res.mfu) t.row("HFU", sim::fixed(100.0 * train.hfu, 1), "%");
  t.row("arithmetic intensity", sim::fixed(res.arithmetic_intensity, 1), "FLOP/B");
  // Each phase is the summed spans of its tasks (first op's start to last op's
  // end, train/measure.cpp), and spans on one chip's engines overlap, so the
  // three can add up to more than the step: say so rather than leave a puzzle.
  const double phases = train.forward_s + train.backward_s + train.optimizer_s;
  t.row(
      "forward / backward / optimizer",
      sim::si(train.forward_s, "s") + " / " + sim::si(train.backward_s, "s") + " / " + sim::si(train.optimizer_s, "s"),
      phases > res.step_time_s * (1 + 1e-9) ? "(phases overlap: they sum to " + sim::si(phases, "s") +
                                                  ", the step is " + sim::si(res.step_time_s, "s") + ")"
                                            : "");
  const Communication& comm = res.communication;
  t.row("compute (per chip)", sim::si(comm.compute_time_s.value_or(0.0), "s"));
  t.row("communication (per chip)", sim::si(comm.collective_time_s, "s"));
  t.row("exposed communication", sim::si(comm.exposed_time_s, "s"));
  t.row("overlap fraction", comm.overlap_fraction ? sim::fixed(*comm.overlap_fraction, 3) : "-");
  waiting_rows(t, comm);
}

// Per-replica input lengths and a mixture of experts' routing, when the step has them.
void input_and_expert_rows(sim::Table& t, const TrainRun& r, const TrainSection& train) {
  if (const auto& in = train.input) {
    t.row("input lengths", in->distribution + ", " + std::to_string(in->tokens.size()) +
                               " replicas: " + std::to_string(in->shortest_tokens) + " (replica " +
                               std::to_string(in->shortest_replica) + ") to " + std::to_string(in->longest_tokens) +
                               " (replica " + std::to_string(in->longest_replica) + ") tokens, mean " +
                               sim::fixed(in->mean_tokens, 1) + " of " + std::to_string(train.seq_len));
    if (in->wait_max_gated_by)
      t.row("data-parallel waits", sim::si(in->wait_s, "s") + " in all, longest " + sim::si(in->wait_max_s, "s") +
                                       " (gated by chip " + std::to_string(*in->wait_max_gated_by) + ")");
  }
  if (const auto& e = train.experts) {
    t.row("experts", std::to_string(e->experts) + " (top " + std::to_string(e->top_k) + ", " +
                         std::to_string(e->experts_per_chip) + " per chip over " + degree(r.spec.parallelism.expert) +
                         "), " + e->distribution + " routing");
    t.row("busiest expert", sim::fixed(100.0 * e->busiest_share, 1),
          "% of layer " + std::to_string(e->busiest_layer) + "'s tokens (expert " + std::to_string(e->busiest_expert) +
              "; balanced " + sim::fixed(100.0 / double(e->experts), 1) + " %)");
    t.row("busiest chip / mean", sim::fixed(e->chip_imbalance, 3));
    t.row("dropped tokens", std::to_string(e->dropped_tokens) + " of " + std::to_string(e->routed_tokens));
  }
}

// Traffic between slices and the pipeline's schedule, when the step has them.
void dcn_and_pipeline_rows(sim::Table& t, const TrainRun& r, const Result& res) {
  const TrainParallelism& par = r.spec.parallelism;
  if (res.dcn) {
    t.row("DCN bytes (all chips)", sim::si(res.dcn->bytes, "B"));
    t.row("DCN NICs busy (busiest host)", sim::si(res.dcn->nic_busy_max_s, "s"),
          sim::fixed(100 * res.dcn->nic_utilization_max, 1) + " % of the step");
    t.row("DCN collectives (per chip) / exposed",
          sim::si(res.dcn->time_s, "s") + " / " + sim::si(res.dcn->exposed_time_s, "s"));
  }
  if (res.pipeline) {
    const Pipeline& p = *res.pipeline;
    t.row("pipeline",
          std::to_string(par.pipeline.degree) + " stages, " + std::to_string(par.microbatches) + " microbatches, " +
              to_string(par.schedule) +
              (par.virtual_stages > 1 ? " (" + std::to_string(par.virtual_stages) + " virtual stages)" : ""));
    t.row("bubble (measured / ideal)",
          sim::fixed(p.bubble_fraction, 3) + " / " + sim::fixed(p.bubble_fraction_ideal, 3));
  }
}

// A functional mini-training's losses and checks (functional.h).
void functional_rows(sim::Table& t, const TrainRun& r, const TrainFunctional& f) {
  auto sci = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return std::string(buf);
  };
  t.row("functional: loss", sim::fixed(f.loss_per_step[0], 4) + " -> " + sim::fixed(f.final_loss, 4) + " after " +
                                std::to_string(f.steps) + " SGD steps (lr " + sci(f.learning_rate) + ", gradients " +
                                (r.spec.parallelism.sync_gradients ? "all-reduced" : "not synchronized") + ")");
  t.row("functional: replicas' max weight diff", sci(f.replicas_max_weight_diff));
  if (f.reference_step1)
    t.row("functional: step 1 vs double reference",
          sci(f.reference_step1->max_abs_diff) + " <= " + sci(f.reference_step1->bound) + ": " +
              (f.matches_reference.value_or(false) ? "matches" : "DOES NOT MATCH"));
}

// What the fullest chip holds, part by part, and its traffic to host memory.
void memory_rows(sim::Table& t, const TrainRun& r, const Result& res) {
  const std::size_t fullest = res.memory->chip.value_or(0);
  const ChipMemory& mem = r.memory[fullest];
  t.section("memory, fullest chip (" + std::to_string(fullest) + ")");
  t.row("total / capacity",
        binary_bytes(double(mem.total())) + " / " + binary_bytes(double(r.exp.chip.hbm.capacity_bytes)));
  const Precision& p = r.spec.precision;
  const double stored = bytes_of(p.params), state = r.spec.optimizer.state_bytes_per_param;
  t.row("bytes per parameter", sim::fixed(stored, 0) + " + " + sim::fixed(stored, 0) + " + " + sim::fixed(state, 0) +
                                   " = " + sim::fixed(2 * stored + state, 0) + " (" + to_string(p.params) + ", " +
                                   to_string(p.optimizer) + " " + r.spec.optimizer.name + " state" +
                                   (p.master_copy() ? " with a float32 master copy)" : ")"));
  t.row("parameters, gradients", binary_bytes(double(mem.params)) + ", " + binary_bytes(double(mem.grads)));
  t.row("optimizer state", binary_bytes(double(mem.optimizer)));
  t.row("peak at", "the " + mem.peak_pass);
  t.row("activations", binary_bytes(double(mem.activations)) + " held then, of " + in_flight(mem));
  if (mem.gathered) t.row("gathered weights (fsdp)", binary_bytes(double(mem.gathered)));
  if (mem.rematerialized) t.row("rematerialized layer", binary_bytes(double(mem.rematerialized)));
  if (mem.ring) t.row("ring attention buffers", binary_bytes(double(mem.ring)));
  if (mem.offload_buffers) t.row("host offload buffers", binary_bytes(double(mem.offload_buffers)));
  if (mem.host > 0)
    t.row("in host memory (offload)",
          binary_bytes(double(mem.host)) + " of " + binary_bytes(double(r.exp.chip.host.memory_per_chip())));
  if (const auto& h = res.train->host_offload)
    t.row("host link (offload)", sim::si(h->time_s, "s"),
          sim::si(h->bytes, "B") + " copied, " + sim::si(h->exposed_s, "s") + " not under compute");
}

}  // namespace

std::string train_table(const TrainRun& r, const Report& report) {
  const Result& res = report.result;
  sim::Table t("tpusim: " + r.exp.name + " (train " + r.micro.type + ", " + sim::si(double(r.micro.param_count()), "") +
               " params, on " + pod_label(r.exp) + ")");
  split_rows(t, r);
  time_rows(t, r, report);
  input_and_expert_rows(t, r, *res.train);
  dcn_and_pipeline_rows(t, r, res);
  verdict_rows(t, res.roofline);
  if (const auto* f = std::get_if<TrainFunctional>(&res.functional)) functional_rows(t, r, *f);
  t.row("ops, wall time", std::to_string(report.per_chip[0].ops.value_or(0)) + " ops on chip 0, " +
                              sim::fixed(report.simulator.wall_time_s, 3) + " s");
  memory_rows(t, r, res);
  return t.str();
}

}  // namespace workloads
