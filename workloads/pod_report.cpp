#include "workloads/pod_report.h"

#include <algorithm>
#include <cmath>

#include "interconnect/collective_spec.h"
#include "workloads/report.h"

namespace workloads {

PodSummary summarize(const Experiment& exp, const runtime::PodRunResult& run) {
  PodSummary s;
  s.step_s = run.step_time_s;
  const double chips = double(run.chips.size());
  for (const runtime::ChipTiming& t : run.chips) {
    s.hbm_bytes += double(t.hbm_bytes);
    s.ici_bytes += double(t.ici_bytes_out);
    s.comm_s += t.ici_busy_s / chips;
    s.hidden_s += t.comm_hidden_s / chips;
    s.compute_s += t.compute_busy_s / chips;
    if (s.step_s > 0) {
      s.mxu_fraction = std::max(s.mxu_fraction, t.mxu_busy_max_s / s.step_s);
      s.hbm_fraction = std::max(s.hbm_fraction, double(t.hbm_bytes) / (exp.chip.hbm.bandwidth_bytes_per_s * s.step_s));
      s.ici_fraction = std::max(s.ici_fraction, (t.ici_busy_s - t.comm_hidden_s) / s.step_s);
    }
  }
  return s;
}

nlohmann::json pod_result(const Experiment& exp, const PodSummary& s, double flops) {
  const hw::ChipConfig& chip = exp.chip;
  const double chips = exp.pod.chips();
  const double peak = chip.peak_flops_per_s() * chips;
  nlohmann::json res;
  res["step_time_s"] = s.step_s;
  res["cycles"] = std::round(s.step_s * chip.clock);
  res["clock_hz"] = chip.clock;
  res["flops"] = flops;
  res["hbm_bytes"] = s.hbm_bytes;
  res["ici_bytes"] = s.ici_bytes;
  res["arithmetic_intensity"] = s.hbm_bytes > 0 ? flops / s.hbm_bytes : 0;
  res["achieved_flops_per_s"] = s.step_s > 0 ? flops / s.step_s : 0;
  res["mfu"] = s.step_s > 0 ? flops / s.step_s / peak : 0;
  res["mxu_utilization"] = res["mfu"];
  res["roofline"] =
      roofline_section(chip, flops / chips, s.hbm_bytes / chips, s.mxu_fraction, s.hbm_fraction, s.ici_fraction);
  res["communication"] = {
      {"collective_time_s", s.comm_s},
      {"exposed_time_s", s.exposed_s()},
      {"overlap_fraction", s.comm_s > 0 ? nlohmann::json(s.overlap_fraction()) : nlohmann::json(nullptr)},
      {"compute_time_s", s.compute_s}};
  return res;
}

nlohmann::json pod_collectives(const runtime::PodRunResult& run) {
  nlohmann::json colls = nlohmann::json::array();
  for (const auto& c : run.collectives) {
    const double t = c.time_s();
    const double algbw = t > 0 ? double(c.bytes) / t : 0.0;
    const auto op = interconnect::parse_collective_op(c.op, "collectives");
    colls.push_back({{"name", c.name},
                     {"op", c.op},
                     {"algorithm", c.algorithm},
                     {"participants", c.participants},
                     {"bytes", c.bytes},
                     {"start_s", c.start_s},
                     {"time_s", t},
                     {"algbw_bytes_per_s", algbw},
                     {"busbw_bytes_per_s", algbw * interconnect::bus_bandwidth_factor(op, c.participants)}});
  }
  return colls;
}

nlohmann::json pod_simulator_section(const Experiment& exp, double wall_time_s, const runtime::PodRunResult& run) {
  nlohmann::json s = simulator_section(exp, wall_time_s, run.kernel_events);
  s["network_events"] = run.network_events;
  s["messages"] = run.messages;
  s["chips_simulated"] = run.chips_simulated;
  s["replicas"] = run.replicas;
  s["replica_spread_s"] = run.replica_spread_s;
  s["collectives_replayed"] = run.collectives_replayed;
  return s;
}

std::vector<int> chip_coords(const Experiment& exp, std::uint32_t chip) {
  std::vector<int> coords;
  for (auto s : exp.pod.shape) {
    coords.push_back(static_cast<int>(chip % s));
    chip /= s;
  }
  return coords;
}

nlohmann::json pod_per_chip(const Experiment& exp, const runtime::PodRunResult& run) {
  nlohmann::json per_chip = nlohmann::json::array();
  for (std::size_t c = 0; c < run.chips.size(); ++c) {
    const runtime::ChipTiming& t = run.chips[c];
    per_chip.push_back(
        {{"chip", c},
         {"coords", chip_coords(exp, static_cast<std::uint32_t>(c))},
         {"busy",
          {{"mxu_s", t.mxu_busy_s}, {"vector_s", t.vector_busy_s}, {"dma_s", t.dma_busy_s}, {"ici_s", t.ici_busy_s}}},
         {"compute_s", t.compute_busy_s},
         {"exposed_communication_s", t.ici_busy_s - t.comm_hidden_s},
         {"hbm_bytes", t.hbm_bytes},
         {"ici_bytes_out", t.ici_bytes_out},
         {"ici_bytes_in", t.ici_bytes_in}});
  }
  return per_chip;
}

}  // namespace workloads
