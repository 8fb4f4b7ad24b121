#include "workloads/report.h"

#include "sim/host.h"

namespace workloads {

nlohmann::json report_header(const Experiment& exp) {
  nlohmann::json wrap = nlohmann::json::array();
  for (bool w : exp.pod.wraparound) wrap.push_back(w);
  return {
      {"schema", kReportSchema},
      {"tpusim_version", TPUSIM_VERSION},
      {"experiment", {{"name", exp.name}, {"config_path", exp.config_path}}},
      {"pod",
       {{"chips", exp.pod.chips()},
        {"topology", interconnect::to_string(exp.pod.topology)},
        {"shape", exp.pod.shape},
        {"wraparound", wrap},
        {"chip", exp.chip.name}}},
  };
}

nlohmann::json roofline_section(const hw::ChipConfig& chip, double flops, double hbm_bytes, double mxu_busy_fraction,
                                double hbm_busy_fraction, double ici_busy_fraction) {
  const double peak = chip.peak_flops_per_s(), bw = chip.hbm.bandwidth_bytes_per_s;
  const double ridge = peak / bw;
  const double intensity = hbm_bytes > 0 ? flops / hbm_bytes : 0.0;
  std::string measured = "compute";
  double busiest = mxu_busy_fraction;
  if (hbm_busy_fraction > busiest) {
    measured = "memory";
    busiest = hbm_busy_fraction;
  }
  if (ici_busy_fraction > busiest) measured = "communication";
  return {{"peak_flops_per_s", peak},
          {"hbm_bytes_per_s", bw},
          {"ridge_intensity", ridge},
          {"bound", measured},
          {"bound_predicted", hbm_bytes > 0 && intensity < ridge ? "memory" : "compute"},
          {"time_lower_bound_s", std::max(flops / peak, hbm_bytes / bw)},
          {"busy_fraction", {{"mxu", mxu_busy_fraction}, {"hbm", hbm_busy_fraction}, {"ici", ici_busy_fraction}}}};
}

nlohmann::json simulator_section(const Experiment& exp, double wall_time_s, std::uint64_t events) {
  return {{"fidelity", hw::to_string(exp.fidelity)},
          {"wall_time_s", wall_time_s},
          {"events", events},
          {"events_per_s", wall_time_s > 0 ? double(events) / wall_time_s : 0.0},
          {"peak_rss_bytes", sim::peak_rss_bytes()}};
}

}  // namespace workloads
