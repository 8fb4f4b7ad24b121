#include "workloads/experiment.h"

#include <systemc>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <random>

#include "sim/error.h"
#include "sim/kernel.h"
#include "sim/output.h"

namespace workloads {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> yaml_files_in(const std::vector<std::string>& dirs) {
  std::vector<std::string> names;
  for (const auto& d : dirs) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(d, ec))
      if (e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::vector<std::string> search_dirs(const std::string& experiment_path, const std::string& sub) {
  std::vector<std::string> dirs;
  fs::path exp_dir = fs::path(experiment_path).parent_path();
  dirs.push_back((exp_dir.empty() ? fs::path(".") : exp_dir).string());
  dirs.push_back((exp_dir / ".." / sub).lexically_normal().string());
  if (const char* env = std::getenv("TPUSIM_CONFIG_DIR")) dirs.push_back((fs::path(env) / sub).string());
#ifdef TPUSIM_SOURCE_DIR
  dirs.push_back((fs::path(TPUSIM_SOURCE_DIR) / "configs" / sub).string());
#endif
  dirs.push_back((fs::path("configs") / sub).string());
  return dirs;
}

// A readable file; false (never an exception) for names the OS rejects
// (too long, ...), directories and devices.
bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

}  // namespace

std::string resolve_named_file(const sim::YamlNode& ref, const std::string& experiment_path, const std::string& sub,
                               const std::string& what) {
  std::string name = ref.as_string();
  if (name.empty() || name.find('\0') != std::string::npos)
    ref.fail("expected the name of a " + what + " file, got '" + name.substr(0, name.find('\0')) + "'");
  if (name.find('/') != std::string::npos || (name.size() > 5 && name.substr(name.size() - 5) == ".yaml")) {
    fs::path p = fs::path(name);
    if (p.is_relative()) p = fs::path(experiment_path).parent_path() / p;
    if (is_file(p)) return p.string();
    ref.fail("no " + what + " file '" + p.string() + "'");
  }
  auto dirs = search_dirs(experiment_path, sub);
  for (const auto& d : dirs) {
    fs::path p = fs::path(d) / (name + ".yaml");
    if (is_file(p)) return p.string();
  }
  std::string msg = "unknown " + what + " '" + name + "'";
  auto known = yaml_files_in(dirs);
  std::string hint = sim::did_you_mean(name, known);
  if (!hint.empty())
    msg += "; " + hint;
  else if (!known.empty()) {
    msg += "; known:";
    for (const auto& k : known) msg += " " + k;
  }
  ref.fail(msg);
}

std::vector<std::string> chip_search_dirs(const std::string& experiment_path) {
  return search_dirs(experiment_path, "chips");
}

std::vector<std::string> config_search_dirs(const std::string& experiment_path, const std::string& sub) {
  return search_dirs(experiment_path, sub);
}

std::string chip_file_option(const std::string& name, const std::string& option) {
  const sim::SourceLocation where{"command line", 0, 0};
  const sim::YamlNode ref(YAML::Node(name), where.file, option, where);
  return resolve_named_file(ref, "", "chips", "chip");
}

hw::ChipConfig load_chip_option(const std::string& name, const std::string& option) {
  return hw::load_chip(sim::YamlNode::load_file(chip_file_option(name, option)));
}

const sim::EnumNames<Replicas>& replicas_names() {
  static const sim::EnumNames<Replicas> names(
      "replicas mode", {{Replicas::automatic, "auto", "one chip per group of identical replicas, when that is exact"},
                        {Replicas::all, "all", "every chip"}});
  return names;
}

const char* to_string(Replicas r) { return replicas_names().name(r); }

namespace {

constexpr std::uint32_t kMaxChips = 262144;  // 2^18: 16 TPU7x superpods (147,456 chips) with room

// The workload kinds of the registry, in its order: workload.kind's values.
const sim::EnumNames<std::size_t>& workload_kind_names() {
  static const sim::EnumNames<std::size_t> names = [] {
    std::vector<sim::EnumChoice<std::size_t>> choices;
    for (std::size_t i = 0; i < workload_kinds().size(); ++i) choices.push_back({i, workload_kinds()[i].name, ""});
    return sim::EnumNames<std::size_t>("workload kind", choices);
  }();
  return names;
}

// Pod shape and wraparound against the topology, once all three are read.
void check_pod_axes(const sim::YamlNode& node, PodSpec& pod) {
  const std::size_t rank = static_cast<std::size_t>(interconnect::axes_of(pod.topology));
  const std::string topology = interconnect::to_string(pod.topology);
  const sim::YamlNode shape = node["shape"];
  if (pod.shape.size() != rank)
    shape.fail("a " + topology + " needs a list of " + std::to_string(rank) + " axis size" + (rank > 1 ? "s" : "") +
               ", got " + std::to_string(pod.shape.size()));
  std::uint64_t chips = 1;
  for (auto s : pod.shape) chips *= s;
  if (chips > kMaxChips)
    shape.fail("at most " + std::to_string(kMaxChips) + " chips are supported, got " + std::to_string(chips));
  const sim::YamlNode wrap = node["wraparound"];
  if (!wrap.present()) {
    pod.wraparound.assign(rank, true);
  } else if (wrap.is_scalar()) {
    pod.wraparound.assign(rank, pod.wraparound.front());
  } else if (pod.wraparound.size() != rank) {
    wrap.fail("expected true/false or a list of " + std::to_string(rank) + " booleans, got " +
              std::to_string(pod.wraparound.size()));
  }
}

// A name that becomes a folder (the experiment's) or part of a key path (a
// mesh axis): a word of letters, digits, '_', '-' (and '.' for a folder, not
// first), so it cannot leave runs/ or read as a path.
std::string checked_name(const sim::YamlNode& n, const std::string& s, const char* what, bool dots = true) {
  const bool word = !s.empty() && s.size() <= 100 && s.front() != '.' && s.front() != '-' &&
                    std::all_of(s.begin(), s.end(), [&](char c) {
                      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || (dots && c == '.');
                    });
  if (!word)
    n.fail(std::string("a ") + what + " is at most 100 letters, digits, '_', '-'" + (dots ? ", '.'" : "") +
           " (not starting with '.' or '-'), got " + sim::quote_short(s));
  return s;
}

// `mesh:` in file order, each axis 1..65536 devices, multiplying to the pod's
// devices (its chips x the chip's devices, as jax.devices() counts them).
void load_mesh(const sim::YamlNode& mesh, Experiment& exp) {
  if (!mesh.is_map()) mesh.fail("expected a mapping of axis names to sizes, e.g. {data: 4, model: 2}");
  std::uint64_t product = 1;
  for (const auto& axis : mesh.keys()) {
    checked_name(mesh[axis], axis, "mesh axis name", false);
    const auto size = sim::read_integer_as<std::uint32_t>(mesh[axis], sim::between(1, kMaxChips), "chips");
    exp.mesh.push_back({axis, size});
    product *= size;
  }
  const std::uint64_t per_chip = exp.chip.devices;
  if (product != exp.pod.chips() * per_chip) {
    if (per_chip == 1)
      mesh.fail("mesh axes multiply to " + std::to_string(product) + " chips but the pod has " +
                std::to_string(exp.pod.chips()));
    mesh.fail("mesh axes multiply to " + std::to_string(product) + " devices but the pod has " +
              std::to_string(exp.pod.chips() * per_chip) + " (" + std::to_string(exp.pod.chips()) + " chips of " +
              std::to_string(per_chip) + " devices: " + exp.chip.name +
              " exposes each TensorCore as a device; meshes count devices)");
  }
}

// One slice: a pod file name (looked up in pods/) or an inline mapping.
void load_one_pod(const sim::YamlNode& pod, Experiment& exp) {
  const bool based = pod.is_map() && pod["base"].present();
  if (pod.is_scalar() || based) {
    const sim::YamlNode name = based ? pod["base"] : pod;
    const std::string file = resolve_named_file(name, exp.config_path, "pods", "pod");
    exp.inputs.push_back(file);
    const sim::YamlNode pod_doc = sim::YamlNode::load_file(file);
    const sim::YamlNode base = pod_doc["pod"].present() ? pod_doc["pod"] : pod_doc;
    pod_params().load(base, exp.pod);
    if (!based) return;
    exp.pod_what_if = lay_over_base(pod, base, name.as_string());  // checked on its own above
  }
  pod_params().load(pod, exp.pod);
}

// A mapping with any of these keys is a pod of several slices.
bool is_multislice(const sim::YamlNode& pod) {
  if (!pod.is_map()) return false;
  for (const char* k : {"slices", "slice", "dcn", "dcn_axes"})
    if (pod[k].present()) return true;
  return false;
}

// `pod:` one slice, or `{slices, slice, dcn, dcn_axes}`; its link overrides
// go into the chip, which the run reads.
void load_pod(const sim::YamlNode& pod, Experiment& exp) {
  if (is_multislice(pod)) {
    const sim::YamlNode slice = pod["slice"];
    if (!slice.present()) slice.fail("missing required key: the pod file or mapping every slice is");
    load_one_pod(slice, exp);
    multislice_params().load(pod, exp.pod);
  } else {
    load_one_pod(pod, exp);
  }
  if (exp.pod.link_bandwidth) exp.chip.ici.link_bandwidth = *exp.pod.link_bandwidth;
  if (exp.pod.link_latency) exp.chip.ici.link_latency = *exp.pod.link_latency;
}

// `pod.dcn_axes` against the mesh: known axes, each once; without a mesh
// and with several slices, the default mesh's `dcn` axis.
void check_dcn_axes(const sim::YamlNode& root, Experiment& exp) {
  const sim::YamlNode node = root["pod"]["dcn_axes"];
  for (std::size_t i = 0; i < exp.pod.dcn_axes.size(); ++i) {
    const std::string& a = exp.pod.dcn_axes[i];
    const sim::YamlNode item = node.is_sequence() ? node[i] : node;
    std::vector<std::string> known;
    for (const auto& m : exp.mesh) known.push_back(m.first);
    if (std::find(known.begin(), known.end(), a) == known.end()) {
      std::string hint = sim::did_you_mean(a, known);
      std::string all;
      for (const auto& k : known) all += (all.empty() ? "" : ", ") + k;
      item.fail("unknown mesh axis '" + a + "'" + (hint.empty() ? " (mesh axes: " + all + ")" : "; " + hint));
    }
    if (std::count(exp.pod.dcn_axes.begin(), exp.pod.dcn_axes.end(), a) > 1)
      item.fail("mesh axis '" + a + "' listed twice");
  }
}

// `chip:` a chip file name (looked up in chips/) or an inline mapping.
void load_chip_ref(const sim::YamlNode& chip, Experiment& exp) {
  if (chip.is_map() && chip["base"].present()) {
    const std::string file = resolve_named_file(chip["base"], exp.config_path, "chips", "chip");
    exp.chip_ref = chip["base"].as_string();
    exp.inputs.push_back(file);
    const sim::YamlNode base = sim::YamlNode::load_file(file);
    hw::load_chip(base);  // the file on its own: its own mistakes located in it
    exp.chip_what_if = lay_over_base(chip, base, exp.chip_ref);
    exp.chip = hw::load_chip(chip);
  } else if (chip.is_map()) {
    exp.chip_ref = "inline";
    exp.chip = hw::load_chip(chip);
  } else {
    const std::string file = resolve_named_file(chip, exp.config_path, "chips", "chip");
    exp.chip_ref = chip.as_string();
    exp.inputs.push_back(file);
    exp.chip = hw::load_chip(sim::YamlNode::load_file(file));
  }
  if (exp.chip.name.empty()) exp.chip.name = exp.chip_ref;
}

// `workload:` a mapping whose `kind` picks the loader of the registry.
void load_workload(const sim::YamlNode& wl, Experiment& exp) {
  if (!wl.is_map()) wl.fail("expected a mapping with 'kind', got " + sim::describe_yaml(wl.raw()));
  const sim::YamlNode kind = wl["kind"];
  if (!kind.present()) kind.fail("missing required key; " + workload_kind_names().expected());
  const std::size_t k = workload_kind_names().parse(kind);
  exp.workload_yaml = sim::flow_yaml(wl.raw());
  exp.workload = workload_kinds()[k].load(wl, exp);
}

// workload.kind, documented under `workload`.
nlohmann::json workload_keys() {
  const auto& names = workload_kind_names();
  return {{"params", nlohmann::json::array(
                         {{{"name", "kind"},
                           {"type", names.type()},
                           {"unit", ""},
                           {"default", "(required)"},
                           {"description", "what to run; the other keys are the kind's (tpusim explain KIND)"}}})}};
}

// `pod.links`: a list of mappings, checked against the pod's shape (read
// before it) where each entry is.
void load_links(const sim::YamlNode& node, PodSpec& pod) {
  if (!node.is_sequence())
    node.fail("expected a list of {from, to, bandwidth} mappings, got " + sim::describe_yaml(node.raw()));
  for (std::size_t i = 0; i < node.size(); ++i) {
    interconnect::LinkFault f;
    interconnect::link_fault_params().load(node[i], f);
    pod.links.push_back(std::move(f));
  }
  const std::vector<int> shape(pod.shape.begin(), pod.shape.end());
  if (const auto p = interconnect::find_link_fault_problem(shape, pod.wraparound, pod.links)) {
    const sim::YamlNode entry = node[p->entry];
    (p->field.empty() || !entry[p->field].present() ? entry : entry[p->field]).fail(p->message);
  }
}

}  // namespace

const sim::ParamTable<PodSpec>& pod_params() {
  static const sim::ParamTable<PodSpec> t = [] {
    sim::ParamTable<PodSpec> p("pod", "chips joined by ICI links: a ring or a 2D/3D torus");
    p.custom("base", {"pod file name", "", "none", ""},
             "in an experiment's `pod:` mapping only: a shipped pod whose keys the mapping's other keys change, "
             "e.g. {base: v5e-4x4, link_bandwidth: 9e10} (a what-if; report.json's experiment.pod)",
             [](const sim::YamlNode& n, PodSpec&) {
               n.fail("a pod file cannot name a base; an experiment's pod: mapping can (pod: {base: NAME, ...})");
             })
        .enumeration("topology", &PodSpec::topology, interconnect::topology_kinds(), interconnect::TopologyKind::ring,
                     "ring (1 axis), torus2d (2), torus3d (3)")
        .list("shape", &PodSpec::shape, sim::integer_item<std::uint32_t>("chips", sim::between(1, kMaxChips)), {},
              nullptr, "chips along each axis, one size per axis of the topology; at most 262144 chips in all")
        .list("wraparound", &PodSpec::wraparound, sim::flag_item(), {0, std::numeric_limits<std::size_t>::max(), true},
              "true on every axis",
              "whether each axis wraps around (a torus) or not (a mesh): one boolean for every axis, or one per axis")
        .then(check_pod_axes)
        .real("link_bandwidth", &PodSpec::link_bandwidth, "B/s", "the chip's ici.link_bandwidth", sim::positive(),
              "bandwidth of one ICI link in one direction")
        .real("link_latency", &PodSpec::link_latency, "s", "the chip's ici.link_latency", hw::link_latency_range(),
              "latency of one ICI hop")
        .integer<std::uint64_t>("packet_bytes", &PodSpec::packet_bytes, "B", 4096, sim::between(1, 1 << 30),
                                "ICI packet size (an assumption): the packet model's granularity, the "
                                "store-and-forward delay and a reduction's tail")
        .enumeration("switching", &PodSpec::switching, interconnect::switching_names(),
                     interconnect::Switching::cut_through,
                     "cut_through: a message pays its serialization once; store_and_forward: at every hop")
        .enumeration("network_model", &PodSpec::network_model, interconnect::network_model_names(),
                     interconnect::NetworkModel::fluid,
                     "fluid: max-min fair flows, recomputed when a flow starts or ends; packet: every packet hop by "
                     "hop (the slow reference the fluid model is tested against)")
        .custom("links", {"list of mappings", "", "none: every link at its nominal bandwidth", ""},
                "degraded or failed ICI links: [{from: [x,y,z], to: [x,y,z], bandwidth: 0.5}] or failed: true; "
                "both directions unless one_way (docs/interconnect.md, Degraded and failed links)",
                load_links, false, [] { return interconnect::link_fault_params().describe(); });
    return p;
  }();
  return t;
}

namespace {
sim::ParamTable<DcnSpec> dcn_params() {
  sim::ParamTable<DcnSpec> p("dcn", "the data-center network between slices (docs/interconnect.md, DCN)");
  p.real("nic_bandwidth", &DcnSpec::nic_bandwidth, "B/s", "the chip's host.nic_bandwidth", sim::positive(),
         "all of a host's NICs together, each way")
      .real("host_bandwidth", &DcnSpec::host_bandwidth, "B/s", "the chip's host.pcie_bandwidth", sim::positive(),
            "one chip's link to its host (PCIe), each way")
      .real("latency", &DcnSpec::latency, "s", 1.0e-5, sim::between(0, 1),
            "one message between slices, NIC to NIC (an assumption: none is published)")
      .real("oversubscription", &DcnSpec::oversubscription, "", 1.0, sim::between(1, 1000),
            "hosts' NIC bandwidth over the fabric core's: a slice's traffic to other slices shares hosts x "
            "nic_bandwidth / oversubscription each way");
  return p;
}
}  // namespace

const sim::ParamTable<PodSpec>& multislice_params() {
  static const sim::ParamTable<PodSpec> t = [] {
    sim::ParamTable<PodSpec> p("pod", "slices (each an ICI ring or torus) joined by the data-center network (DCN)");
    p.integer<std::uint32_t>("slices", &PodSpec::slices, "slices", 1, sim::between(1, kMaxChips),
                             "slices joined by DCN")
        // Read before this table by load_pod, into the same PodSpec.
        .custom(
            "slice", {"pod file name or mapping", "", "", ""},
            "what every slice is: a pod file name (e.g. v5e-16x16) or an inline pod mapping (tpusim explain pod)",
            [](const sim::YamlNode&, PodSpec&) {}, true)
        .then([](const sim::YamlNode& node, PodSpec& pod) {
          if (std::uint64_t(pod.slice_chips()) * pod.slices > kMaxChips)
            node["slices"].fail("at most " + std::to_string(kMaxChips) + " chips are supported, got " +
                                std::to_string(std::uint64_t(pod.slice_chips()) * pod.slices));
        })
        .group("dcn", &PodSpec::dcn, dcn_params())
        .list("dcn_axes", &PodSpec::dcn_axes, sim::text_item(), {0, 8, true}, "dcn (the default mesh's axis)",
              "mesh axes placed across the slices (MaxText's dcn_*_parallelism); every other axis stays inside "
              "a slice");
    return p;
  }();
  return t;
}

const sim::ParamTable<runtime::Limits>& limits_params() {
  static const sim::ParamTable<runtime::Limits> t = [] {
    const runtime::Limits d;
    sim::ParamTable<runtime::Limits> p("limits", "runaway guards: reaching one ends the run with exit status 3");
    // SystemC time is 64-bit picoseconds: at most ~1.8e7 s.
    p.real("max_sim_time", &runtime::Limits::max_sim_time_s, "s", d.max_sim_time_s, sim::between(1e-12, 1e6),
           "simulated time")
        .integer<std::uint64_t>("max_events", &runtime::Limits::max_events, "events", d.max_events, sim::at_least(1),
                                "SystemC events and ICI network events")
        .real("max_wall_time", &runtime::Limits::max_wall_time_s, "s", d.max_wall_time_s, sim::between(1e-3, 1e7),
              "host time the simulation may take (checked between slices of simulated time)")
        .informational("a guard on host time, not simulated time; tests/app/test_limits.cpp reaches it")
        .real("max_memory", &runtime::Limits::max_memory_bytes, "B", "half the machine's memory", sim::positive(),
              "host memory the run may need, estimated before it is built (chips simulated x per-chip state, "
              "ops, trace events, PE operands)")
        .real("max_pe_cycles", &runtime::Limits::max_pe_cycles, "PE cycles", d.max_pe_cycles, sim::positive(),
              "fidelity: pe: cycles x PEs of every MXU op on the simulated chips (about 3e9 per host second)")
        .real("progress_interval", &runtime::Limits::progress_interval_s, "s", d.progress_interval_s,
              sim::between(0, 1e7),
              "host time between the progress lines a long run logs on stderr (info: host time, simulated time, "
              "events); 0 for none")
        .informational("stderr only: tests/app/test_limits.cpp checks the lines and an unchanged report");
    return p;
  }();
  return t;
}

const sim::ParamTable<StragglerSpec>& straggler_params() {
  static const sim::ParamTable<StragglerSpec> t = [] {
    sim::ParamTable<StragglerSpec> p("stragglers", "chips slower than the rest of the pod");
    p.list("chips", &StragglerSpec::chips, sim::integer_item<std::uint32_t>("chip", sim::between(0, kMaxChips - 1)),
           {1, kMaxChips, true}, "none: chosen by fraction and seed",
           "the slowed chips, numbered as per_chip[].chip (devices, x fastest)")
        .real("fraction", &StragglerSpec::fraction, "", "none: the chips listed", sim::above(0, 1),
              "instead of chips: round(fraction x chips of the pod) chips drawn from seed, among those no earlier "
              "entry slowed")
        .integer<std::uint64_t>("seed", &StragglerSpec::seed, "", 0, sim::at_least(0),
                                "with fraction: which chips are drawn (the same seed, the same chips)")
        .real("compute", &StragglerSpec::compute, "", 1.0, sim::above(0, 1),
              "share of the chip's MXU and vector throughput it keeps (its clock scaled)")
        .real("hbm", &StragglerSpec::hbm, "", 1.0, sim::above(0, 1), "share of the chip's HBM bandwidth it keeps");
    return p;
  }();
  return t;
}

namespace {

// `stragglers:` a list of mappings, each chip of the pod in one at most.
void load_stragglers(const sim::YamlNode& node, Experiment& exp) {
  if (!node.is_sequence())
    node.fail("expected a list of {chips, compute, hbm} mappings, got " + sim::describe_yaml(node.raw()));
  std::vector<std::size_t> entry_of(exp.pod.devices(), SIZE_MAX);
  for (std::size_t i = 0; i < node.size(); ++i) {
    StragglerSpec s;
    straggler_params().load(node[i], s);
    const sim::YamlNode chips = node[i]["chips"];
    if (chips.present() == s.fraction.has_value())
      node[i].fail("give either chips (a list) or fraction (with a seed), not " +
                   std::string(chips.present() ? "both" : "neither"));
    if (s.fraction) {
      std::vector<std::uint32_t> free;
      for (std::uint32_t c = 0; c < entry_of.size(); ++c)
        if (entry_of[c] == SIZE_MAX) free.push_back(c);
      const double want = *s.fraction * static_cast<double>(entry_of.size());
      const auto count = static_cast<std::size_t>(std::llround(want));
      if (count == 0 || count > free.size())
        node[i]["fraction"].fail(
            sim::g3(*s.fraction, "of the pod's " + std::to_string(entry_of.size()) + " chips is ") +
            std::to_string(count) + " chips, but " +
            (count == 0 ? std::string("at least 1 is needed") : std::to_string(free.size()) + " are left to slow"));
      s.chips = choose_stragglers(std::move(free), count, s.seed);
      for (const std::uint32_t c : s.chips) entry_of[c] = i;
      exp.stragglers.push_back(std::move(s));
      continue;
    }
    for (std::size_t k = 0; k < s.chips.size(); ++k) {
      const sim::YamlNode at = chips.is_sequence() ? chips[k] : chips;
      const std::uint32_t c = s.chips[k];
      if (c >= entry_of.size())
        at.fail("chip " + std::to_string(c) + " is outside the pod: its chips are 0 to " +
                std::to_string(entry_of.size() - 1));
      if (entry_of[c] != SIZE_MAX)
        at.fail("chip " + std::to_string(c) + " is already a straggler (entry " + std::to_string(entry_of[c]) + ")");
      entry_of[c] = i;
    }
    exp.stragglers.push_back(std::move(s));
  }
}

}  // namespace

std::vector<std::uint32_t> choose_stragglers(std::vector<std::uint32_t> candidates, std::size_t count,
                                             std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  count = std::min(count, candidates.size());
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t left = candidates.size() - i;
    std::swap(candidates[i], candidates[i + static_cast<std::size_t>(rng() % left)]);
  }
  candidates.resize(count);
  std::sort(candidates.begin(), candidates.end());
  return candidates;
}

const sim::ParamTable<Experiment>& experiment_params() {
  static const sim::ParamTable<Experiment> t = [] {
    sim::ParamTable<Experiment> p("experiment", "one simulated run: a chip, a pod of them, a workload");
    p.custom("name", {"string", "", "the file name without .yaml", "letters, digits, '.', '_', '-'; at most 100"},
             "names the run and its default output folder (runs/NAME)",
             [](const sim::YamlNode& n, Experiment& exp) { exp.name = checked_name(n, n.as_string(), "name"); })
        .informational("names the run and its folder")
        .custom("chip", {"chip file name or mapping", "", "", ""},
                "a chip file name (e.g. tpu-v4, looked up in chips/) or an inline chip mapping (tpusim explain chip)",
                load_chip_ref, true)
        .custom("pod", {"pod file name or mapping", "", "one chip", ""},
                "a pod file name (e.g. v4-4x4x4, looked up in pods/) or an inline pod mapping (tpusim explain pod)",
                load_pod)
        .custom(
            "mesh",
            {"mapping of axis name to size", "chips", "axes x, y, z of the pod's shape", "each between 1 and 262144"},
            "named mesh axes in order, e.g. {data: 4, model: 2}; the sizes multiply to the chip count; each "
            "axis takes the next whole physical axes (x, y, z) or, where its size divides what is left of one, "
            "that axis's inner factor (consecutive chips), leaving the outer factor (a stride) to the next",
            load_mesh)
        .then([](const sim::YamlNode& root, Experiment& exp) {
          if (!root["mesh"].present()) {
            static const char* names[] = {"x", "y", "z"};
            if (exp.chip.devices > 1) exp.mesh.push_back({"core", exp.chip.devices});
            for (std::size_t i = 0; i < exp.pod.shape.size(); ++i) exp.mesh.push_back({names[i], exp.pod.shape[i]});
            // A pod written as slices has the axis across them even at one
            // slice, so a sweep over pod.slices keeps the same mesh names.
            if ((exp.pod.slices > 1 || root["pod"]["slices"].present()) && exp.pod.dcn_axes.empty()) {
              exp.mesh.push_back({"dcn", exp.pod.slices});
              exp.pod.dcn_axes.push_back("dcn");
            }
          }
          check_dcn_axes(root, exp);
          // From here on the simulated unit is a device.
          exp.chip_file = exp.chip;
          exp.pod.devices_per_chip = exp.chip.devices;
          exp.chip = exp.chip.device();
          // The interconnect checks what it knows (topology, link values,
          // that each mesh axis lands on physical axes or factors); its messages
          // name key paths.
          sim::located(root, [&] { pod_network_config(exp).validate(); });
        })
        .enumeration("fidelity", &Experiment::fidelity, hw::fidelity_names(), hw::Fidelity::kernel,
                     "how the MXU is simulated")
        .flag("functional", &Experiment::functional, false,
              "real BF16 values flow and are checked against a host reference (result.functional)")
        .then([](const sim::YamlNode& root, Experiment& exp) {
          // Real values move through every block of the blocked program: a
          // functional run is at tile (or pe) fidelity, which is its default.
          if (!exp.functional || exp.fidelity != hw::Fidelity::kernel) return;
          if (root["fidelity"].present())
            root["fidelity"].fail(
                "functional runs move real values through every block: use fidelity: tile or pe (or leave "
                "fidelity out)");
          exp.fidelity = hw::Fidelity::tile;
        })
        .enumeration("replicas", &Experiment::replicas, replicas_names(), Replicas::automatic,
                     "which chips are simulated")
        .custom("stragglers", {"list of mappings", "", "none: every chip alike", ""},
                "chips slower than the rest: [{chips: [...], compute, hbm}], or {fraction, seed, compute, hbm} for "
                "chips drawn at random; each is simulated on its own, collectives wait for it "
                "(result.communication.waiting), and report.json's stragglers names them",
                load_stragglers, false, [] { return straggler_params().describe(); })
        .group("limits", &Experiment::limits, limits_params())
        .custom("workload", {"mapping", "", "", ""}, "what runs: `kind` and the kind's own keys", load_workload, true,
                workload_keys);
    return p;
  }();
  return t;
}

std::map<std::string, nlohmann::json> what_if_tables() {
  return {{"chip", hw::chip_params().describe()}, {"pod", pod_params().describe()}};
}

Experiment load_experiment_node(sim::YamlNode root, const std::string& path,
                                const std::vector<std::string>& overrides) {
  open_for_overrides(root, overrides, what_if_tables());  // --set chip.KEY on a named chip (workloads/what_if.h)
  for (const auto& o : overrides) root.apply_override(o);
  if (!root.is_map()) root.fail("an experiment file must be a mapping with at least 'chip' and 'workload'");
  Experiment exp;
  exp.config_path = path;
  exp.inputs.push_back(path);
  exp.overrides = overrides;
  exp.name = fs::path(path).stem().string();
  experiment_params().load(root, exp);
  return exp;
}

namespace {

// Validates a chip, pod or experiment document; returns its kind, or
// "sweep" for a sweep (which the caller checks from its file).
std::string validate_node(const sim::YamlNode& root, const std::string& path) {
  if (root.is_map() && root["workload"].present()) {
    load_experiment_node(root, path, {});
    return "experiment";
  }
  if (root.is_map() && root["pod"].present() && !root["workload"].present()) {
    Experiment exp;
    exp.config_path = path;
    load_pod(root["pod"], exp);
    return "pod";
  }
  if (root.is_map() && root["clock"].present()) {
    hw::load_chip(root);
    return "chip";
  }
  if (root.is_map() && (root["sweep"].present() || root["experiment"].present())) return "sweep";
  root.fail(
      "cannot tell what this file is: an experiment has 'workload', a chip has 'clock', a pod has 'pod', "
      "a sweep has 'sweep'");
}

}  // namespace

Experiment load_experiment(const std::string& path, const std::vector<std::string>& overrides) {
  return load_experiment_node(sim::YamlNode::load_file(path), path, overrides);
}

Experiment load_experiment_text(const std::string& text, const std::string& path,
                                const std::vector<std::string>& overrides) {
  return load_experiment_node(sim::YamlNode::load_string(text, path), path, overrides);
}

std::string validate_file(const std::string& path) { return validate_node(sim::YamlNode::load_file(path), path); }

std::string validate_text(const std::string& text, const std::string& path) {
  const sim::YamlNode root = sim::YamlNode::load_string(text, path);
  const std::string kind = validate_node(root, path);
  if (kind == "sweep")
    root.fail("a sweep is checked from its file (its experiment path is relative to it): use validate_file");
  return kind;
}

interconnect::PodNetworkConfig pod_network_config(const Experiment& exp) {
  interconnect::PodNetworkConfig cfg;
  cfg.topology = exp.pod.topology;
  for (auto s : exp.pod.shape) cfg.shape.push_back(static_cast<int>(s));
  cfg.wraparound = exp.pod.wraparound;
  cfg.link.bandwidth = exp.chip.ici.link_bandwidth;
  cfg.link.latency = exp.chip.ici.link_latency;
  cfg.link.packet_bytes = exp.pod.packet_bytes;
  cfg.link.switching = exp.pod.switching;
  cfg.model = exp.pod.network_model;
  cfg.links = exp.pod.links;
  cfg.links_per_chip = static_cast<int>(exp.chip.ici.links_per_chip);
  cfg.devices_per_chip = static_cast<int>(exp.pod.devices_per_chip);
  cfg.link.on_die_bandwidth = exp.chip.hbm.sustained_bytes_per_s();
  cfg.link.on_die_latency = exp.chip.hbm.latency_s;
  // A reduction stores one (8,128) f32 vreg (4096 B) per cycle per
  // TensorCore (tpu-specs v5p.vmem_load_store: 1 store per cycle;
  // common.vpu_shape) and moves 3 bytes of HBM traffic per byte reduced.
  cfg.reduction.vector_bytes_per_s = 4096.0 * exp.chip.tensorcores * exp.chip.clock;
  cfg.reduction.hbm_bytes_per_s = exp.chip.hbm.sustained_bytes_per_s();
  const auto& across = exp.pod.dcn_axes;
  for (const auto& [name, size] : exp.mesh) {
    cfg.mesh.push_back({name, static_cast<int>(size), std::find(across.begin(), across.end(), name) != across.end()});
  }
  cfg.slices = static_cast<int>(exp.pod.slices);
  cfg.chips_per_host = static_cast<int>(exp.chip.host.chips);
  cfg.link.dcn.nic_bandwidth = exp.pod.dcn.nic_bandwidth.value_or(exp.chip.host.nic_bandwidth);
  cfg.link.dcn.host_bandwidth = exp.pod.dcn.host_bandwidth.value_or(exp.chip.host.pcie_bandwidth);
  cfg.link.dcn.latency = exp.pod.dcn.latency;
  cfg.link.dcn.oversubscription = exp.pod.dcn.oversubscription;
  return cfg;
}

Experiment experiment_settings(const Experiment& exp) {
  Experiment out;
  out.name = exp.name;
  out.config_path = exp.config_path;
  out.inputs = exp.inputs;
  out.overrides = exp.overrides;
  out.workload_yaml = exp.workload_yaml;
  out.chip_ref = exp.chip_ref;
  out.chip = exp.chip;
  out.chip_file = exp.chip_file;
  out.pod = exp.pod;
  out.mesh = exp.mesh;
  out.fidelity = exp.fidelity;
  out.functional = exp.functional;
  out.replicas = exp.replicas;
  out.stragglers = exp.stragglers;
  out.limits = exp.limits;
  out.elaborate_backwards = exp.elaborate_backwards;
  return out;
}

runtime::PodConfig pod_config(const Experiment& exp) {
  runtime::PodConfig c;
  c.chip = exp.chip;
  c.network = pod_network_config(exp);
  c.fidelity = exp.fidelity;
  c.limits = exp.limits;
  c.simulate_every_chip = exp.replicas == Replicas::all;
  c.elaborate_backwards = exp.elaborate_backwards;
  for (const StragglerSpec& s : exp.stragglers)
    for (const std::uint32_t chip : s.chips) {
      c.scale.resize(exp.pod.devices());
      c.scale[chip] = {s.compute, s.hbm};
    }
  return c;
}

void check_chip_format(const sim::YamlNode& at, const hw::ChipConfig& chip, hw::NumberFormat format) {
  if (chip.format_rate(format) == 0)
    at.fail(chip.name + " has no " + hw::to_string(format) + " matmuls; its formats: " + chip.format_list());
}

runtime::PodConfig one_device_config(const Experiment& exp) {
  runtime::PodConfig c = pod_config(exp);
  c.network.devices_per_chip = 1;
  c.network.mesh.clear();  // the default mesh of one chip
  return c;
}

}  // namespace workloads
