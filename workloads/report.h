#pragma once
// The parts of report.json (schema tpusim.report/1, docs/interface.md) that every
// workload kind shares.
#include <nlohmann/json.hpp>

#include <string>

#include "workloads/experiment.h"

namespace workloads {

inline constexpr const char* kReportSchema = "tpusim.report/1";

// schema, tpusim_version, experiment, pod.
nlohmann::json report_header(const Experiment& exp);

// roofline: peak, bandwidth, ridge, the bound predicted from intensity, and
// the bound measured (the busiest of MXU, HBM and ICI over the step).
nlohmann::json roofline_section(const hw::ChipConfig& chip, double flops, double hbm_bytes, double mxu_busy_fraction,
                                double hbm_busy_fraction, double ici_busy_fraction);

// simulator: fidelity, wall_time_s, events, peak_rss_bytes.
nlohmann::json simulator_section(const Experiment& exp, double wall_time_s, std::uint64_t events);

}  // namespace workloads
