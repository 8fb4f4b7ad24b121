#include "workloads/pod_report.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "interconnect/collective_spec.h"

namespace workloads {

namespace {

// One chip's figures, read from the statistics of the chip that stood for it.
struct ChipFigures {
  double mxu_s, mxu_max_s, vector_s, dma_s, hbm_bytes, macs, vmem_bytes;
  double compute_s, comm_s, hidden_s;
};

// A chip's collective reductions are its own (where a buffer does not divide
// evenly, replicas reduce a few elements more or less than their
// representative); at kernel fidelity they are in the chip's HBM bytes.
ChipFigures figures(const runtime::PodRunResult& run, std::uint32_t c) {
  const sim::StatGroup& g = run.chip_stats(c);
  const double own_reductions =
      run.reductions_on_chip ? run.reduce_hbm_bytes[c] - run.reduce_hbm_bytes[run.representative[c]] : 0.0;
  return {g.value("mxu_busy_time"),
          g.value("mxu_busy_time_max"),
          g.value("vector_busy_time"),
          g.value("dma_busy_time"),
          g.value("hbm_bytes") + own_reductions,
          g.value("mxu_macs"),
          g.value("vmem_bytes"),
          g.value("program.compute_time"),
          g.value("program.communication_time"),
          g.value("program.hidden_communication_time")};
}

}  // namespace

void add_chip_energy(Energy& e, const hw::ChipConfig& chip, double macs, double vmem_bytes, double hbm_bytes) {
  const double mac = chip.energy.mac_j(macs), vmem = chip.energy.vmem_j(vmem_bytes), hbm = chip.energy.hbm_j(hbm_bytes);
  e.mac_j += mac;
  e.vmem_j += vmem;
  e.hbm_j += hbm;
  e.total_j += mac + vmem + hbm;
  e.per_chip_j.push_back(mac + vmem + hbm);
}

double ops_energy_j(const hw::EnergyParams& energy, const hw::Program& program, std::size_t begin, std::size_t end) {
  double j = 0;
  for (std::size_t i = begin; i < end; ++i) {
    const hw::OpWork w = hw::op_work(program.ops[i]);
    j += energy.total_j(w.macs, w.vmem_bytes, w.hbm_bytes);
  }
  return j;
}

namespace {

// "9.8": a fraction of the step in per cent; an idle share never below 0.
std::string percent_of_step(double f) { return sim::fixed(100.0 * std::max(0.0, f), 1); }

// Per op, in the order ops first appear: the collectives, those a late chip
// gated, and the chips that gated them (a step of thousands of collectives
// reports a few lines, not one per collective).
std::vector<Waiting> waiting(const runtime::PodRunResult& run) {
  std::vector<Waiting> out;
  for (const runtime::CollectiveTiming& c : run.collectives) {
    auto w = std::find_if(out.begin(), out.end(), [&](const Waiting& x) { return x.op == c.op; });
    if (w == out.end()) {
      out.push_back(Waiting{c.op, 0, 0, 0, 0, {}});
      w = std::prev(out.end());
    }
    ++w->collectives;
    if (c.gated_by < 0) continue;
    ++w->gated;
    w->wait_s += c.wait_s;
    w->wait_max_s = std::max(w->wait_max_s, c.wait_s);
    const auto chip = static_cast<std::uint32_t>(c.gated_by);
    auto g = std::find_if(w->chips.begin(), w->chips.end(), [&](const Waiting::Chip& x) { return x.chip == chip; });
    if (g == w->chips.end()) {
      w->chips.push_back({chip, 0, 0});
      g = std::prev(w->chips.end());
    }
    ++g->gated;
    g->wait_s += c.wait_s;
  }
  for (Waiting& w : out) {
    std::stable_sort(w.chips.begin(), w.chips.end(),
                     [](const Waiting::Chip& a, const Waiting::Chip& b) { return a.wait_s > b.wait_s; });
    if (w.chips.size() > Waiting::kMaxChips) w.chips.resize(Waiting::kMaxChips);
  }
  return out;
}

}  // namespace

PodSummary summarize(const Experiment& exp, const runtime::PodRunResult& run) {
  PodSummary s;
  s.step_s = run.step_time_s;
  const std::uint32_t n = static_cast<std::uint32_t>(run.representative.size());
  const double chips = double(n);
  for (std::uint32_t c = 0; c < n; ++c) {
    const ChipFigures f = figures(run, c);
    s.hbm_bytes += f.hbm_bytes;
    add_chip_energy(s.energy, exp.chip, f.macs, f.vmem_bytes, f.hbm_bytes);
    s.ici_bytes += double(run.ici_bytes_out[c]);
    s.comm_s += f.comm_s / chips;
    s.hidden_s += f.hidden_s / chips;
    s.compute_s += f.compute_s / chips;
    if (s.step_s > 0) {
      s.mxu_fraction = std::max(s.mxu_fraction, f.mxu_max_s / s.step_s);
      s.hbm_fraction = std::max(s.hbm_fraction, f.hbm_bytes / (exp.chip.hbm.bandwidth_bytes_per_s * s.step_s));
    }
  }
  // ICI: the busiest link's busy time over the step, as HBM's bytes over
  // its bandwidth and the MXUs' busy time: how close each unit came to its
  // bound, whether or not compute hid the time.
  s.ici_fraction = run.link_utilization_max;
  // A message between slices leaves its chip (ici_bytes_out) but crosses
  // no ICI link.
  s.ici_bytes -= double(run.dcn_bytes);
  s.dcn = dcn_section(exp, run, s.step_s);
  s.waiting = waiting(run);
  return s;
}

Result pod_result(const Experiment& exp, const PodSummary& s, double flops) {
  const hw::ChipConfig& chip = exp.chip;
  const double chips = exp.pod.devices();
  const double peak = chip.peak_flops_per_s() * chips;
  Result res;
  res.step_time_s = s.step_s;
  res.cycles = std::round(s.step_s * chip.clock);
  res.clock_hz = chip.clock;
  res.flops = flops;
  res.hbm_bytes = s.hbm_bytes;
  res.ici_bytes = s.ici_bytes;
  res.arithmetic_intensity = s.hbm_bytes > 0 ? flops / s.hbm_bytes : 0;
  res.achieved_flops_per_s = s.step_s > 0 ? flops / s.step_s : 0;
  res.mfu = s.step_s > 0 ? flops / s.step_s / peak : 0;
  res.mxu_utilization = res.mfu;
  res.roofline =
      make_roofline(chip, flops / chips, s.hbm_bytes / chips, s.mxu_fraction, s.hbm_fraction, s.ici_fraction);
  res.communication.collective_time_s = s.comm_s;
  res.communication.exposed_time_s = s.exposed_s();
  if (s.comm_s > 0) res.communication.overlap_fraction = s.overlap_fraction();
  res.communication.compute_time_s = s.compute_s;
  res.communication.waiting = s.waiting;
  res.dcn = s.dcn;
  res.energy = s.energy;
  res.energy->set_step(s.step_s);
  return res;
}

std::optional<DcnSection> dcn_section(const Experiment& exp, const runtime::PodRunResult& run, double step_s) {
  if (exp.pod.slices <= 1) return std::nullopt;
  DcnSection d;
  d.bytes = double(run.dcn_bytes);
  d.nic_busy_max_s = run.dcn_nic_busy_max_s;
  d.nic_utilization_max = step_s > 0 ? run.dcn_nic_busy_max_s / step_s : 0.0;
  // As result.communication for every collective: the mean over chips of
  // the time with a collective across slices running, and of its part that
  // no MXU, vector or DMA op of the chip hid.
  const double chips = double(run.representative.size());
  for (std::uint32_t c = 0; c < run.representative.size(); ++c) {
    const sim::StatGroup& g = run.chip_stats(c);
    d.time_s += g.value("program.dcn_time") / chips;
    d.exposed_time_s += (g.value("program.dcn_time") - g.value("program.hidden_dcn_time")) / chips;
  }
  return d;
}

std::string pod_label(const Experiment& exp) {
  const std::string chips = exp.pod.slices > 1
                                ? std::to_string(exp.pod.slices) + " slices x " + std::to_string(exp.pod.slice_chips())
                                : std::to_string(exp.pod.chips());
  const std::string devices =
      exp.pod.devices_per_chip > 1 ? " (" + std::to_string(exp.pod.devices()) + " devices)" : "";
  return chips + " x " + exp.chip.name + devices;
}

std::vector<CollectiveRecord> pod_collectives(const runtime::PodRunResult& run) {
  std::vector<CollectiveRecord> colls;
  for (const auto& c : run.collectives) {
    const double t = c.time_s();
    const double algbw = t > 0 ? double(c.bytes) / t : 0.0;
    CollectiveRecord r;
    r.name = c.name;
    r.op = c.op;
    r.algorithm = c.algorithm;
    r.participants = c.participants;
    r.axes = c.axes;
    r.bytes = c.bytes;
    r.exposed_s = c.exposed_s;
    r.start_s = c.start_s;
    r.wait_s = c.wait_s;
    if (c.gated_by >= 0) r.gated_by = static_cast<std::uint32_t>(c.gated_by);
    r.time_s = t;
    r.algbw_bytes_per_s = algbw;
    r.busbw_bytes_per_s = algbw * interconnect::bus_bandwidth_factor(c.op, c.participants);
    r.dcn_traffic = c.dcn_traffic;
    colls.push_back(r);
  }
  return colls;
}

void waiting_rows(sim::Table& t, const Communication& comm) {
  if (!comm.waiting) return;
  for (const Waiting& w : *comm.waiting) {
    if (w.gated == 0) continue;
    std::string op = interconnect::to_string(w.op);
    std::replace(op.begin(), op.end(), '_', '-');
    // "chip 3 made 3 of the 4 all-reduces wait, 588 us; chip 0 made 1 wait, 6 us"
    std::string text;
    for (const Waiting::Chip& g : w.chips) {
      text += text.empty() ? "chip " + std::to_string(g.chip) + " made " + std::to_string(g.gated) + " of the " +
                                 std::to_string(w.collectives) + " " + op + "s wait"
                           : "; chip " + std::to_string(g.chip) + " made " + std::to_string(g.gated) + " wait";
      text += ", " + sim::si(g.wait_s, "s");
    }
    t.row("late chips (" + op + ")", text, "(longest wait " + sim::si(w.wait_max_s, "s") + ")");
  }
}

void verdict_rows(sim::Table& t, const Roofline& r) {
  t.row("MXU / HBM / ICI busy",
        percent_of_step(r.busy_mxu) + " / " + percent_of_step(r.busy_hbm) + " / " + percent_of_step(r.busy_ici),
        "% of the step (idle " + percent_of_step(1 - r.busy_mxu) + " / " + percent_of_step(1 - r.busy_hbm) + " / " +
            percent_of_step(1 - r.busy_ici) + " %)");
  std::string why;
  if (r.verdict == "compute")
    why = "the MXU is busy " + percent_of_step(r.busy_mxu) + " % of the step";
  else if (r.verdict == "memory")
    why = "HBM moves data " + percent_of_step(r.busy_hbm) + " % of the step at its peak rate";
  else if (r.verdict == "communication")
    why = "the ICI links are busy " + percent_of_step(r.busy_ici) + " % of the step";
  else if (r.verdict == "latency")
    why = "no unit is busy half the step; they take turns, each op waiting for the last";
  else
    why =
        "no unit is busy half the step, nor all three together: the chip mostly waits (launches, "
        "small ops, other chips)";
  const bool bound = r.verdict != "latency" && r.verdict != "idle";
  t.row("verdict", r.verdict + (bound ? "-bound: " : ": ") + why);
}

Simulator pod_simulator(const Experiment& exp, double wall_time_s, const runtime::PodRunResult& run) {
  Simulator s = simulator_for(exp, wall_time_s, run.kernel_events);
  s.network_events = run.network_events;
  s.messages = run.messages;
  s.chips_simulated = run.chips_simulated;
  s.replicas = run.replicas;
  s.replica_spread_s = run.replica_spread_s;
  s.replica_drift_s = run.replica_drift_s;
  s.collectives_replayed = run.collectives_replayed;
  s.symmetric_axes = run.symmetric_axes;
  s.ops = run.ops;
  if (!run.trace_json.empty())
    s.trace = TraceSummary{run.trace_events, run.trace_dropped, run.trace_chips, run.representative, run.trace_bin_ps};
  return s;
}

std::vector<int> chip_coords(const Experiment& exp, std::uint32_t chip) {
  std::vector<int> coords;
  if (exp.pod.devices_per_chip > 1) {  // the core axis first (interconnect::Topology)
    coords.push_back(static_cast<int>(chip % exp.pod.devices_per_chip));
    chip /= exp.pod.devices_per_chip;
  }
  for (auto s : exp.pod.shape) {
    coords.push_back(static_cast<int>(chip % s));
    chip /= s;
  }
  return coords;
}

std::vector<PerChip> pod_per_chip(const Experiment& exp, const runtime::PodRunResult& run) {
  std::vector<PerChip> per_chip;
  for (std::uint32_t c = 0; c < run.representative.size(); ++c) {
    const ChipFigures f = figures(run, c);
    PerChip p;
    p.chip = c;
    p.coords = chip_coords(exp, c);
    p.mxu_s = f.mxu_s;
    p.vector_s = f.vector_s;
    p.dma_s = f.dma_s;
    p.ici_s = f.comm_s;
    p.compute_s = f.compute_s;
    p.exposed_communication_s = f.comm_s - f.hidden_s;
    p.hbm_bytes = static_cast<std::uint64_t>(f.hbm_bytes);
    p.ici_bytes_out = run.ici_bytes_out[c];
    p.ici_bytes_in = run.ici_bytes_in[c];
    per_chip.push_back(std::move(p));
  }
  return per_chip;
}

}  // namespace workloads
