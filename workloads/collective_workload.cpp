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

const sim::ParamTable<interconnect::CollectiveSpec>& collective_params() {
  using interconnect::CollectiveSpec;
  static const sim::ParamTable<CollectiveSpec> t = [] {
    sim::ParamTable<CollectiveSpec> p("workload.collective", "one collective over the pod or some of its mesh axes");
    p.enumeration("op", &CollectiveSpec::op, interconnect::collective_op_names(), std::nullopt, "the collective")
        .integer<std::uint64_t>("bytes", &CollectiveSpec::bytes, "B", std::nullopt, sim::between(1, 1.2e15),
                                "each participant's full buffer, as NCCL-tests counts it: the array reduced "
                                "(all_reduce), the input (reduce_scatter, all_to_all), the output (all_gather), "
                                "what is sent (permute, broadcast)")
        .enumeration("algorithm", &CollectiveSpec::algorithm, interconnect::algorithm_names(),
                     interconnect::Algorithm::automatic,
                     "auto: torus for all_reduce, reduce_scatter and all_gather, direct for all_to_all and permute, "
                     "bidirectional_ring for broadcast")
        .list("axes", &CollectiveSpec::axes, sim::text_item(), {0, std::numeric_limits<std::size_t>::max(), true},
              "every mesh axis", "mesh axes taking part: one name or a list")
        .integer<int>("element_bytes", &CollectiveSpec::element_bytes, "B", 4, sim::between(1, 8),
                      "bytes of one element: 1, 2, 4 or 8")
        .integer<int>("root", &CollectiveSpec::root, "", 0, sim::at_least(0),
                      "broadcast: the source, as an index in its group")
        .custom("pairs", {"list of [source, destination]", "", "every chip sends to the next one in group order", ""},
                "permute: pairs of indices in the group, each source and each destination at most once",
                [](const sim::YamlNode& pairs, CollectiveSpec& spec) {
                  if (!pairs.is_sequence()) pairs.fail("expected a list of [source, destination] pairs");
                  const sim::Range index = sim::at_least(0);
                  for (std::size_t i = 0; i < pairs.size(); ++i) {
                    const sim::YamlNode pair = pairs[i];
                    if (!pair.is_sequence() || pair.size() != 2) pair.fail("expected [source, destination]");
                    spec.pairs.push_back(
                        {sim::read_integer_as<int>(pair[0], index, ""), sim::read_integer_as<int>(pair[1], index, "")});
                  }
                })
        .integer<int>("pipeline_chunks", &CollectiveSpec::pipeline_chunks, "pieces", 0, sim::at_least(0),
                      "broadcast: pieces the data is pipelined in (0: chosen from the link latency)")
        .allow("kind");
    return p;
  }();
  return t;
}

std::unique_ptr<Workload> load_collective_workload(const sim::YamlNode& node, const Experiment& exp) {
  interconnect::CollectiveSpec spec;
  collective_params().load(node, spec);
  spec.functional = exp.functional;
  sim::located(node, [&] { spec.validate(pod_network_config(exp)); });
  return std::make_unique<CollectiveWorkload>(std::move(spec));
}

}  // namespace workloads
