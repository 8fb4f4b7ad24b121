#include "workloads/collective_workload.h"

#include <optional>

#include "interconnect/algorithms.h"
#include "interconnect/collective.h"
#include "interconnect/functional_reference.h"
#include "interconnect/mesh.h"
#include "interconnect/topology.h"
#include "runtime/pod_run.h"
#include "sim/host.h"
#include "sim/output.h"
#include "sim/units.h"
#include "workloads/pod_report.h"
#include "workloads/report.h"
#include "workloads/validation.h"

namespace workloads {

namespace {

// "a, b and c"
std::string op_list(const std::vector<interconnect::CollectiveOp>& ops) {
  std::string s;
  for (std::size_t i = 0; i < ops.size(); ++i)
    s += (i == 0 ? "" : i + 1 == ops.size() ? " and " : ", ") + std::string(interconnect::to_string(ops[i]));
  return s;
}

// The `algorithm` key's description, from interconnect's table of
// algorithms: what auto picks for each op, and the algorithms that run for
// their timing only.
std::string algorithm_key_description() {
  std::string defaults, timing_only;
  for (const interconnect::AlgorithmInfo& a : interconnect::collective_algorithms()) {
    if (!a.default_for.empty()) defaults += (defaults.empty() ? "" : ", ") + a.name + " for " + op_list(a.default_for);
    if (!a.functional) timing_only += "; " + a.name + ": " + op_list(a.ops) + ", " + a.how + " (timing only)";
  }
  return "auto: " + defaults + timing_only;
}

class CollectiveWorkload : public Workload {
 public:
  explicit CollectiveWorkload(interconnect::CollectiveSpec s) : spec_(std::move(s)) {}
  std::string kind() const override { return "collective"; }
  RunOutput run(const Experiment& exp, const RunOptions& opts) const override;

 private:
  interconnect::CollectiveSpec spec_;
};

RunOutput CollectiveWorkload::run(const Experiment& exp, const RunOptions& opts) const {
  sim::WallTimer wall;
  // Every chip runs one program: its part in the collective, from time 0.
  const interconnect::PodNetworkConfig net = pod_network_config(exp);
  const interconnect::Topology topology = net.make_topology();
  const int n = topology.chips();
  const std::string name = interconnect::Collective::name_of(spec_.op, 0);
  runtime::PodProgram pp;
  hw::Program part;
  part.add(hw::Op{name, {hw::EngineKind::ici, 0}, hw::CommOp{0}, {}, 0});
  pp.add_replicas(std::move(part), static_cast<std::uint32_t>(n));
  pp.collectives = {spec_};
  pp.collective_names = {name};
  // Functional runs: every chip's input is a test pattern; its output is
  // checked against what the op's definition says it must hold.
  std::optional<interconnect::CollectivePlan> plan;
  std::vector<std::vector<double>> inputs, outputs(n);
  if (spec_.functional) {
    plan = interconnect::plan_collective(topology, interconnect::Mesh(topology, net.mesh), net.link, spec_);
    const std::uint64_t elements =
        spec_.op == interconnect::CollectiveOp::all_gather ? plan->shard_elements() : plan->elements;
    for (int c = 0; c < n; ++c) inputs.push_back(interconnect::test_pattern(c, elements));
    pp.collective_data.push_back({[&inputs](int c) { return inputs[c]; },
                                  [&outputs](int c, const std::vector<double>& out) { outputs[c] = out; }});
  }
  const runtime::PodRunResult run = runtime::run_pod(pod_config(exp), pp, opts.trace);
  const runtime::CollectiveTiming& c = run.collectives.at(0);
  const double time_s = c.end_s;  // every chip joins at 0

  Report rep = report_for(exp);
  Result& res = rep.result;
  res.step_time_s = time_s;
  res.cycles = std::round(time_s * exp.chip.clock);
  double hbm = 0, ici = 0;
  for (int chip = 0; chip < n; ++chip) {
    hbm += run.reduce_hbm_bytes[chip];
    ici += double(run.ici_bytes_out[chip]);
  }
  ici -= double(run.dcn_bytes);  // messages between slices cross no ICI link
  res.hbm_bytes = hbm;
  res.ici_bytes = ici;
  res.dcn = dcn_section(exp, run, time_s);
  res.roofline = make_roofline(exp.chip, 0, hbm / n, 0, 0, run.link_utilization_max);
  res.communication.collective_time_s = time_s;
  res.communication.exposed_time_s = time_s;
  res.communication.overlap_fraction = 0.0;
  FunctionalCheck check;
  if (spec_.functional) {
    check.matches_reference = true;
    check.mismatches = 0;
    check.first_mismatch = "";
    for (int chip = 0; chip < n; ++chip) {
      const std::vector<double> want = interconnect::expected_output(*plan, spec_, inputs, chip);
      const std::vector<double>& got = outputs[chip];
      for (std::size_t i = 0; i < want.size(); ++i) {
        if (i < got.size() && got[i] == want[i]) continue;
        if ((*check.mismatches)++ == 0)
          check.first_mismatch = "chip " + std::to_string(chip) + " element " + std::to_string(i) + ": got " +
                                 (i < got.size() ? std::to_string(got[i]) : std::string("nothing")) + ", expected " +
                                 std::to_string(want[i]);
      }
    }
    check.matches_reference = *check.mismatches == 0;
    if (check.matches_reference) check.max_abs_error = 0.0;
    res.functional = check;
  }
  res.links = LinkUtilization{run.link_utilization_max, run.link_utilization_mean};
  rep.collectives = pod_collectives(run);
  CollectiveRecord& rec = rep.collectives.at(0);
  rec.groups = c.groups;
  rec.messages = run.messages;
  rec.network_model = run.network_model;
  rep.per_chip = pod_per_chip(exp, run);
  for (int chip = 0; chip < n; ++chip) {
    PerChip& p = rep.per_chip[chip];
    p.coords = topology.coords(chip);
    p.vector_s = run.reduce_vector_s[chip];  // the vector units' work is the reductions
    p.ici_s = run.chip_end_s(c, static_cast<std::uint32_t>(chip));
    p.reduce_hbm_bytes = run.reduce_hbm_bytes[chip];
  }
  rep.links.emplace();
  for (const runtime::LinkTraffic& l : run.links) {
    const interconnect::LinkEnds e = topology.link_ends(l.link);
    const double busy_s = sim::ps_to_seconds(l.busy_ps);
    rep.links->push_back(LinkRecord{l.link, e.from, e.to, topology.axis_name(e.axis), e.dir, l.bytes, busy_s,
                                    time_s > 0 ? busy_s / time_s : 0.0});
  }
  rep.stats = run.stats;
  rep.simulator = pod_simulator(exp, wall.seconds(), run);

  const std::string op = interconnect::to_string(spec_.op);
  sim::Table t("tpusim: " + exp.name + " (" + op + ", " + interconnect::to_string(rec.algorithm) + ", " +
               sim::si(double(spec_.bytes), "B") + " on " + pod_label(exp) + ")");
  t.row("participants per group", std::to_string(rec.participants), "(" + std::to_string(c.groups) + " groups)");
  t.row("time", sim::si(time_s, "s"), validation_remark(exp));
  t.row("algbw", sim::si(rec.algbw_bytes_per_s, "B/s"));
  t.row("busbw", sim::si(rec.busbw_bytes_per_s, "B/s"));
  t.row("link utilization max", sim::fixed(100 * run.link_utilization_max, 1), "%");
  t.row("link utilization mean", sim::fixed(100 * run.link_utilization_mean, 1), "%");
  t.row("ICI bytes (all chips)", sim::si(ici, "B"));
  if (res.dcn) {
    t.row("DCN bytes (all chips)", sim::si(res.dcn->bytes, "B"));
    t.row("DCN NIC utilization max", sim::fixed(100 * res.dcn->nic_utilization_max, 1), "%");
    t.row("DCN collective time (per chip) / exposed",
          sim::si(res.dcn->time_s, "s") + " / " + sim::si(res.dcn->exposed_time_s, "s"));
  }
  t.row("messages", std::to_string(run.messages));
  if (spec_.functional)
    t.row("functional check", check.matches_reference ? "matches reference" : "MISMATCH: " + *check.first_mismatch);
  t.row("wall time", sim::fixed(rep.simulator.wall_time_s, 3), "s");
  return RunOutput{to_json(rep), t.str(), run.trace_json};
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
                     interconnect::Algorithm::automatic, algorithm_key_description().c_str())
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
