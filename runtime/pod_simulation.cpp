#include "runtime/pod_simulation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <systemc>

#include "hw/host_link.h"
#include "hw/sparsecore.h"
#include "interconnect/algorithms.h"
#include "interconnect/network_factory.h"
#include "runtime/busy_time.h"
#include "runtime/limits.h"
#include "runtime/program_trace.h"
#include "sim/error.h"
#include "sim/host.h"
#include "sim/kernel.h"
#include "sim/log.h"
#include "sim/trace.h"
#include "sim/units.h"

namespace runtime {

namespace {

using sim::ps_to_seconds;

interconnect::Topology validated_topology(const interconnect::PodNetworkConfig& cfg) {
  cfg.validate();
  return cfg.make_topology();
}

// A receive occupies no link of its chip: its duration is waiting, so it
// does not count as communication time.
bool is_communication(const hw::Op& op) {
  return op.engine.kind == hw::EngineKind::ici && !std::holds_alternative<hw::RecvOp>(op.payload);
}

// chip<N>.program: what the chip's ops did over the step, from their times.
// Communication is hidden while the chip does its own work on any engine:
// computing, or streaming operands through HBM (an optimizer's HBM-bound
// update hides an all-reduce as well as a matmul).
// The network's figures over the run: what every link carried (summed, so
// the group stays small on a pod of thousands of links; the report's links
// list has each one), how busy the busiest and the mean link was, and what
// the network model did.
void network_stats(sim::StatGroup& g, const PodRunResult& r) {
  double bytes = 0, busy = 0;
  for (const LinkTraffic& l : r.links) {
    bytes += double(l.bytes);
    busy += ps_to_seconds(l.busy_ps);
  }
  g.scalar("links", double(r.links.size()), "links", "link directions of the pod");
  g.scalar("link_bytes", bytes, "B", "bytes carried, summed over link directions");
  g.scalar("link_busy_time", busy, "s", "time with a transfer on the link, summed over link directions");
  g.scalar("link_utilization_max", r.link_utilization_max, "1", "busy time / step time of the busiest link");
  g.scalar("link_utilization_mean", r.link_utilization_mean, "1", "busy time / step time, mean over links");
  g.scalar("messages", double(r.messages_carried), "messages", "messages the network carried");
}

// across[i]: whether collective i crosses slices (its DCN time); DCN
// figures only for pods of several slices (`slices`).
// `host_engines`: the first DMA engine index of the chip's host link
// (hw/host_link.h); host-link figures only when the program uses it.
void program_stats(sim::StatGroup& g, const hw::Program& prog, const std::vector<hw::OpTiming>& timings,
                   std::uint64_t end_ps, const std::vector<char>& across, bool slices, std::uint32_t host_engines) {
  std::vector<Interval> compute, work, comm, dcn, host, sparsecore;
  double host_bytes = 0;
  for (std::size_t i = 0; i < timings.size(); ++i) {
    const auto kind = prog.ops[i].engine.kind;
    const Interval iv{timings[i].start_ps, timings[i].end_ps};
    if (is_communication(prog.ops[i])) comm.push_back(iv);
    if (const auto* op = std::get_if<hw::DmaOp>(&prog.ops[i].payload);
        op && kind == hw::EngineKind::dma && prog.ops[i].engine.index >= host_engines &&
        prog.ops[i].engine.index < host_engines + hw::kHostDmaEngines) {
      host.push_back(iv);
      host_bytes += double(op->bytes);
    }
    // The SparseCores' own flows (hw/sparsecore.h: the DMA engines after the
    // host link's) and the collectives offloaded to them.
    if ((kind == hw::EngineKind::dma && prog.ops[i].engine.index >= host_engines + hw::kHostDmaEngines) ||
        (kind == hw::EngineKind::ici && hw::is_sparsecore_ici_queue(prog.ops[i].engine.index)))
      sparsecore.push_back(iv);
    if (const auto* op = std::get_if<hw::CommOp>(&prog.ops[i].payload); op && across.at(op->collective))
      dcn.push_back(iv);
    if (kind == hw::EngineKind::mxu || kind == hw::EngineKind::vector) compute.push_back(iv);
    if (kind != hw::EngineKind::ici) work.push_back(iv);
  }
  compute = merge(std::move(compute));
  work = merge(std::move(work));
  comm = merge(std::move(comm));
  dcn = merge(std::move(dcn));
  g.scalar("ops", double(prog.ops.size()), "ops", "ops in the chip's program");
  g.scalar("end_time", ps_to_seconds(end_ps), "s", "completion of the chip's last op");
  g.scalar("compute_time", ps_to_seconds(length(compute)), "s", "time with an MXU or vector op running");
  g.scalar("communication_time", ps_to_seconds(length(comm)), "s",
           "time with a collective or a send running (receives only wait)");
  g.scalar("hidden_communication_time", ps_to_seconds(overlap(work, comm)), "s",
           "communication time while an MXU, vector or DMA op of the chip runs");
  if (!host.empty()) {
    host = merge(std::move(host));
    g.scalar("host_transfer_bytes", host_bytes, "B", "bytes copied to and from host memory over the host link");
    g.scalar("host_transfer_time", ps_to_seconds(length(host)), "s", "time with a host-link copy running");
    g.scalar("hidden_host_transfer_time", ps_to_seconds(overlap(compute, host)), "s",
             "host-link copy time while an MXU or vector op of the chip runs");
  }
  if (!sparsecore.empty()) {
    sparsecore = merge(std::move(sparsecore));
    g.scalar("sparsecore_time", ps_to_seconds(length(sparsecore)), "s",
             "time with a SparseCore op running: its own work or a collective offloaded to it");
    g.scalar("hidden_sparsecore_time", ps_to_seconds(overlap(compute, sparsecore)), "s",
             "SparseCore time while an MXU or vector op of the chip runs (what it took off the TensorCore's path)");
  }
  if (!slices) return;
  g.scalar("dcn_time", ps_to_seconds(length(dcn)), "s", "time with a collective across slices running");
  g.scalar("hidden_dcn_time", ps_to_seconds(overlap(work, dcn)), "s",
           "time with a collective across slices running while an MXU, vector or DMA op of the chip runs");
}

// Per collective, CollectiveTiming::exposed_s: each simulated chip's ops in
// it, less the time the chip's MXU, vector or DMA ops covered, weighted by
// the chips the simulated chip stands for (its group) and averaged over the
// chips that took part.
std::vector<double> exposed_per_collective(const PodProgram& pp, std::size_t collectives,
                                           const std::vector<std::vector<int>>& group_of,
                                           const std::vector<std::unique_ptr<hw::Sequencer>>& seqs) {
  std::vector<double> exposed_ps(collectives, 0.0), chips(collectives, 0.0);
  for (std::size_t c = 0; c < group_of.size(); ++c) {
    if (group_of[c].empty() || !seqs[c]) continue;
    const hw::Program& prog = pp.chip(static_cast<int>(c));
    const std::vector<hw::OpTiming>& timings = seqs[c]->timings();
    std::vector<Interval> work;
    for (std::size_t i = 0; i < timings.size(); ++i)
      if (prog.ops[i].engine.kind != hw::EngineKind::ici) work.emplace_back(timings[i].start_ps, timings[i].end_ps);
    work = merge(std::move(work));
    const double weight = double(group_of[c].size());
    std::vector<char> seen(collectives, 0);
    for (std::size_t i = 0; i < timings.size(); ++i) {
      const auto* op = std::get_if<hw::CommOp>(&prog.ops[i].payload);
      if (!op) continue;
      exposed_ps[op->collective] += weight * double(uncovered({timings[i].start_ps, timings[i].end_ps}, work));
      if (!seen[op->collective]) chips[op->collective] += weight;
      seen[op->collective] = 1;
    }
  }
  std::vector<double> out(collectives, 0.0);
  for (std::size_t i = 0; i < collectives; ++i)
    if (chips[i] > 0) out[i] = exposed_ps[i] / chips[i] / sim::kPsPerSecond;
  return out;
}

// The wrapping axes along which the pod's programs are invariant: a chip
// and its neighbour one step up the axis run the same program, and each
// peer-table entry of the neighbour is the chip's moved one step up. The
// collectives' plans are checked against the translations separately.
std::vector<int> invariant_axes(const interconnect::Topology& topo, const PodProgram& pp) {
  std::vector<int> axes;
  const int n = topo.chips();
  // With several slices, the DCN axes (slice shifts) and the ICI axes that
  // move hosts onto hosts (Translations::hosts_move): an ICI axis along
  // which a host's chips lie (x, with 4 or 8 chips per host) does not. None
  // with a degraded link (Translations::candidate_axes).
  for (const int a : interconnect::Translations::candidate_axes(topo)) {
    const interconnect::Translations step(topo, {a});
    const int one_up = topo.neighbor(0, a, +1);
    bool same = true;
    for (int c = 0; c < n && same; ++c) {
      const int up = step.moved(c, 0, one_up);
      same = pp.program_of[c] == pp.program_of[up];
      if (!same || pp.peers.empty()) continue;
      const auto& mine = pp.peers[c];
      const auto& theirs = pp.peers[up];
      same = mine.size() == theirs.size();
      for (std::size_t k = 0; k < mine.size() && same; ++k)
        same = mine[k] == PodProgram::kNoPeer
                   ? theirs[k] == PodProgram::kNoPeer
                   : theirs[k] == static_cast<std::uint32_t>(step.moved(int(mine[k]), 0, one_up));
    }
    if (same) axes.push_back(a);
  }
  return axes;
}

// Whether a collective's groups span slices (its time is DCN time).
bool crosses_slices(const interconnect::CollectivePlan& plan, const interconnect::Topology& t) {
  return std::any_of(plan.groups.begin(), plan.groups.end(), [&](const std::vector<int>& g) {
    return std::any_of(g.begin(), g.end(), [&](int c) { return t.slice_of(c) != t.slice_of(g.front()); });
  });
}

// Whether the network may use translations: with the replica shortcuts, on
// the fluid network.
bool may_translate(const PodConfig& config, Shortcuts use) {
  return use.replicas && use.translations && config.network.model == interconnect::NetworkModel::fluid;
}

// The translations the network may use: along the axes where the programs
// are invariant (each collective's plan is checked against them in
// elaborate); none where it may not.
interconnect::Translations candidate_translations(const PodConfig& config, const PodProgram& pp,
                                                  const interconnect::Topology& topology, Shortcuts use) {
  if (!may_translate(config, use)) return {};
  return interconnect::Translations(topology, invariant_axes(topology, pp));
}

}  // namespace

PlanCover plan_cover(const PodConfig& config, const PodProgram& pp, Shortcuts use) {
  PlanCover out;
  const interconnect::PodNetworkConfig& cfg = config.network;
  if (!may_translate(config, use)) return out;
  const interconnect::Topology topology = validated_topology(cfg);
  if (static_cast<int>(pp.chip_count()) != topology.chips()) return out;
  const interconnect::Translations t = candidate_translations(config, pp, topology, use);
  if (t.none()) return out;
  out.chips_per_end = t.order();
  const interconnect::Mesh mesh(topology, cfg.mesh);
  std::map<std::string, double> fraction;  // per distinct plan
  for (std::size_t i = 0; i < pp.collectives.size(); ++i) {
    interconnect::CollectiveSpec spec = pp.collectives[i];
    spec.functional = i < pp.collective_data.size();
    auto [it, fresh] = fraction.emplace(collective_key(spec), 1.0);
    if (!fresh) continue;
    if (const auto along = interconnect::images_along(topology, mesh, spec, t.axes()))
      for (const int a : *along) it->second /= topology.size(a);
  }
  if (!fraction.empty()) {
    double sum = 0;
    for (const auto& [key, f] : fraction) sum += f;
    out.planned_fraction = sum / double(fraction.size());
  }
  return out;
}

PodSimulation::PodSimulation(const PodConfig& config, const PodProgram& program, Shortcuts use)
    : config_(config), pp_(program), use_(use), topology_(validated_topology(config.network)) {}

PodSimulation::~PodSimulation() {
  // Modules go before the next reset_kernel(); collectives before the network.
  seqs_.clear();
  engines_.clear();
  chips_.clear();
  next_delta_.reset();
  p2p_.reset();
  collectives_.reset();
  reduction_.reset();
  sparsecore_calendar_.reset();
  calendar_.reset();
  net_.reset();
}

void PodSimulation::elaborate(const Observers& observers) {
  const interconnect::PodNetworkConfig& cfg = config_.network;
  const interconnect::Mesh mesh(topology_, cfg.mesh);
  const int n = topology_.chips();
  if (static_cast<int>(pp_.chip_count()) != n) throw std::logic_error("one program per chip expected");
  if (pp_.collectives.size() >= PointToPoint::kTagSpace)
    throw std::logic_error("too many collectives for the message tag space");

  // Which programs name each collective, and so how many chips join it: a
  // pipeline stage's collectives are joined by its chips only.
  std::vector<std::vector<std::uint32_t>> naming(pp_.collectives.size());
  std::vector<std::size_t> chips_of_program(pp_.programs.size(), 0);
  for (int c = 0; c < n; ++c) ++chips_of_program[pp_.program_of[c]];
  for (std::uint32_t p = 0; p < pp_.programs.size(); ++p)
    for (const auto& op : pp_.programs[p].ops)
      if (const auto* comm = std::get_if<hw::CommOp>(&op.payload)) {
        auto& programs = naming.at(comm->collective);
        if (programs.empty() || programs.back() != p) programs.push_back(p);
      }

  // The translations the network may use: along axes where the programs
  // are invariant, if every collective's plan is too (checked below). Where
  // the planner makes chips their neighbours' images by construction
  // (interconnect::images_along), only the chips at coordinate 0 along
  // those axes are planned: the others are never simulated, so a
  // superpod's plan costs what its orbit chips' schedules do, not what its
  // 18432 devices' would.
  const interconnect::Translations candidate = candidate_translations(config_, pp_, topology_, use_);

  // Collectives with equal specs share one plan: a training step has one
  // gradient all-reduce per layer, mostly of the same size.
  std::vector<std::shared_ptr<const interconnect::CollectivePlan>> plans;
  std::vector<interconnect::CollectiveSpec> specs;
  std::vector<std::string> keys;  // collective_key of each of specs
  // Plans, specs and the per-collective tables below, made again with every
  // chip planned if the translations are refused after all.
  const auto plan_all = [&](bool reduced) {
    plans.clear();
    specs.clear();
    keys.clear();
    across_slices_.clear();
    dcn_traffic_.clear();
    // A collective whose plan has groups no chip of which joins it (another
    // pipeline stage's) gets a plan without their schedules, so that
    // simulating it costs what its own chips do, not what the pod's would.
    std::map<std::string, std::shared_ptr<const interconnect::CollectivePlan>> planned;
    std::map<const interconnect::CollectivePlan*, char> crosses;  // per plan: whether its groups span slices
    std::map<const interconnect::CollectivePlan*, std::vector<interconnect::SliceTraffic>> traffic_of;
    std::vector<char> names(pp_.programs.size(), 0);
    for (std::size_t i = 0; i < pp_.collectives.size(); ++i) {
      interconnect::CollectiveSpec spec = pp_.collectives[i];
      spec.functional = i < pp_.collective_data.size();
      const std::string key = collective_key(spec);
      auto& plan = planned[key];
      if (!plan) {
        spec.validate(cfg);
        std::optional<std::vector<int>> images;
        if (reduced) images = interconnect::images_along(topology_, mesh, spec, candidate.axes());
        plan = std::make_shared<const interconnect::CollectivePlan>(
            interconnect::plan_collective(topology_, mesh, cfg.link, spec, images.value_or(std::vector<int>{})));
      }
      std::string joined_by = key + "|programs";
      for (const std::uint32_t p : naming[i]) joined_by += " " + std::to_string(p);
      auto& own = planned[joined_by];
      if (!own) {
        for (const std::uint32_t p : naming[i]) names[p] = 1;
        // Groups none of whose chips join: copied without their schedules only
        // if one has any (a 4096-chip plan's copy costs a tenth of a 4096-chip
        // step's elaboration).
        std::vector<const std::vector<int>*> idle;
        bool restrict = false;
        for (const auto& group : plan->groups)
          if (std::none_of(group.begin(), group.end(), [&](int c) { return names[pp_.program_of[c]] != 0; })) {
            idle.push_back(&group);
            restrict = restrict ||
                       std::any_of(group.begin(), group.end(), [&](int c) { return !plan->chips[c].streams.empty(); });
          }
        for (const std::uint32_t p : naming[i]) names[p] = 0;
        if (restrict) {
          interconnect::CollectivePlan restricted = *plan;
          for (const std::vector<int>* group : idle)
            for (const int c : *group) restricted.chips[c].streams.clear();
          own = std::make_shared<const interconnect::CollectivePlan>(std::move(restricted));
        } else {
          own = plan;
        }
      }
      plans.push_back(own);
      specs.push_back(spec);
      keys.push_back(key);
      auto [crossing, fresh] = crosses.emplace(plan.get(), 0);  // once per plan, not per collective
      if (fresh) crossing->second = crosses_slices(*plan, topology_) ? 1 : 0;
      across_slices_.push_back(crossing->second);
      // What crosses the DCN, counted from the plan the chips run (a stage's
      // own), once per plan.
      auto [traffic, counted] = traffic_of.emplace(own.get(), std::vector<interconnect::SliceTraffic>{});
      if (counted && crossing->second) traffic->second = interconnect::slice_traffic(*own, topology_);
      dcn_traffic_.push_back(traffic->second);
    }
  };
  plan_all(!candidate.none());

  // Each chip's representative (itself unless reduced) and each
  // representative's group, in chip order.
  rep_of_.assign(n, 0);
  group_of_.assign(n, {});
  {
    std::vector<int> first(pp_.programs.size(), -1);
    for (int c = 0; c < n; ++c) {
      int& f = first[pp_.program_of[c]];
      if (!use_.replicas || f < 0) f = c;
      rep_of_[c] = f;
      group_of_[f].push_back(c);
    }
  }

  // The translations, if every collective's plan is invariant under them.
  translations_ = {};
  if (!candidate.none()) {
    std::map<const interconnect::CollectivePlan*, interconnect::Invariance> checked;  // per plan
    uneven_.assign(plans.size(), {});
    std::string why;
    for (std::size_t i = 0; i < plans.size() && why.empty(); ++i) {
      auto [it, fresh] = checked.emplace(plans[i].get(), interconnect::Invariance{});
      if (fresh) it->second = candidate.invariance(*plans[i]);
      why = it->second.blocker;
      uneven_[i] = it->second;
    }
    if (why.empty()) {
      translations_ = candidate;
    } else {
      uneven_.assign(plans.size(), {});
      spdlog::debug("pod: no translations ({})", why);
      if (std::any_of(plans.begin(), plans.end(), [](const auto& p) { return !p->images_along.empty(); }))
        plan_all(false);
    }
  }
  net_members_.assign(n, {});
  for (int c = 0; c < n; ++c)
    if (translations_.is_rep(c)) net_members_[rep_of_[c]].push_back(c);

  sim::WallTimer elaboration;
  sim::reset_kernel();
  net_ = interconnect::make_network("ici", topology_, cfg);
  if (observers.link_rates) net_->log_link_rates();
  net_->use_translations(translations_);
  // At tile and pe fidelity the chip's HBM is the per-channel model, driven
  // by DMA engines only: reductions stay on the calendar model, apart from
  // the chip. At kernel fidelity they are flows on the chip's fluid HBM
  // (ChipReduction) on simulated chips, and on the calendar on the replicas
  // they stand for.
  calendar_ = std::make_unique<interconnect::VectorUnitReduction>(*net_, cfg.reduction);
  // A SparseCore reduces at the rate HBM feeds it (its arithmetic is not
  // timed: 16 vector subcores of 8 lanes each, tpu-specs.md#v5p.sparsecores_per_chip,
  // outrun the 3 HBM bytes a reduced byte moves).
  interconnect::ReductionConfig sc = cfg.reduction;
  sc.vector_bytes_per_s = std::numeric_limits<double>::infinity();
  if (config_.chip.sparsecore.hbm_bandwidth > 0)
    sc.hbm_bytes_per_s = config_.chip.sparsecore.hbm_bandwidth * config_.chip.sparsecore.count;
  sparsecore_calendar_.reset();
  if (std::any_of(specs.begin(), specs.end(), [](const auto& s) { return s.sparsecore; }))
    sparsecore_calendar_ = std::make_unique<interconnect::VectorUnitReduction>(*net_, sc);
  if (config_.fidelity == hw::Fidelity::kernel) {
    reduction_ = std::make_unique<ChipReduction>(chips_, n, cfg.reduction, cfg.link.packet_bytes, *calendar_,
                                                 sparsecore_calendar_.get(), &sc);
  }
  collectives_ = std::make_unique<PodCollectives>(*net_, reduction(), sparsecore_reduction(), plans, specs,
                                                  std::move(keys), use_.replays);
  // Chips of each program the network simulates.
  std::vector<std::size_t> net_chips_of_program(pp_.programs.size(), 0);
  for (int c = 0; c < n; ++c)
    if (translations_.is_rep(c)) ++net_chips_of_program[pp_.program_of[c]];
  for (std::size_t i = 0; i < naming.size(); ++i) {
    std::size_t joining = 0;
    for (const std::uint32_t p : naming[i]) joining += net_chips_of_program[p];
    collectives_->expect(i, joining);
  }
  joins_.assign(plans.size(), {});
  p2p_ = std::make_unique<PointToPoint>(*net_, pp_);
  next_delta_ = std::make_unique<NextDelta>("ici_done");

  // Chips that share a program share its graph, worked out once.
  std::vector<std::shared_ptr<const hw::ProgramGraph>> graphs(pp_.programs.size());
  chips_.resize(n);
  engines_.resize(n);
  seqs_.resize(n);
  std::size_t ops = 0;
  for (int i = 0; i < n; ++i) {
    const int c = config_.elaborate_backwards ? n - 1 - i : i;
    if (rep_of_[c] != c) continue;
    auto& graph = graphs[pp_.program_of[c]];
    if (!graph) graph = std::make_shared<const hw::ProgramGraph>(pp_.chip(c));
    const ChipScale scale = config_.scale_of(static_cast<std::uint32_t>(c));
    chips_[c] =
        std::make_unique<hw::Chip>(("chip" + std::to_string(c)).c_str(), config_.chip_of(static_cast<std::uint32_t>(c)),
                                   config_.fidelity, 1.0 / scale.compute, static_cast<std::uint32_t>(c));
    engines_[c] =
        std::make_unique<ChipEngines>(*chips_[c], c, net_members_[c], pp_, *collectives_, *p2p_, *next_delta_, joins_);
    seqs_[c] = std::make_unique<hw::Sequencer>(("seq" + std::to_string(c)).c_str(), graph, *engines_[c],
                                               static_cast<std::uint32_t>(c));
    ops += pp_.chip(c).ops.size();
  }
  if (observers.chip0 && chips_.at(0)) observers.chip0(*chips_[0]);
  spdlog::debug("pod: {} chips ({} simulated), {} ops, {} collectives; elaborated in {:.3f} s", n,
                n - std::count(chips_.begin(), chips_.end(), nullptr), ops, pp_.collectives.size(),
                elaboration.seconds());
}

void PodSimulation::run() {
  sim::WallTimer simulation;
  const SimulationEnd end = simulate_within(config_.limits, [this] { return net_->events(); });
  spdlog::debug("pod: simulated {} s in {:.3f} s", sc_core::sc_time_stamp().to_seconds(), simulation.seconds());
  for (const auto& s : seqs_)
    if (s) s->rethrow_failure();
  std::vector<std::string> stuck;
  std::size_t waiting_chips = 0;  // all of them; `stuck` lists the first 12
  for (std::size_t c = 0; c < seqs_.size(); ++c) {
    if (!seqs_[c]) continue;
    const std::vector<std::uint32_t> pending = seqs_[c]->pending_ops();
    if (pending.empty()) continue;
    if (++waiting_chips > 12) continue;
    const hw::Op& op = pp_.chip(static_cast<std::uint32_t>(c)).ops[pending.front()];
    stuck.push_back("chip " + std::to_string(c) + " waits in '" + op.name + "' (" +
                    hw::engine_kind_name(op.engine.kind) + std::to_string(op.engine.index) + "), " +
                    std::to_string(pending.size()) + " ops pending");
  }
  if (stuck.empty()) return;
  std::string msg = end.runaway() ? end.describe(config_.limits) + " with work left"
                                  : "deadlock: the simulation ran out of events with work left";
  for (const auto& s : stuck) msg += "\n  " + s;
  // As many lines as a reader takes in, then how many more there are.
  constexpr std::size_t kMaxLines = 20;
  std::size_t total = 0;
  const std::vector<std::string> waiting = collectives_->pending(kMaxLines, total);
  for (const std::string& line : waiting) msg += "\n  " + line;
  if (total > waiting.size()) msg += "\n  ... and " + std::to_string(total - waiting.size()) + " more";
  throw sim::SimFailure(msg, {{"time_s", sc_core::sc_time_stamp().to_seconds()},
                              {"waiting_chips", double(waiting_chips)},
                              {"pending_collective_steps", double(total)}});
}

PodSimulation::ReplicaCheck PodSimulation::check_replicas() const {
  // Replicas stand in for each other only if every collective and
  // point-to-point message ended at the same time on all members of a group
  // as on their representative. Where
  // a buffer does not divide evenly into ring chunks, and where events of
  // one instant are taken in a different order on different chips, end
  // times differ (from picoseconds up to microseconds on uneven tori).
  ReplicaCheck check;
  check.replay_conflict = collectives_->conflict();
  check.asymmetric = net_->asymmetric();
  const int n = topology_.chips();
  // At kernel fidelity a representative's reductions are flows on its HBM,
  // beside its kernels; a replica's are on the calendar and contend with
  // nothing. They stand for each other only if each replica reduced what
  // its representative did (not so on a mesh without wraparound, where a
  // chip's share of the reductions depends on its place on the line).
  bool uneven_reductions = false;  // a replica reduced a few bytes more or less than its representative
  if (reduction_) {
    for (int c = 0; c < n; ++c) {
      const int r = rep_of_[c];
      // Where a buffer does not divide evenly into ring chunks, chips reduce
      // a few elements more or less: the same work to a part in a thousand.
      const double mine = reduction_->hbm_bytes(translations_.rep(c)), theirs = reduction_->hbm_bytes(r);
      uneven_reductions = uneven_reductions || mine != theirs;
      if (r == c || std::abs(mine - theirs) <= 1e-3 * std::max(mine, theirs)) continue;
      char text[200];
      std::snprintf(text, sizeof text,
                    "chip %d moved %.6g HBM bytes in collective reductions, its representative chip %d %.6g", c, mine,
                    r, theirs);
      check.inexact = text;
      return check;
    }
  }
  // Per chip, for the collective at hand: when it finished, and how many
  // members of its group finished (representatives).
  std::vector<std::uint64_t> at(n, 0);
  std::vector<std::size_t> stamp(n, SIZE_MAX), members(n, 0);
  // Collectives x chips: minutes on a big pod, so under the run's limits.
  LoopGuard guard(config_.limits, "the replica check");
  // With translations every chip of an orbit ended when its orbit chip did
  // (all orbits are translations.order() chips, of one program, whose
  // representative is an orbit chip), so the orbit chips' ends give the
  // same spread and membership as every chip's, without a row per chip
  // and collective. Returns false where, so counted, a chip took no part as
  // its representative did: the check over every chip then names it.
  const auto over_collectives = [&](bool by_orbit) {
    const std::size_t weight = by_orbit ? static_cast<std::size_t>(translations_.order()) : 1;
    std::fill(stamp.begin(), stamp.end(), SIZE_MAX);
    for (std::size_t i = 0; i < collectives_->size(); ++i) {
      guard.check();
      const auto finished = by_orbit ? collectives_->simulated_finish_times(i) : collectives_->finish_times(i);
      for (const auto& [c, t] : finished) {
        stamp[c] = i;
        at[c] = t;
        members[c] = 0;
      }
      std::uint64_t spread = 0;
      for (const auto& [c, t] : finished) {
        const int r = rep_of_[c];
        if (stamp[r] != i) {
          if (by_orbit) return false;
          check.inexact = "chip " + std::to_string(c) + " did not take part in collective " + std::to_string(i) +
                          " as chip " + std::to_string(r) + " did";
          return true;
        }
        members[r] += weight;
        spread = std::max(spread, t > at[r] ? t - at[r] : at[r] - t);
      }
      for (const auto& [c, t] : finished) {
        if (rep_of_[c] != c || members[c] == group_of_[c].size()) continue;
        if (by_orbit) return false;
        for (const int m : group_of_[c])
          if (stamp[m] != i) {
            check.inexact = "chip " + std::to_string(m) + " did not take part in collective " + std::to_string(i) +
                            " as chip " + std::to_string(c) + " did";
            return true;
          }
      }
      check.spread_ps += spread;
    }
    return true;
  };
  const std::uint64_t spread_before = check.spread_ps;
  if (!over_collectives(!translations_.none())) {
    check.spread_ps = spread_before;
    over_collectives(false);
  }
  if (!check.inexact.empty()) return check;
  // Point-to-point messages: each member sent and received its own at its
  // representative's instant (so each took part as its representative did,
  // or the run could not have finished); how far their completions lay
  // apart.
  check.spread_ps += p2p_->spread_ps();
  // With translations, a chip's collectives are its orbit chip's images: up
  // to the uneven bytes' link and reduction time apart from its own.
  if (!translations_.none()) {
    for (const interconnect::Invariance& u : uneven_)
      check.spread_ps += static_cast<std::uint64_t>(
          std::ceil(interconnect::uneven_ps(u, topology_, config_.network.link, config_.network.reduction)));
  }
  // What contention cost a representative's reductions its replicas did not
  // pay (they reduce on the calendar): had they paid it too, their
  // collectives could have ended that much later.
  // With translations and uneven chunks the orbit's chips are not in step
  // either, and a chip's concurrent reductions (a torus all-reduce's
  // streams) share its HBM: on the orbit chip their tails land at one
  // instant and share it all the way, on a chip whose tails land a few
  // picoseconds apart the first runs alone for that long and both end
  // that much sooner. That gain feeds the next step's sends, so offsets
  // grow along chains of steps from bytes' time towards a tail's time per
  // step, far past uneven_ps (a 1 GiB all-reduce on 8x8x8 at kernel
  // fidelity: chips 0.27 us apart against 0.025 us). Each step's reduction
  // on any chip takes between the calendar's time and the orbit chip's
  // (whose tails overlap completely, the most they can), and the steps of
  // a chain run one after another on the orbit chip, so the time its
  // reductions ran late (ChipReduction::late_span_ps) bounds what a chain
  // can differ by (docs/performance.md, "Uneven chunks at kernel
  // fidelity").
  if (reduction_) {
    const bool uneven_orbits = std::any_of(uneven_.begin(), uneven_.end(), [](const interconnect::Invariance& u) {
      return u.uneven_bytes > 0 || u.uneven_hops > 0;
    });
    interconnect::Ps missing = 0;
    for (int c = 0; c < n; ++c) {
      if (rep_of_[c] != c) continue;
      if (net_members_[c].size() > 1)
        missing = std::max(missing, reduction_->contention_ps(c));
      else if (uneven_orbits && group_of_[c].size() > 1)
        missing = std::max(missing, reduction_->late_span_ps(c));
    }
    check.spread_ps += missing;
  }
  // Replicas that are not exactly in step (any of the above set them apart,
  // or they reduce a few bytes more or less) drift further apart where a
  // representative's reductions share HBM with its own kernels: a replica
  // that leaves a collective late meets the next one's reductions early in
  // its next kernels, where the others met them later or not at all, and
  // falls further behind (a Transformer's data-parallel step on a 4x4x4
  // torus: 4.8 us after 8 blocks, 0.67 ms after 24; docs/performance.md).
  // How far is bounded only by what the coupled chips' reductions take
  // alone, summed over groups (a lagging stage delays the stages it sends
  // to). That bound is far above the drift seen (2.5 ms against 4.8 us for
  // 8 blocks) and over 1% of most steps whose reductions overlap compute,
  // so it is reported beside the spread and does not decide whether every
  // chip is simulated (docs/performance.md, "Replicas that drift").
  if (reduction_ && (check.spread_ps > 0 || uneven_reductions)) {
    for (int c = 0; c < n; ++c)
      if (rep_of_[c] == c && group_of_[c].size() > 1 && reduction_->coupled(c))
        check.drift_ps += reduction_->alone_ps(c);
  }
  return check;
}

std::vector<PodRunResult::LinkRates> PodSimulation::link_rates(const std::vector<std::uint32_t>& chips) const {
  std::vector<PodRunResult::LinkRates> out;
  // The packet model moves packets, not flows at rates: it logs none.
  if (!net_->logs_link_rates() || std::string(net_->model()) != "fluid") return out;
  // With translations a link's rates are its orbit link's (as its bytes).
  std::map<int, std::vector<std::pair<std::uint64_t, double>>> changes;  // stand-in link -> (time, change)
  const auto stand_in = [&](int l) { return translations_.none() ? l : translations_.link_rep(l); };
  for (const std::uint32_t c : chips)
    for (int a = 0; a < topology_.ici_axes(); ++a)
      for (const int dir : {+1, -1}) {
        const int l = topology_.link_id(static_cast<int>(c), a, dir);
        if (!topology_.link_exists(l)) continue;
        changes[stand_in(l)];
        out.push_back(
            {c, l, std::string(topology_.axis_name(a)) + (dir > 0 ? "+" : "-"), net_->link_bytes_per_s(l), {}});
      }
  for (const interconnect::LinkRateChange& e : net_->link_rate_log()) {
    const auto it = changes.find(e.link);
    if (it != changes.end()) it->second.emplace_back(e.at, e.bytes_per_s);
  }
  for (PodRunResult::LinkRates& lr : out) {
    std::vector<std::pair<std::uint64_t, double>> c = changes.at(stand_in(lr.link));
    std::stable_sort(c.begin(), c.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    lr.rate.emplace_back(0, 0.0);  // idle from the start (a link that never carries anything still has a track)
    double level = 0;
    for (std::size_t k = 0; k < c.size(); ++k) {
      level += c[k].second;
      if (k + 1 < c.size() && c[k + 1].first == c[k].first) continue;
      // Sums of the same rates added and taken away: round-off, not a negative rate.
      const double now = level < 1e-9 * lr.bytes_per_s ? 0.0 : level;
      if (lr.rate.back().first == c[k].first)
        lr.rate.back().second = now;
      else if (lr.rate.back().second != now)
        lr.rate.emplace_back(c[k].first, now);
    }
  }
  return out;
}

PodRunResult PodSimulation::collect(const sim::TraceRequest& trace) const {
  const int n = topology_.chips();
  PodRunResult r;
  r.representative.resize(n);
  r.end_s.resize(n);
  r.timings.resize(n);
  for (int c = 0; c < n; ++c) {
    const int rep = rep_of_[c];
    r.representative[c] = static_cast<std::uint32_t>(rep);
    r.end_s[c] = ps_to_seconds(seqs_[rep]->end_ps());
    r.timings[c] = seqs_[rep]->shared_timings();
    r.step_time_s = std::max(r.step_time_s, r.end_s[c]);
    r.ici_bytes_out.push_back(net_->chip_bytes_out(c));
    r.ici_bytes_in.push_back(net_->chip_bytes_in(c));
    r.reduce_vector_s.push_back(reduction().vector_busy_s(translations_.rep(c)));
    r.reduce_hbm_bytes.push_back(reduction().hbm_bytes(translations_.rep(c)) +
                                 (!reduction_ && sparsecore_calendar_  // the offloaded ones, apart on the calendar
                                      ? sparsecore_calendar_->hbm_bytes(translations_.rep(c))
                                      : 0.0));
  }
  for (int c = 0; c < n; ++c) {
    if (rep_of_[c] != c) continue;
    sim::StatGroup& g = r.stats.group("chip" + std::to_string(c));
    chips_[c]->dump_stats(g, r.step_time_s);
    program_stats(g.group("program"), pp_.chip(c), seqs_[c]->timings(), seqs_[c]->end_ps(), across_slices_,
                  topology_.slices() > 1, config_.chip_of(static_cast<std::uint32_t>(c)).dma_engines);
    sim::StatGroup& red = g.group("reduction");
    red.scalar("vector_busy_time", r.reduce_vector_s[c], "s", "vector-unit time of the chip's collective reductions");
    red.scalar("hbm_bytes", r.reduce_hbm_bytes[c], "B", "HBM bytes the chip's collective reductions read and write");
    r.ops = std::max<std::uint64_t>(r.ops, pp_.chip(c).ops.size());
  }
  if (!translations_.none()) {
    r.orbit_chip.resize(n);
    for (int c = 0; c < n; ++c) r.orbit_chip[c] = static_cast<std::uint32_t>(translations_.rep(c));
  }
  r.chips_simulated = static_cast<int>(n - std::count(chips_.begin(), chips_.end(), nullptr));
  r.reductions_on_chip = reduction_ != nullptr;
  r.collectives_replayed = static_cast<int>(collectives_->replayed());
  const std::vector<double> exposed = exposed_per_collective(pp_, collectives_->size(), group_of_, seqs_);
  LoopGuard guard(config_.limits, "collecting the statistics");  // collectives x chips, below
  for (std::size_t i = 0; i < collectives_->size(); ++i) {
    guard.check();
    CollectiveTiming t;
    t.name = i < pp_.collective_names.size()
                 ? pp_.collective_names[i]
                 : interconnect::Collective::name_of(pp_.collectives[i].op, static_cast<int>(i));
    t.op = pp_.collectives[i].op;
    t.algorithm = collectives_->plan(i).algorithm;
    t.participants = collectives_->plan(i).group_size();
    t.axes = pp_.collectives[i].axes;
    t.exposed_s = exposed[i];
    t.groups = static_cast<int>(collectives_->plan(i).groups.size());
    for (const auto& [c, at] : collectives_->simulated_finish_times(i))
      t.chip_ends.emplace_back(static_cast<std::uint32_t>(c), ps_to_seconds(at));
    t.bytes = pp_.collectives[i].bytes;
    const JoinSpan& joined = joins_[i];
    t.start_s = joined.first == UINT64_MAX ? 0.0 : ps_to_seconds(joined.first);
    if (joined.last_chip >= 0 && joined.last > joined.first) {
      t.gated_by = joined.last_chip;
      t.wait_s = ps_to_seconds(joined.last - joined.first);
    }
    t.end_s = ps_to_seconds(collectives_->end_time(i));
    t.dcn_traffic = dcn_traffic_[i];
    r.collectives.push_back(t);
  }
  double util_sum = 0;
  for (int l = 0; l < topology_.link_slots(); ++l) {
    if (!topology_.link_exists(l)) continue;
    r.links.push_back(LinkTraffic{l, net_->link_bytes(l), net_->link_busy(l)});
    const double u = r.step_time_s > 0 ? ps_to_seconds(net_->link_busy(l)) / r.step_time_s : 0.0;
    r.link_utilization_max = std::max(r.link_utilization_max, u);
    util_sum += u;
  }
  r.link_utilization_mean = r.links.empty() ? 0.0 : util_sum / double(r.links.size());
  r.kernel_events = sim::kernel_events();
  r.network_model = net_->model();
  r.network_events = net_->events();
  r.messages = net_->messages();
  r.messages_carried = net_->messages_carried();
  for (const int a : translations_.axes())  // a DCN axis by its place among them: dcn0, dcn1
    r.symmetric_axes.push_back(topology_.is_dcn_axis(a) ? "dcn" + std::to_string(a - topology_.ici_axes())
                                                        : std::string(topology_.axis_name(a)));
  r.dcn_bytes = net_->dcn_bytes();
  for (int l = topology_.ici_link_slots(); l < topology_.link_slots(); ++l) {
    if (topology_.link_class(l) == interconnect::LinkClass::nic_out)
      r.dcn_nic_busy_max_s = std::max(r.dcn_nic_busy_max_s, ps_to_seconds(net_->link_busy(l)));
  }
  network_stats(r.stats.group("network"), r);
  if (!trace) return r;
  // By default the simulated chips only: a replica's ops are its representative's.
  r.trace_chips = sim::chips_to_trace(trace, r.representative);
  r.link_rates = link_rates(r.trace_chips);
  if (trace.json) {
    sim::TraceWriter tw;
    std::vector<std::vector<std::size_t>> events;
    std::vector<const std::vector<hw::OpTiming>*> timings;
    for (const std::uint32_t c : r.trace_chips) timings.push_back(r.timings[c].get());
    tw.aggregate(trace_bin_ps(trace, timings, r.link_rates));
    for (const std::uint32_t c : r.trace_chips) {
      events.push_back(trace_program(tw, c, pp_.chip(r.representative[c]), *r.timings[c], config_.chip.energy,
                                     r.representative, &pp_.collectives, config_.chip.hbm.bandwidth_bytes_per_s));
    }
    trace_link_rates(tw, r.link_rates);
    trace_messages(tw, pp_, r.trace_chips, r.representative, events, timings);
    r.trace_json = tw.json();
    r.trace_events = tw.ops();
    r.trace_dropped = tw.dropped();
    r.trace_bin_ps = tw.bin_ps();
  }
  return r;
}

}  // namespace runtime
