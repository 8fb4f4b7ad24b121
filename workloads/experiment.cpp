#include "workloads/experiment.h"

#include <systemc>

#include <cstdlib>
#include <filesystem>
#include <tuple>

#include "sim/error.h"
#include "sim/kernel.h"
#include "sim/output.h"

namespace workloads {

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kTopLevelKeys = {"name",       "chip",     "pod",      "mesh",  "fidelity",
                                                "functional", "replicas", "workload", "limits"};
const std::vector<std::string> kTopologies = {"ring", "torus2d", "torus3d"};

std::size_t topology_rank(const std::string& t) { return t == "ring" ? 1 : t == "torus2d" ? 2 : 3; }

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

// Finds "<name>.yaml" (or a path) among the search dirs; fails at `ref`.
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

std::uint32_t positive_u32(const sim::YamlNode& n, std::uint32_t max) {
  std::int64_t v = n.as_int();
  if (v < 1 || v > max) n.fail("expected an integer between 1 and " + std::to_string(max) + ", got " + n.scalar());
  return static_cast<std::uint32_t>(v);
}

PodSpec load_pod(const sim::YamlNode& node, hw::ChipConfig& chip) {
  PodSpec pod;
  node.reject_unknown_keys({"topology", "shape", "wraparound", "link_bandwidth", "link_latency", "packet_bytes",
                            "switching", "network_model"});
  if (node["packet_bytes"].present()) {
    std::int64_t p = node["packet_bytes"].as_int();
    if (p < 1 || p > (1 << 30))
      node["packet_bytes"].fail("expected bytes between 1 and 2^30, got " + node["packet_bytes"].scalar());
    pod.packet_bytes = static_cast<std::uint64_t>(p);
  }
  for (auto [key, field, choices] : {std::tuple<const char*, std::string*, std::vector<std::string>>{
                                         "switching", &pod.switching, {"cut_through", "store_and_forward"}},
                                     {"network_model", &pod.network_model, {"fluid", "packet"}}}) {
    if (!node[key].present()) continue;
    *field = node[key].as_string();
    if (std::find(choices.begin(), choices.end(), *field) == choices.end()) {
      std::string hint = sim::did_you_mean(*field, choices);
      node[key].fail("expected " + choices[0] + " or " + choices[1] + ", got '" + *field + "'" +
                     (hint.empty() ? "" : " (" + hint + ")"));
    }
  }
  if (node["topology"].present()) {
    pod.topology = node["topology"].as_string();
    if (std::find(kTopologies.begin(), kTopologies.end(), pod.topology) == kTopologies.end()) {
      std::string hint = sim::did_you_mean(pod.topology, kTopologies);
      node["topology"].fail("unknown topology '" + pod.topology + "'; expected ring, torus2d or torus3d" +
                            (hint.empty() ? "" : " (" + hint + ")"));
    }
  }
  const std::size_t rank = topology_rank(pod.topology);
  sim::YamlNode shape = node["shape"];
  if (!shape.present()) shape.fail("missing required key (chips along each axis, e.g. [4, 4])");
  if (!shape.is_sequence() || shape.size() != rank)
    shape.fail("a " + pod.topology + " needs a list of " + std::to_string(rank) + " axis size" + (rank > 1 ? "s" : "") +
               ", got " + sim::describe_yaml(shape.raw()));
  pod.shape.clear();
  for (std::size_t i = 0; i < rank; ++i) pod.shape.push_back(positive_u32(shape[i], 65536));
  if (pod.chips() > 65536) shape.fail("at most 65536 chips are supported, got " + std::to_string(pod.chips()));
  pod.wraparound.assign(rank, true);
  sim::YamlNode wrap = node["wraparound"];
  if (wrap.present()) {
    if (wrap.is_scalar()) {
      pod.wraparound.assign(rank, wrap.as_bool());
    } else {
      if (!wrap.is_sequence() || wrap.size() != rank)
        wrap.fail("expected true/false or a list of " + std::to_string(rank) + " booleans");
      for (std::size_t i = 0; i < rank; ++i) pod.wraparound[i] = wrap[i].as_bool();
    }
  }
  if (node["link_bandwidth"].present()) {
    double bw = node["link_bandwidth"].as_double();
    if (!(bw > 0)) node["link_bandwidth"].fail("must be > 0 bytes/s, got " + node["link_bandwidth"].scalar());
    chip.ici.link_bandwidth = bw;
  }
  if (node["link_latency"].present()) {
    double lat = node["link_latency"].as_double();
    if (lat < 0) node["link_latency"].fail("must be >= 0 s, got " + node["link_latency"].scalar());
    chip.ici.link_latency = lat;
  }
  return pod;
}

}  // namespace

std::vector<std::string> chip_search_dirs(const std::string& experiment_path) {
  return search_dirs(experiment_path, "chips");
}

namespace {

Experiment load_experiment_node(sim::YamlNode root, const std::string& path,
                                const std::vector<std::string>& overrides) {
  for (const auto& o : overrides) root.apply_override(o);
  if (!root.is_map()) root.fail("an experiment file must be a mapping with at least 'chip' and 'workload'");
  root.reject_unknown_keys(kTopLevelKeys);

  Experiment exp;
  exp.config_path = path;
  exp.name = root["name"].present() ? root["name"].as_string() : fs::path(path).stem().string();

  sim::YamlNode chip = root["chip"];
  if (!chip.present()) chip.fail("missing required key: a chip name (e.g. tpu-v4) or an inline chip mapping");
  if (chip.is_map()) {
    exp.chip_ref = "inline";
    exp.chip = hw::load_chip(chip);
  } else {
    std::string file = resolve_named_file(chip, path, "chips", "chip");
    exp.chip_ref = chip.as_string();
    exp.chip = hw::load_chip(sim::YamlNode::load_file(file));
  }
  if (exp.chip.name.empty()) exp.chip.name = exp.chip_ref;

  sim::YamlNode pod = root["pod"];
  if (pod.present()) {
    if (pod.is_scalar()) {
      std::string file = resolve_named_file(pod, path, "pods", "pod");
      sim::YamlNode pod_doc = sim::YamlNode::load_file(file);
      exp.pod = load_pod(pod_doc["pod"].present() ? pod_doc["pod"] : pod_doc, exp.chip);
    } else {
      exp.pod = load_pod(pod, exp.chip);
    }
  }

  sim::YamlNode mesh = root["mesh"];
  if (mesh.present()) {
    if (!mesh.is_map()) mesh.fail("expected a mapping of axis names to sizes, e.g. {data: 4, model: 2}");
    std::uint64_t product = 1;
    for (const auto& axis : mesh.keys()) {
      std::uint32_t size = positive_u32(mesh[axis], 65536);
      exp.mesh.push_back({axis, size});
      product *= size;
    }
    if (product != exp.pod.chips())
      mesh.fail("mesh axes multiply to " + std::to_string(product) + " chips but the pod has " +
                std::to_string(exp.pod.chips()));
  } else {
    static const char* names[] = {"x", "y", "z"};
    for (std::size_t i = 0; i < exp.pod.shape.size(); ++i) exp.mesh.push_back({names[i], exp.pod.shape[i]});
  }

  // The interconnect checks what it knows (topology, link values, that each
  // mesh axis lands on whole physical axes); its messages name key paths.
  sim::located(root, [&] { pod_network_config(exp).validate(); });

  if (root["fidelity"].present()) {
    exp.fidelity = root["fidelity"].as_string();
    if (exp.fidelity != "tile" && exp.fidelity != "pe")
      root["fidelity"].fail("expected tile or pe, got '" + exp.fidelity + "'");
  }
  if (root["functional"].present()) exp.functional = root["functional"].as_bool();
  if (root["replicas"].present()) {
    exp.replicas = root["replicas"].as_string();
    if (exp.replicas != "auto" && exp.replicas != "all")
      root["replicas"].fail("expected auto (one chip per group of identical replicas, when exact) or all, got '" +
                            exp.replicas + "'");
  }

  sim::YamlNode limits = root["limits"];
  if (limits.present()) {
    if (!limits.is_map())
      limits.fail("expected a mapping, e.g. {max_sim_time: 10, max_events: 1e8}, got " +
                  sim::describe_yaml(limits.raw()));
    limits.reject_unknown_keys({"max_sim_time", "max_events"});
    if (limits["max_sim_time"].present()) {
      // SystemC time is 64-bit picoseconds: at most ~1.8e7 s.
      exp.limits.max_sim_time_s = limits["max_sim_time"].as_double();
      if (!(exp.limits.max_sim_time_s >= 1e-12 && exp.limits.max_sim_time_s <= 1e6))
        limits["max_sim_time"].fail("expected simulated seconds between 1e-12 and 1e6, got " +
                                    limits["max_sim_time"].scalar());
    }
    if (limits["max_events"].present()) {
      exp.limits.max_events = limits["max_events"].as_uint();
      if (exp.limits.max_events < 1)
        limits["max_events"].fail("expected at least 1 event, got " + limits["max_events"].scalar());
    }
  }

  sim::YamlNode wl = root["workload"];
  if (!wl.present()) wl.fail("missing required key: the workload to run (a mapping with 'kind')");
  if (!wl.is_map()) wl.fail("expected a mapping with 'kind', got " + sim::describe_yaml(wl.raw()));
  sim::YamlNode kind = wl["kind"];
  if (!kind.present()) kind.fail("missing required key; one of: matmul, collective");
  std::string k = kind.as_string();
  std::vector<std::string> names;
  for (const auto& wk : workload_kinds()) {
    names.push_back(wk.name);
    if (wk.name == k) {
      exp.workload = wk.load(wl, exp);
      return exp;
    }
  }
  std::string msg = "unknown workload kind '" + k + "'; expected one of:";
  for (const auto& n : names) msg += " " + n;
  std::string hint = sim::did_you_mean(k, names);
  if (!hint.empty()) msg += " (" + hint + ")";
  kind.fail(msg);
}

// Validates a chip, pod or experiment document; returns its kind, or
// "sweep" for a sweep (which the caller checks from its file).
std::string validate_node(const sim::YamlNode& root, const std::string& path) {
  if (root.is_map() && root["workload"].present()) {
    load_experiment_node(root, path, {});
    return "experiment";
  }
  if (root.is_map() && root["pod"].present() && !root["workload"].present()) {
    hw::ChipConfig chip;
    load_pod(root["pod"], chip);
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
  cfg.topology = interconnect::parse_topology_kind(exp.pod.topology, "pod.topology");
  for (auto s : exp.pod.shape) cfg.shape.push_back(static_cast<int>(s));
  cfg.wraparound = exp.pod.wraparound;
  cfg.link.bandwidth = exp.chip.ici.link_bandwidth;
  cfg.link.latency = exp.chip.ici.link_latency;
  cfg.link.packet_bytes = exp.pod.packet_bytes;
  cfg.link.switching = interconnect::parse_switching(exp.pod.switching, "pod.switching");
  cfg.model = interconnect::parse_network_model(exp.pod.network_model, "pod.network_model");
  // A reduction stores one (8,128) f32 vreg (4096 B) per cycle per
  // TensorCore (tpu-specs v5p.vmem_load_store: 1 store per cycle;
  // common.vpu_shape) and moves 3 bytes of HBM traffic per byte reduced.
  cfg.reduction.vector_bytes_per_s = 4096.0 * exp.chip.tensorcores * exp.chip.clock;
  cfg.reduction.hbm_bytes_per_s = exp.chip.hbm.bandwidth_bytes_per_s;
  for (const auto& [name, size] : exp.mesh) cfg.mesh.push_back({name, static_cast<int>(size)});
  return cfg;
}

runtime::PodConfig pod_config(const Experiment& exp) {
  runtime::PodConfig c;
  c.chip = exp.chip;
  c.network = pod_network_config(exp);
  c.fidelity = exp.fidelity == "pe" ? hw::Fidelity::pe : hw::Fidelity::tile;
  c.limits = exp.limits;
  c.simulate_every_chip = exp.replicas == "all";
  return c;
}

}  // namespace workloads
