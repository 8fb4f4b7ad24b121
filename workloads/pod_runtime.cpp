#include "workloads/pod_runtime.h"

#include <algorithm>
#include <systemc>

#include "hw/chip.h"
#include "hw/sequencer.h"
#include "interconnect/algorithms.h"
#include "interconnect/collective.h"
#include "interconnect/mesh.h"
#include "interconnect/network_factory.h"
#include "interconnect/reduction.h"
#include "sim/error.h"
#include "sim/host.h"
#include "sim/kernel.h"
#include "sim/log.h"
#include "sim/trace.h"
#include "workloads/program_trace.h"

namespace workloads {

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

// Point-to-point messages (hw::SendOp, hw::RecvOp) between chips' engine
// threads and the network: the calling thread sleeps until the network's
// callback says its send left the chip or its message arrived. Tags live
// above every collective's (those put the collective id, < kTagSpace, in
// bits 48..63), so the two never match each other's messages.
class PointToPoint : public interconnect::NetworkClient {
 public:
  static constexpr std::uint64_t kTagSpace = 0xFFFF;
  explicit PointToPoint(interconnect::Network& net) : net_(net) {}

  void send(int chip, const hw::SendOp& op) {
    Waiter w;
    interconnect::Message m;
    m.src = chip;
    m.dst = static_cast<int>(op.peer);
    m.tag = tag(op.tag);
    m.bytes = op.bytes;
    net_.send(std::move(m), this, cookie(w));
    w.wait();
  }
  void receive(int chip, const hw::RecvOp& op) {
    Waiter w;
    net_.receive(chip, static_cast<int>(op.peer), tag(op.tag), this, cookie(w));
    w.wait();
  }
  void on_sent(std::uint64_t c) override { waiter(c).wake(); }
  void on_received(std::uint64_t c, interconnect::Arrival&) override { waiter(c).wake(); }

 private:
  struct Waiter {
    bool done = false;
    sc_core::sc_event event;
    void wake() {
      done = true;
      event.notify(sc_core::SC_ZERO_TIME);
    }
    void wait() {
      if (!done) sc_core::wait(event);
    }
  };
  static std::uint64_t tag(std::uint64_t t) {
    if (t >> 48) throw std::logic_error("point-to-point tag above 2^48");
    return kTagSpace << 48 | t;
  }
  // The waiter lives on the blocked thread's stack until its callback ran.
  static std::uint64_t cookie(Waiter& w) { return reinterpret_cast<std::uintptr_t>(&w); }
  static Waiter& waiter(std::uint64_t c) { return *reinterpret_cast<Waiter*>(static_cast<std::uintptr_t>(c)); }

  interconnect::Network& net_;
};

// A receive occupies no link of its chip: its duration is waiting, so it
// does not count as communication time.
bool is_communication(const hw::Op& op) {
  return op.engine.kind == hw::EngineKind::ici && !std::holds_alternative<hw::RecvOp>(op.payload);
}

}  // namespace

interconnect::PodNetworkConfig pod_network_config(const Experiment& exp) {
  interconnect::PodNetworkConfig cfg;
  cfg.topology = interconnect::parse_topology_kind(exp.pod.topology, "pod.topology");
  for (auto s : exp.pod.shape) cfg.shape.push_back(static_cast<int>(s));
  cfg.wraparound = exp.pod.wraparound;
  cfg.link.bandwidth = exp.chip.ici.link_bandwidth;
  cfg.link.latency = exp.chip.ici.link_latency;
  cfg.link.packet_bytes = exp.pod.packet_bytes;
  cfg.link.switching = interconnect::parse_switching(exp.pod.switching, "pod.switching");
  cfg.model = interconnect::parse_network_model(exp.pod.network_model, "pod.network_model");
  // A reduction stores one (8,128) f32 vreg (4096 B) per cycle per
  // TensorCore (tpu-specs.yaml v5p.vmem_load_store: 1 store per cycle;
  // common.vpu_shape) and moves 3 bytes of HBM traffic per byte reduced.
  cfg.reduction.vector_bytes_per_s = 4096.0 * exp.chip.tensorcores * exp.chip.clock;
  cfg.reduction.hbm_bytes_per_s = exp.chip.hbm.bandwidth_bytes_per_s;
  for (const auto& [name, size] : exp.mesh) cfg.mesh.push_back({name, static_cast<int>(size)});
  return cfg;
}

PodRunResult run_pod(const Experiment& exp, const PodProgram& pp, bool trace) {
  const interconnect::PodNetworkConfig cfg = pod_network_config(exp);
  cfg.validate();
  const interconnect::Topology topology = cfg.make_topology();
  const interconnect::Mesh mesh(topology, cfg.mesh);
  const int n = topology.chips();
  if (static_cast<int>(pp.chips.size()) != n) throw std::logic_error("one program per chip expected");

  if (pp.collectives.size() >= PointToPoint::kTagSpace)
    throw std::logic_error("too many collectives for the message tag space");
  std::vector<interconnect::CollectivePlan> plans;
  for (std::size_t i = 0; i < pp.collectives.size(); ++i) {
    interconnect::CollectiveSpec spec = pp.collectives[i];
    spec.functional = i < pp.collective_data.size();
    spec.validate(cfg);
    plans.push_back(interconnect::plan_collective(topology, mesh, cfg.link, spec));
  }

  sim::WallTimer elaboration;
  sim::reset_kernel();
  auto net = interconnect::make_network("ici", topology, cfg);
  interconnect::VectorUnitReduction reduction(n, cfg.reduction, cfg.link.packet_bytes);
  std::vector<std::unique_ptr<interconnect::Collective>> colls;
  for (std::size_t i = 0; i < plans.size(); ++i)
    colls.push_back(std::make_unique<interconnect::Collective>(*net, reduction, plans[i],
                                                               i < pp.collective_data.size(), static_cast<int>(i)));
  std::vector<std::uint64_t> first_join(colls.size(), UINT64_MAX);
  PointToPoint p2p(*net);

  const hw::Fidelity fidelity = exp.fidelity == "pe" ? hw::Fidelity::pe : hw::Fidelity::tile;
  std::vector<std::unique_ptr<hw::Chip>> chips;
  std::vector<std::unique_ptr<hw::Sequencer>> seqs;
  for (int c = 0; c < n; ++c) {
    chips.push_back(std::make_unique<hw::Chip>(("chip" + std::to_string(c)).c_str(), exp.chip, fidelity));
    hw::Chip* chip = chips.back().get();
    auto exec = [chip, c, &colls, &first_join, &p2p, &pp](const hw::Op& op) {
      if (const auto* send = std::get_if<hw::SendOp>(&op.payload)) {
        p2p.send(c, *send);
        return;
      }
      if (const auto* recv = std::get_if<hw::RecvOp>(&op.payload)) {
        p2p.receive(c, *recv);
        return;
      }
      const auto* comm = std::get_if<hw::CommOp>(&op.payload);
      if (!comm) {
        chip->execute(op);
        return;
      }
      auto& coll = *colls.at(comm->collective);
      first_join[comm->collective] =
          std::min<std::uint64_t>(first_join[comm->collective], sc_core::sc_time_stamp().value());
      const CollectiveData* data =
          comm->collective < pp.collective_data.size() ? &pp.collective_data[comm->collective] : nullptr;
      if (data) coll.set_input(c, data->input(c));
      bool done = false;
      sc_core::sc_event finished;
      coll.join(c, [&done, &finished] {
        done = true;
        finished.notify(sc_core::SC_ZERO_TIME);
      });
      if (!done) sc_core::wait(finished);
      if (data) data->output(c, coll.output(c));
    };
    seqs.push_back(std::make_unique<hw::Sequencer>(("seq" + std::to_string(c)).c_str(), pp.chips[c], exec));
  }

  std::size_t ops = 0;
  for (const auto& p : pp.chips) ops += p.ops.size();
  spdlog::debug("pod: {} chips, {} ops, {} collectives; elaborated in {:.3f} s; simulating", n, ops,
                pp.collectives.size(), elaboration.seconds());
  sim::WallTimer simulation;
  const SimulationEnd sim_end = simulate_within(exp.limits, [&net] { return net->events(); });
  spdlog::debug("pod: simulated {} s in {:.3f} s", sc_core::sc_time_stamp().to_seconds(), simulation.seconds());
  for (const auto& s : seqs) s->rethrow_failure();
  std::vector<std::string> stuck;
  for (int c = 0; c < n && stuck.size() < 12; ++c) {
    for (auto i : seqs[c]->pending_ops()) {
      const hw::Op& op = pp.chips[c].ops[i];
      stuck.push_back("chip " + std::to_string(c) + " waits in '" + op.name + "' (" +
                      hw::engine_kind_name(op.engine.kind) + std::to_string(op.engine.index) + ")");
      break;
    }
  }
  if (!stuck.empty()) {
    std::string msg = sim_end.runaway() ? sim_end.describe(exp.limits) + " with work left"
                                        : "deadlock: the simulation ran out of events with work left";
    for (const auto& s : stuck) msg += "\n  " + s;
    for (const auto& c : colls)
      for (const auto& line : c->pending()) msg += "\n  " + line;
    throw sim::SimFailure(msg);
  }

  PodRunResult r;
  for (int c = 0; c < n; ++c) {
    const hw::Chip& chip = *chips[c];
    const auto& timings = seqs[c]->timings();
    ChipTiming ct;
    ct.ops = timings;
    ct.end_s = ps_to_s(seqs[c]->end_ps());
    std::vector<Interval> compute, comm;
    for (std::size_t i = 0; i < timings.size(); ++i) {
      const auto kind = pp.chips[c].ops[i].engine.kind;
      const Interval iv{timings[i].start_ps, timings[i].end_ps};
      if (is_communication(pp.chips[c].ops[i])) comm.push_back(iv);
      if (kind == hw::EngineKind::mxu || kind == hw::EngineKind::vector) compute.push_back(iv);
    }
    compute = merge(compute);
    comm = merge(comm);
    ct.compute_busy_s = ps_to_s(length(compute));
    ct.ici_busy_s = ps_to_s(length(comm));
    ct.comm_hidden_s = ps_to_s(overlap(compute, comm));
    ct.mxu_busy_s = chip.mxu_busy_s() / double(chip.mxus().size());
    ct.vector_busy_s = chip.vector_busy_s() / double(chip.vector_units().size());
    ct.dma_busy_s = chip.dma_busy_s() / double(chip.dma_engines().size());
    for (const auto& m : chip.mxus())
      ct.mxu_busy_max_s = std::max(ct.mxu_busy_max_s, double(m->stats().busy_cycles) / exp.chip.clock);
    ct.hbm_bytes = chip.hbm().bytes_read() + chip.hbm().bytes_written();
    ct.ici_bytes_out = net->chip_bytes_out(c);
    ct.ici_bytes_in = net->chip_bytes_in(c);
    r.step_time_s = std::max(r.step_time_s, ct.end_s);
    r.chips.push_back(std::move(ct));
  }
  for (std::size_t i = 0; i < colls.size(); ++i) {
    CollectiveTiming t;
    t.name = i < pp.collective_names.size() ? pp.collective_names[i] : colls[i]->name();
    t.op = interconnect::to_string(pp.collectives[i].op);
    t.algorithm = interconnect::to_string(colls[i]->plan().algorithm);
    t.participants = colls[i]->plan().group_size();
    t.bytes = pp.collectives[i].bytes;
    t.start_s = first_join[i] == UINT64_MAX ? 0.0 : ps_to_s(first_join[i]);
    t.end_s = ps_to_s(colls[i]->end_time());
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
    for (int c = 0; c < n; ++c) trace_program(tw, static_cast<std::uint32_t>(c), pp.chips[c], r.chips[c].ops);
    r.trace_json = tw.json();
  }
  // Modules go before the next reset_kernel(); collectives before the network.
  seqs.clear();
  chips.clear();
  colls.clear();
  net.reset();
  return r;
}

}  // namespace workloads
