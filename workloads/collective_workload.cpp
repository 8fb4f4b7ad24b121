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

  Report rep = report_for(exp);
  Result& res = rep.result;
  res.step_time_s = c.time_s;
  res.cycles = std::round(c.time_s * exp.chip.clock);
  double hbm = 0;
  for (const auto& pc : c.per_chip) hbm += pc.reduce_hbm_bytes;
  res.hbm_bytes = hbm;
  res.ici_bytes = double(c.ici_bytes);
  res.roofline = make_roofline(exp.chip, 0, hbm / c.chips, 0, 0, c.link_utilization_max);
  res.communication.collective_time_s = c.time_s;
  res.communication.exposed_time_s = c.time_s;
  res.communication.overlap_fraction = 0.0;
  if (c.functional.checked) {
    FunctionalCheck f;
    f.matches_reference = c.functional.matches;
    f.mismatches = c.functional.mismatches;
    f.first_mismatch = c.functional.first_mismatch;
    if (c.functional.matches) f.max_abs_error = 0.0;
    res.functional = f;
  }
  res.links = LinkUtilization{c.link_utilization_max, c.link_utilization_mean};
  CollectiveRecord rec;
  rec.op = c.op;
  rec.algorithm = c.algorithm;
  rec.participants = c.participants;
  rec.groups = c.groups;
  rec.bytes = c.bytes;
  rec.time_s = c.time_s;
  rec.algbw_bytes_per_s = c.algbw_bytes_per_s;
  rec.busbw_bytes_per_s = c.busbw_bytes_per_s;
  rec.messages = c.messages;
  rec.network_model = c.network_model;
  rep.collectives.push_back(rec);
  for (const auto& pc : c.per_chip) {
    PerChip p;
    p.chip = static_cast<std::uint32_t>(pc.chip);
    p.coords = pc.coords;
    p.vector_s = pc.reduce_vector_s;
    p.ici_s = pc.finish_s;
    p.ici_bytes_out = pc.bytes_out;
    p.ici_bytes_in = pc.bytes_in;
    p.reduce_hbm_bytes = pc.reduce_hbm_bytes;
    rep.per_chip.push_back(std::move(p));
  }
  rep.links.emplace();
  for (const auto& l : c.links)
    rep.links->push_back(LinkRecord{l.link, l.from, l.to, l.axis, l.dir, l.bytes, l.busy_s, l.utilization});
  rep.simulator = simulator_for(exp, wall.seconds(), c.kernel_events);
  rep.simulator.network_events = c.events;
  rep.simulator.messages = c.messages;

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
  t.row("wall time", sim::fixed(rep.simulator.wall_time_s, 3), "s");
  return RunOutput{to_json(rep), t.str(), ""};
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
