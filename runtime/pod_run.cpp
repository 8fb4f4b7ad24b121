#include "runtime/pod_run.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <map>
#include <systemc>

#include "hw/chip.h"
#include "hw/completion.h"
#include "hw/sequencer.h"
#include "interconnect/algorithms.h"
#include "interconnect/collective.h"
#include "interconnect/mesh.h"
#include "interconnect/network_factory.h"
#include "interconnect/reduction.h"
#include "runtime/collective_replay.h"
#include "runtime/point_to_point.h"
#include "runtime/program_trace.h"
#include "sim/error.h"
#include "sim/host.h"
#include "sim/kernel.h"
#include "sim/log.h"
#include "sim/trace.h"

namespace runtime {

namespace {

using Interval = std::pair<std::uint64_t, std::uint64_t>;

std::vector<Interval> merge(std::vector<Interval> v) {
  std::sort(v.begin(), v.end());
  std::vector<Interval> out;
  for (const auto& iv : v) {
    if (iv.second <= iv.first) continue;
    if (!out.empty() && iv.first <= out.back().second)
      out.back().second = std::max(out.back().second, iv.second);
    else
      out.push_back(iv);
  }
  return out;
}

std::uint64_t length(const std::vector<Interval>& v) {
  std::uint64_t s = 0;
  for (const auto& iv : v) s += iv.second - iv.first;
  return s;
}

// Length of the intersection of two merged interval lists.
std::uint64_t overlap(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::uint64_t s = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const std::uint64_t lo = std::max(a[i].first, b[j].first), hi = std::min(a[i].second, b[j].second);
    if (hi > lo) s += hi - lo;
    (a[i].second < b[j].second) ? ++i : ++j;
  }
  return s;
}

double ps_to_s(std::uint64_t ps) { return double(ps) / sim::kPsPerSecond; }

// A receive occupies no link of its chip: its duration is waiting, so it
// does not count as communication time.
bool is_communication(const hw::Op& op) {
  return op.engine.kind == hw::EngineKind::ici && !std::holds_alternative<hw::RecvOp>(op.payload);
}

// Calls completions one delta cycle after they were handed in, in that
// order.
class NextDelta : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(NextDelta);
  explicit NextDelta(sc_core::sc_module_name name) : sc_core::sc_module(name) {
    SC_METHOD(run);
    sensitive << event_;
    dont_initialize();
  }
  void defer(hw::Completion c) {
    if (due_.empty()) event_.notify(sc_core::SC_ZERO_TIME);
    due_.push_back(c);
  }

 private:
  void run() {
    running_.swap(due_);  // completions deferred from here on run in the next delta cycle
    for (const hw::Completion& c : running_) c();
    running_.clear();
  }
  std::vector<hw::Completion> due_, running_;
  sc_core::sc_event event_;
};

// One simulated chip's engines for its sequencer: ICI ops on the pod's
// network (collectives, point-to-point messages), the rest on the chip. An
// ICI op completes in the delta cycle after the network's callback, never
// inside the network's process, so what it sets going (the engine's next
// op; a delta cycle later, the ops that waited for it) comes after the
// network has taken that instant's events; or inside start(), if the
// network is done at once.
class ChipEngines final : public hw::OpExecutor, private hw::CompletionListener {
 public:
  ChipEngines(hw::Chip& chip, int c, const std::vector<int>& group, const PodProgram& pp, PodCollectives& collectives,
              PointToPoint& p2p, NextDelta& next_delta, std::vector<std::uint64_t>& first_join)
      : chip_(chip),
        c_(c),
        group_(group),
        pp_(pp),
        collectives_(collectives),
        p2p_(p2p),
        next_delta_(next_delta),
        first_join_(first_join) {}

  void start(const hw::Op& op, hw::Completion done) override {
    const auto* send = std::get_if<hw::SendOp>(&op.payload);
    const auto* recv = std::get_if<hw::RecvOp>(&op.payload);
    const auto* comm = std::get_if<hw::CommOp>(&op.payload);
    if (!send && !recv && !comm) {
      chip_.start(op, done);
      return;
    }
    const CollectiveData* data = nullptr;
    if (comm) {
      first_join_[comm->collective] =
          std::min<std::uint64_t>(first_join_[comm->collective], sc_core::sc_time_stamp().value());
      data = comm->collective < pp_.collective_data.size() ? &pp_.collective_data[comm->collective] : nullptr;
      // Functional collectives read the chip's input when it joins.
      if (data) collectives_.simulated(comm->collective).set_input(c_, data->input(c_));
    }
    const std::uint64_t slot = hold({done, comm ? comm->collective : 0, data});
    const std::uint64_t outer = starting_;
    const bool outer_inside = done_inside_;
    starting_ = slot;
    done_inside_ = false;
    try {
      if (send) {
        p2p_.send(c_, *send, {this, slot});
      } else if (recv) {
        p2p_.receive(c_, *recv, {this, slot});
      } else {
        // The replicas this chip stands for join with it, and it goes on
        // when the slowest of them has finished.
        collectives_.join(comm->collective, group_, [this, slot] { completed(slot); });
      }
    } catch (...) {
      starting_ = outer;
      done_inside_ = outer_inside;
      throw;
    }
    const bool inside = done_inside_;
    starting_ = outer;
    done_inside_ = outer_inside;
    if (inside) finish(slot);
  }

 private:
  static constexpr std::uint64_t kLater = std::uint64_t{1} << 63;  // token bit: the next delta cycle has come
  static constexpr std::uint64_t kNone = ~std::uint64_t{0};

  struct InFlight {
    hw::Completion done;
    std::uint32_t collective = 0;
    const CollectiveData* data = nullptr;  // a functional collective's
  };

  // From the network's process (or inside start()): the op is done.
  void completed(std::uint64_t token) override {
    if (token & kLater) {
      finish(token & ~kLater);
    } else if (token == starting_) {
      done_inside_ = true;
    } else {
      next_delta_.defer({this, token | kLater});
    }
  }
  void failed(std::uint64_t token, std::exception_ptr error) override {
    release(token & ~kLater).done.fail(std::move(error));
  }
  void finish(std::uint64_t slot) {
    const InFlight f = release(slot);
    try {
      // Functional collectives write the chip's output when it is done.
      if (f.data) f.data->output(c_, collectives_.simulated(f.collective).output(c_));
    } catch (...) {
      f.done.fail(std::current_exception());
      return;
    }
    f.done();
  }
  std::uint64_t hold(const InFlight& f) {
    if (free_.empty()) {
      in_flight_.push_back(f);
      return in_flight_.size() - 1;
    }
    const std::uint64_t slot = free_.back();
    free_.pop_back();
    in_flight_[slot] = f;
    return slot;
  }
  InFlight release(std::uint64_t slot) {
    free_.push_back(slot);
    return in_flight_[slot];
  }

  hw::Chip& chip_;
  const int c_;
  const std::vector<int>& group_;
  const PodProgram& pp_;
  PodCollectives& collectives_;
  PointToPoint& p2p_;
  NextDelta& next_delta_;
  std::vector<std::uint64_t>& first_join_;
  std::vector<InFlight> in_flight_;  // ICI ops in flight, by slot
  std::vector<std::uint64_t> free_;
  std::uint64_t starting_ = kNone;  // the slot of the op whose start() is under way
  bool done_inside_ = false;
};

}  // namespace

namespace {

// Why every chip must be simulated, or "" when one per group of replicas may do.
std::string replicas_blocker(const PodConfig& config, const PodProgram& pp) {
  if (config.simulate_every_chip) return "replicas: all";
  if (!pp.collective_data.empty() || pp.buffers) return "functional run";
  if (pp.programs.size() == pp.program_of.size()) return "no two chips share a program";
  for (const auto& prog : pp.programs)
    for (const auto& op : prog.ops)
      if (std::holds_alternative<hw::SendOp>(op.payload) || std::holds_alternative<hw::RecvOp>(op.payload))
        return "point-to-point messages";
  return "";
}

struct Shortcuts {
  bool replicas = false;  // one chip per group of replicas
  bool replays = false;   // collectives replayed (collective_replay.h)
};

// One simulation of the pod, with the shortcuts asked for. `inexact` says
// why the result may differ from simulating every chip ("" when it cannot);
// `replay_conflict` that a replay was not faithful.
PodRunResult simulate_pod(const PodConfig& config, const PodProgram& pp, bool trace, Shortcuts use,
                          std::string& inexact, bool& replay_conflict) {
  const interconnect::PodNetworkConfig& cfg = config.network;
  cfg.validate();
  const interconnect::Topology topology = cfg.make_topology();
  const interconnect::Mesh mesh(topology, cfg.mesh);
  const int n = topology.chips();
  if (static_cast<int>(pp.chip_count()) != n) throw std::logic_error("one program per chip expected");

  if (pp.collectives.size() >= PointToPoint::kTagSpace)
    throw std::logic_error("too many collectives for the message tag space");
  // Collectives with equal specs share one plan: a training step has one
  // gradient all-reduce per layer, mostly of the same size.
  std::vector<std::shared_ptr<const interconnect::CollectivePlan>> plans;
  std::vector<interconnect::CollectiveSpec> specs;
  std::map<std::string, std::shared_ptr<const interconnect::CollectivePlan>> planned;
  for (std::size_t i = 0; i < pp.collectives.size(); ++i) {
    interconnect::CollectiveSpec spec = pp.collectives[i];
    spec.functional = i < pp.collective_data.size();
    auto& plan = planned[collective_key(spec)];
    if (!plan) {
      spec.validate(cfg);
      plan = std::make_shared<const interconnect::CollectivePlan>(
          interconnect::plan_collective(topology, mesh, cfg.link, spec));
    }
    plans.push_back(plan);
    specs.push_back(spec);
  }

  // Each chip's representative (itself unless reduced) and each
  // representative's group, in chip order.
  std::vector<int> rep_of(n);
  std::vector<std::vector<int>> group_of(n);
  {
    std::vector<int> first(pp.programs.size(), -1);
    for (int c = 0; c < n; ++c) {
      int& f = first[pp.program_of[c]];
      if (!use.replicas || f < 0) f = c;
      rep_of[c] = f;
      group_of[f].push_back(c);
    }
  }

  sim::WallTimer elaboration;
  sim::reset_kernel();
  auto net = interconnect::make_network("ici", topology, cfg);
  interconnect::VectorUnitReduction reduction(n, cfg.reduction, cfg.link.packet_bytes);
  auto colls = std::make_unique<PodCollectives>(*net, reduction, plans, specs, use.replays);
  PodCollectives& collectives = *colls;
  std::vector<std::uint64_t> first_join(plans.size(), UINT64_MAX);
  PointToPoint p2p(*net);

  NextDelta next_delta("ici_done");

  // Chips that share a program share its graph, worked out once.
  std::vector<std::shared_ptr<const hw::ProgramGraph>> graphs(pp.programs.size());
  std::vector<std::unique_ptr<hw::Chip>> chips(n);
  std::vector<std::unique_ptr<ChipEngines>> engines(n);
  std::vector<std::unique_ptr<hw::Sequencer>> seqs(n);
  std::size_t ops = 0;
  for (int c = 0; c < n; ++c) {
    if (rep_of[c] != c) continue;
    auto& graph = graphs[pp.program_of[c]];
    if (!graph) graph = std::make_shared<const hw::ProgramGraph>(pp.chip(c));
    chips[c] = std::make_unique<hw::Chip>(("chip" + std::to_string(c)).c_str(), config.chip, config.fidelity);
    engines[c] = std::make_unique<ChipEngines>(*chips[c], c, group_of[c], pp, collectives, p2p, next_delta, first_join);
    seqs[c] = std::make_unique<hw::Sequencer>(("seq" + std::to_string(c)).c_str(), graph, *engines[c]);
    ops += pp.chip(c).ops.size();
  }

  const int simulated = static_cast<int>(n - std::count(chips.begin(), chips.end(), nullptr));
  spdlog::debug("pod: {} chips ({} simulated), {} ops, {} collectives; elaborated in {:.3f} s; simulating", n,
                simulated, ops, pp.collectives.size(), elaboration.seconds());
  sim::WallTimer simulation;
  const SimulationEnd sim_end = simulate_within(config.limits, [&net] { return net->events(); });
  spdlog::debug("pod: simulated {} s in {:.3f} s", sc_core::sc_time_stamp().to_seconds(), simulation.seconds());
  for (const auto& s : seqs)
    if (s) s->rethrow_failure();
  std::vector<std::string> stuck;
  for (int c = 0; c < n && stuck.size() < 12; ++c) {
    if (!seqs[c]) continue;
    for (auto i : seqs[c]->pending_ops()) {
      const hw::Op& op = pp.chip(c).ops[i];
      stuck.push_back("chip " + std::to_string(c) + " waits in '" + op.name + "' (" +
                      hw::engine_kind_name(op.engine.kind) + std::to_string(op.engine.index) + ")");
      break;
    }
  }
  if (!stuck.empty()) {
    std::string msg = sim_end.runaway() ? sim_end.describe(config.limits) + " with work left"
                                        : "deadlock: the simulation ran out of events with work left";
    for (const auto& s : stuck) msg += "\n  " + s;
    for (const auto& line : collectives.pending()) msg += "\n  " + line;
    throw sim::SimFailure(msg);
  }

  // Replicas stand in for each other only if every collective ended at the
  // same time on all members of a group as on their representative. Where
  // a buffer does not divide evenly into ring chunks, and where events of
  // one instant are taken in a different order on different chips, end
  // times differ (from picoseconds up to microseconds on uneven tori):
  // spread_ps sums the largest such difference of every collective.
  inexact.clear();
  std::uint64_t spread_ps = 0;
  replay_conflict = collectives.conflict();
  for (std::size_t i = 0; i < collectives.size() && inexact.empty(); ++i) {
    std::uint64_t spread = 0;
    for (int c = 0; c < n; ++c) {
      const int r = rep_of[c];
      if (r == c) continue;
      if (collectives.joined(i, c) != collectives.joined(i, r) ||
          collectives.finished(i, c) != collectives.finished(i, r)) {
        inexact = "chip " + std::to_string(c) + " did not take part in collective " + std::to_string(i) + " as chip " +
                  std::to_string(r) + " did";
        break;
      }
      const std::uint64_t a = collectives.finish_time(i, c), b = collectives.finish_time(i, r);
      spread = std::max(spread, a > b ? a - b : b - a);
    }
    spread_ps += spread;
  }

  PodRunResult r;
  r.chips.resize(n);
  for (int c = 0; c < n; ++c) {
    if (rep_of[c] != c) continue;
    const hw::Chip& chip = *chips[c];
    const hw::Program& prog = pp.chip(c);
    const auto& timings = seqs[c]->timings();
    ChipTiming ct;
    ct.ops = seqs[c]->shared_timings();
    ct.end_s = ps_to_s(seqs[c]->end_ps());
    // Communication is hidden while the chip does its own work on any
    // engine: computing, or streaming operands through HBM (an
    // optimizer's HBM-bound update hides an all-reduce as well as a matmul).
    std::vector<Interval> compute, work, comm;
    for (std::size_t i = 0; i < timings.size(); ++i) {
      const auto kind = prog.ops[i].engine.kind;
      const Interval iv{timings[i].start_ps, timings[i].end_ps};
      if (is_communication(prog.ops[i])) comm.push_back(iv);
      if (kind == hw::EngineKind::mxu || kind == hw::EngineKind::vector) compute.push_back(iv);
      if (kind != hw::EngineKind::ici) work.push_back(iv);
    }
    compute = merge(compute);
    work = merge(work);
    comm = merge(comm);
    ct.compute_busy_s = ps_to_s(length(compute));
    ct.ici_busy_s = ps_to_s(length(comm));
    ct.comm_hidden_s = ps_to_s(overlap(work, comm));
    ct.mxu_busy_s = chip.mxu_busy_s() / double(chip.mxus().size());
    ct.vector_busy_s = chip.vector_busy_s() / double(chip.vector_units().size());
    ct.dma_busy_s = chip.dma_busy_s() / double(chip.dma_engines().size());
    for (const auto& m : chip.mxus())
      ct.mxu_busy_max_s = std::max(ct.mxu_busy_max_s, double(m->stats().busy_cycles) / config.chip.clock);
    ct.hbm_bytes = chip.hbm().bytes_read() + chip.hbm().bytes_written();
    for (int m : group_of[c]) r.chips[m] = ct;
  }
  for (int c = 0; c < n; ++c) {
    r.chips[c].ici_bytes_out = net->chip_bytes_out(c);
    r.chips[c].ici_bytes_in = net->chip_bytes_in(c);
    r.step_time_s = std::max(r.step_time_s, r.chips[c].end_s);
  }
  r.chips_simulated = simulated;
  r.replica_spread_s = ps_to_s(spread_ps);
  r.collectives_replayed = static_cast<int>(collectives.replayed());
  for (std::size_t i = 0; i < collectives.size(); ++i) {
    CollectiveTiming t;
    t.name = i < pp.collective_names.size()
                 ? pp.collective_names[i]
                 : interconnect::Collective::name_of(pp.collectives[i].op, static_cast<int>(i));
    t.op = interconnect::to_string(pp.collectives[i].op);
    t.algorithm = interconnect::to_string(collectives.plan(i).algorithm);
    t.participants = collectives.plan(i).group_size();
    t.bytes = pp.collectives[i].bytes;
    t.start_s = first_join[i] == UINT64_MAX ? 0.0 : ps_to_s(first_join[i]);
    t.end_s = ps_to_s(collectives.end_time(i));
    r.collectives.push_back(t);
  }
  double util_sum = 0;
  int links = 0;
  for (int l = 0; l < topology.link_slots(); ++l) {
    if (!topology.link_exists(l)) continue;
    const double u = r.step_time_s > 0 ? ps_to_s(net->link_busy(l)) / r.step_time_s : 0.0;
    r.link_utilization_max = std::max(r.link_utilization_max, u);
    util_sum += u;
    ++links;
  }
  r.link_utilization_mean = links ? util_sum / links : 0.0;
  r.kernel_events = sim::kernel_events();
  r.network_events = net->events();
  r.messages = net->messages();
  if (trace) {
    sim::TraceWriter tw;
    for (int c = 0; c < n; ++c) trace_program(tw, static_cast<std::uint32_t>(c), pp.chip(c), *r.chips[c].ops);
    r.trace_json = tw.json();
  }
  // Modules go before the next reset_kernel(); collectives before the network.
  seqs.clear();
  engines.clear();
  chips.clear();
  colls.reset();
  net.reset();
  return r;
}

}  // namespace

PodRunResult run_pod(const PodConfig& config, const PodProgram& pp, bool trace) {
  // How far apart replicas' collectives may end (summed over collectives, as
  // a fraction of the step) for one chip per group to stand for all.
  constexpr double kReplicaSpreadTolerance = 1e-2;
  std::string why = replicas_blocker(config, pp);
  std::string inexact;
  bool conflict = false;
  if (why.empty()) {
    for (bool replays : {true, false}) {
      PodRunResult r = simulate_pod(config, pp, trace, {true, replays}, inexact, conflict);
      if (conflict) {
        spdlog::debug("pod: a collective started while a replayed one ran; simulating every collective");
        continue;
      }
      if (inexact.empty() && r.replica_spread_s > kReplicaSpreadTolerance * r.step_time_s) {
        char text[160];
        std::snprintf(text, sizeof text, "collectives ended up to %.3g s apart on replicas, over %.0e of the step",
                      r.replica_spread_s, kReplicaSpreadTolerance);
        inexact = text;
      }
      if (inexact.empty()) {
        r.replicas = "one per group";
        return r;
      }
      break;
    }
    spdlog::debug("pod: one chip per group of replicas is not exact ({}); simulating every chip", inexact);
    why = "not exact: " + inexact;
  }
  PodRunResult r = simulate_pod(config, pp, trace, {}, inexact, conflict);
  r.replicas = "all (" + why + ")";
  r.replica_spread_s = 0;
  return r;
}

}  // namespace runtime
