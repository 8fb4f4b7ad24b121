#include "workloads/collective_workload.h"

#include "interconnect/run_collective.h"
#include "runtime/pod_run.h"
#include "sim/host.h"
#include "sim/output.h"
#include "workloads/report.h"

namespace workloads {

namespace {

class CollectiveWorkload : public Workload {
 public:
  explicit CollectiveWorkload(interconnect::CollectiveSpec s) : spec_(std::move(s)) {}
  std::string kind() const override { return "collective"; }
  RunOutput run(const Experiment& exp, const RunOptions& opts) const override;

 private:
  interconnect::CollectiveSpec spec_;
};

RunOutput CollectiveWorkload::run(const Experiment& exp, const RunOptions&) const {
  sim::WallTimer wall;
  const interconnect::CollectiveResult c = interconnect::run_collective(pod_network_config(exp), spec_);

  nlohmann::json r = report_header(exp);
  nlohmann::json res;
  res["step_time_s"] = c.time_s;
  res["cycles"] = std::round(c.time_s * exp.chip.clock);
  res["clock_hz"] = exp.chip.clock;
  res["flops"] = 0;
  double hbm = 0;
  for (const auto& pc : c.per_chip) hbm += pc.reduce_hbm_bytes;
  res["hbm_bytes"] = hbm;
  res["ici_bytes"] = c.ici_bytes;
  res["arithmetic_intensity"] = 0;
  res["achieved_flops_per_s"] = 0;
  res["mfu"] = 0;
  res["mxu_utilization"] = 0;
  res["roofline"] = roofline_section(exp.chip, 0, hbm / c.chips, 0, 0, c.link_utilization_max);
  res["communication"] = {{"collective_time_s", c.time_s}, {"exposed_time_s", c.time_s}, {"overlap_fraction", 0.0}};
  res["pipeline"] = nullptr;
  res["memory"] = nullptr;
  res["functional"] =
      c.functional.checked
          ? nlohmann::json{{"matches_reference", c.functional.matches},
                           {"mismatches", c.functional.mismatches},
                           {"first_mismatch", c.functional.first_mismatch},
                           {"max_abs_error", c.functional.matches ? nlohmann::json(0.0) : nlohmann::json(nullptr)}}
          : nlohmann::json(nullptr);
  res["links"] = {{"utilization_max", c.link_utilization_max}, {"utilization_mean", c.link_utilization_mean}};
  r["result"] = res;
  r["collectives"] = nlohmann::json::array({{{"op", c.op},
                                             {"algorithm", c.algorithm},
                                             {"participants", c.participants},
                                             {"groups", c.groups},
                                             {"bytes", c.bytes},
                                             {"time_s", c.time_s},
                                             {"algbw_bytes_per_s", c.algbw_bytes_per_s},
                                             {"busbw_bytes_per_s", c.busbw_bytes_per_s},
                                             {"messages", c.messages},
                                             {"network_model", c.network_model}}});
  nlohmann::json per_chip = nlohmann::json::array();
  for (const auto& pc : c.per_chip)
    per_chip.push_back(
        {{"chip", pc.chip},
         {"coords", pc.coords},
         {"busy", {{"mxu_s", 0.0}, {"vector_s", pc.reduce_vector_s}, {"dma_s", 0.0}, {"ici_s", pc.finish_s}}},
         {"ici_bytes_out", pc.bytes_out},
         {"ici_bytes_in", pc.bytes_in},
         {"reduce_hbm_bytes", pc.reduce_hbm_bytes}});
  r["per_chip"] = per_chip;
  nlohmann::json links = nlohmann::json::array();
  for (const auto& l : c.links)
    links.push_back({{"link", l.link},
                     {"from", l.from},
                     {"to", l.to},
                     {"axis", l.axis},
                     {"dir", l.dir},
                     {"bytes", l.bytes},
                     {"busy_s", l.busy_s},
                     {"utilization", l.utilization}});
  r["links"] = links;
  r["simulator"] = simulator_section(exp, wall.seconds(), c.kernel_events);
  r["simulator"]["network_events"] = c.events;
  r["simulator"]["messages"] = c.messages;

  sim::Table t("tpusim: " + exp.name + " (" + c.op + ", " + c.algorithm + ", " + sim::si(double(c.bytes), "B") +
               " on " + std::to_string(c.chips) + " x " + exp.chip.name + ")");
  t.row("participants per group", std::to_string(c.participants), "(" + std::to_string(c.groups) + " groups)");
  t.row("time", sim::si(c.time_s, "s"));
  t.row("algbw", sim::si(c.algbw_bytes_per_s, "B/s"));
  t.row("busbw", sim::si(c.busbw_bytes_per_s, "B/s"));
  t.row("link utilization max", sim::fixed(100 * c.link_utilization_max, 1), "%");
  t.row("link utilization mean", sim::fixed(100 * c.link_utilization_mean, 1), "%");
  t.row("ICI bytes (all chips)", sim::si(double(c.ici_bytes), "B"));
  t.row("messages", std::to_string(c.messages));
  if (c.functional.checked)
    t.row("functional check", c.functional.matches ? "matches reference" : "MISMATCH: " + c.functional.first_mismatch);
  t.row("wall time", sim::fixed(r["simulator"]["wall_time_s"].get<double>(), 3), "s");
  return RunOutput{r, t.str(), ""};
}

}  // namespace

std::unique_ptr<Workload> load_collective_workload(const sim::YamlNode& node, const Experiment& exp) {
  node.reject_unknown_keys(
      {"kind", "op", "bytes", "algorithm", "axes", "element_bytes", "root", "pairs", "pipeline_chunks"});
  interconnect::CollectiveSpec spec;
  sim::YamlNode op = node["op"];
  if (!op.present())
    op.fail("missing required key; one of all_reduce, reduce_scatter, all_gather, all_to_all, permute, broadcast");
  sim::located(node, [&] { spec.op = interconnect::parse_collective_op(op.as_string(), "workload.op"); });
  sim::YamlNode bytes = node["bytes"];
  if (!bytes.present()) bytes.fail("missing required key (each participant's full buffer, NCCL-tests convention)");
  const double b = bytes.as_double();
  if (!(b >= 1) || b != std::floor(b) || b > 1.2e15)
    bytes.fail("expected a whole number of bytes >= 1, got " + bytes.scalar());
  spec.bytes = static_cast<std::uint64_t>(b);
  if (node["algorithm"].present())
    sim::located(node, [&] {
      spec.algorithm = interconnect::parse_algorithm(node["algorithm"].as_string(), "workload.algorithm");
    });
  if (node["element_bytes"].present()) spec.element_bytes = static_cast<int>(node["element_bytes"].as_int());
  if (node["root"].present()) spec.root = static_cast<int>(node["root"].as_int());
  if (node["pipeline_chunks"].present()) spec.pipeline_chunks = static_cast<int>(node["pipeline_chunks"].as_uint());
  sim::YamlNode axes = node["axes"];
  if (axes.present()) {
    if (axes.is_scalar()) {
      spec.axes.push_back(axes.as_string());
    } else {
      if (!axes.is_sequence()) axes.fail("expected a mesh axis name or a list of them");
      for (std::size_t i = 0; i < axes.size(); ++i) spec.axes.push_back(axes[i].as_string());
    }
  }
  sim::YamlNode pairs = node["pairs"];
  if (pairs.present()) {
    if (!pairs.is_sequence()) pairs.fail("expected a list of [source, destination] pairs");
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      if (!pairs[i].is_sequence() || pairs[i].size() != 2) pairs[i].fail("expected [source, destination]");
      spec.pairs.push_back({static_cast<int>(pairs[i][0].as_int()), static_cast<int>(pairs[i][1].as_int())});
    }
  }
  spec.functional = exp.functional;
  sim::located(node, [&] { spec.validate(pod_network_config(exp)); });
  return std::make_unique<CollectiveWorkload>(std::move(spec));
}

}  // namespace workloads
