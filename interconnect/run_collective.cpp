#include "interconnect/run_collective.h"

#include <algorithm>
#include <optional>
#include <systemc>

#include "interconnect/collective.h"
#include "interconnect/deadlock.h"
#include "interconnect/functional_reference.h"
#include "interconnect/mesh.h"
#include "interconnect/network_factory.h"
#include "interconnect/reduction.h"
#include "sim/kernel.h"

namespace interconnect {

namespace {
FunctionalCheck check_outputs(const Collective& coll, const CollectiveSpec& spec,
                              const std::vector<std::vector<double>>& inputs) {
  FunctionalCheck check;
  check.checked = true;
  for (int chip = 0; chip < static_cast<int>(inputs.size()); ++chip) {
    const std::vector<double> want = expected_output(coll.plan(), spec, inputs, chip);
    const std::vector<double> got = coll.output(chip);
    for (std::size_t i = 0; i < want.size(); ++i) {
      if (i < got.size() && got[i] == want[i]) continue;
      if (check.mismatches++ == 0) {
        check.first_mismatch = "chip " + std::to_string(chip) + " element " + std::to_string(i) + ": got " +
                               (i < got.size() ? std::to_string(got[i]) : std::string("nothing")) + ", expected " +
                               std::to_string(want[i]);
      }
    }
  }
  check.matches = check.mismatches == 0;
  return check;
}

std::optional<CollectiveResult> simulate(const Topology& topology, const PodNetworkConfig& pod,
                                         const CollectiveSpec& spec, std::shared_ptr<const CollectivePlan> plan,
                                         const Translations& t);

// Every axis Translations::candidate_axes allows (with several slices, the
// DCN axes and the ICI axes that move hosts onto hosts; none with degraded
// links), if the plan is invariant
// along all of them and the network is the fluid model; else none.
// `error_s`: how far a chip may end from its orbit chip (uneven_ps).
Translations symmetry(const Topology& topology, const PodNetworkConfig& pod, const CollectivePlan& plan,
                      double& error_s) {
  error_s = 0;
  if (pod.model != NetworkModel::fluid || plan.functional) return {};
  Translations t(topology, Translations::candidate_axes(topology));
  const Invariance inv = t.invariance(plan);
  if (!inv.blocker.empty()) return {};
  error_s = uneven_ps(inv, topology, pod.link, pod.reduction) / kPsPerSecond;
  return t;
}

}  // namespace

// A message whose route is not invariant under the translations: simulated
// again without them.
CollectiveResult run_collective(const PodNetworkConfig& pod, const CollectiveSpec& spec, bool translations) {
  pod.validate();
  spec.validate(pod);
  const Topology topology = pod.make_topology();
  const Mesh mesh(topology, pod.mesh);
  // Shared by both attempts, never copied: a 4096-chip torus plan's copy
  // cost a tenth of the whole run.
  const auto plan = std::make_shared<const CollectivePlan>(plan_collective(topology, mesh, pod.link, spec));
  double error_s = 0;
  const Translations t = translations ? symmetry(topology, pod, *plan, error_s) : Translations{};
  if (!t.none()) {
    if (std::optional<CollectiveResult> r = simulate(topology, pod, spec, plan, t)) {
      r->symmetry_error_s = error_s;
      return *r;
    }
  }
  return *simulate(topology, pod, spec, plan, {});
}

namespace {

std::optional<CollectiveResult> simulate(const Topology& topology, const PodNetworkConfig& pod,
                                         const CollectiveSpec& spec, std::shared_ptr<const CollectivePlan> plan,
                                         const Translations& t) {
  sim::reset_kernel();
  std::unique_ptr<Network> net = make_network("ici", topology, pod);
  net->use_translations(t);
  VectorUnitReduction reduction(*net, pod.reduction);
  Collective coll(*net, reduction, std::move(plan), spec.functional);

  std::vector<std::vector<double>> inputs;
  if (spec.functional) {
    for (int chip = 0; chip < topology.chips(); ++chip) {
      inputs.push_back(test_pattern(chip, coll.input_elements()));
      coll.set_input(chip, inputs.back());
    }
  }
  for (int chip = 0; chip < topology.chips(); ++chip)
    if (t.is_rep(chip)) coll.join(chip);
  sc_core::sc_start();
  if (net->asymmetric()) return std::nullopt;
  require_all_done(*net, {&coll});

  CollectiveResult r;
  r.op = to_string(spec.op);
  r.algorithm = to_string(coll.plan().algorithm);
  r.network_model = net->model();
  r.chips = topology.chips();
  r.participants = coll.plan().group_size();
  r.groups = static_cast<int>(coll.plan().groups.size());
  r.bytes = spec.bytes;
  r.time_s = to_seconds(coll.end_time());
  if (r.time_s > 0.0) {
    r.algbw_bytes_per_s = static_cast<double>(spec.bytes) / r.time_s;
    r.busbw_bytes_per_s = r.algbw_bytes_per_s * bus_bandwidth_factor(spec.op, r.participants);
  }
  double util_sum = 0.0;
  for (int l = 0; l < topology.link_slots(); ++l) {
    if (!topology.link_exists(l)) continue;
    const LinkEnds e = topology.link_ends(l);
    LinkReport lr;
    lr.link = l;
    lr.from = e.from;
    lr.to = e.to;
    lr.axis = topology.axis_name(e.axis);
    lr.dir = e.dir;
    lr.bytes = net->link_bytes(l);
    lr.busy_s = to_seconds(net->link_busy(l));
    lr.utilization = r.time_s > 0.0 ? lr.busy_s / r.time_s : 0.0;
    r.link_utilization_max = std::max(r.link_utilization_max, lr.utilization);
    util_sum += lr.utilization;
    r.links.push_back(std::move(lr));
  }
  if (!r.links.empty()) r.link_utilization_mean = util_sum / static_cast<double>(r.links.size());
  for (int chip = 0; chip < topology.chips(); ++chip) {
    ChipReport c;
    c.chip = chip;
    c.coords = topology.coords(chip);
    c.bytes_out = net->chip_bytes_out(chip);
    c.bytes_in = net->chip_bytes_in(chip);
    const int rep = t.rep(chip);  // the chip standing for its orbit
    c.reduce_vector_s = reduction.vector_busy_s(rep);
    c.reduce_hbm_bytes = reduction.hbm_bytes(rep);
    c.finish_s = to_seconds(coll.finish_time(rep));
    r.ici_bytes += c.bytes_out;
    r.per_chip.push_back(std::move(c));
  }
  r.messages = net->messages();
  r.messages_carried = net->messages_carried();
  for (const int a : t.axes())  // a DCN axis by its place among them, as runtime reports it: dcn0, dcn1
    r.symmetric_axes.push_back(topology.is_dcn_axis(a) ? "dcn" + std::to_string(a - topology.ici_axes())
                                                       : std::string(topology.axis_name(a)));
  r.events = net->events();
  r.kernel_events = sim::kernel_events();
  if (spec.functional) r.functional = check_outputs(coll, spec, inputs);
  return r;
}

}  // namespace

}  // namespace interconnect
