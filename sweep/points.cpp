#include "sweep/points.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "sim/yaml_node.h"
#include "workloads/experiment.h"

namespace sweep {

namespace fs = std::filesystem;

namespace {

// Where each of a point's overrides came from, to blame the right value.
struct OverrideSource {
  sim::SourceLocation where;
  std::string sweep_key;  // e.g. sweep.pod.shape[3], set.workload.m
};

std::string number_text(double x) {
  if (std::fabs(x) < 9e15 && x == std::floor(x)) return std::to_string(static_cast<long long>(x));
  return nlohmann::json(x).dump();
}

// A pod named by file (`pod: v4-4x4x4`), found where the experiment loader
// looks for pods: beside the experiment, ../pods, $TPUSIM_CONFIG_DIR/pods,
// the source tree's configs/pods, ./configs/pods.
// Only regular files count, asked without exceptions (a name the OS rejects,
// a directory or a device is "not found"); "" when there is none.
std::string find_pod_file(const std::string& name, const std::string& experiment_path) {
  const fs::path dir = fs::path(experiment_path).parent_path();
  auto is_file = [](const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec);
  };
  if (name.find('/') != std::string::npos || (name.size() > 5 && name.substr(name.size() - 5) == ".yaml")) {
    fs::path p(name);
    if (p.is_relative()) p = dir / p;
    return is_file(p) ? p.string() : "";
  }
  std::vector<fs::path> dirs = {dir, dir / ".." / "pods"};
  if (const char* env = std::getenv("TPUSIM_CONFIG_DIR")) dirs.push_back(fs::path(env) / "pods");
#ifdef TPUSIM_SOURCE_DIR
  dirs.push_back(fs::path(TPUSIM_SOURCE_DIR) / "configs" / "pods");
#endif
  dirs.push_back(fs::path("configs") / "pods");
  for (const auto& d : dirs)
    if (is_file(d / (name + ".yaml"))) return (d / (name + ".yaml")).string();
  return "";
}

// The chip count of the experiment these overrides describe, read from its
// pod's shape before the whole experiment is loaded (per_chip values depend
// on it). 0 when the document does not say plainly; the full load then
// reports what is wrong.
// Chips of one slice's `pod:` node (a file name or a mapping with `shape`);
// 0 when it cannot tell.
std::uint64_t chips_of_pod(sim::YamlNode pod, const std::string& experiment_path) {
  if (pod.is_scalar()) {
    const std::string file = find_pod_file(pod.as_string(), experiment_path);
    if (file.empty()) return 0;
    sim::YamlNode doc = sim::YamlNode::load_file(file);
    pod = doc["pod"].present() ? doc["pod"] : doc;
  }
  const sim::YamlNode shape = pod["shape"];
  if (!shape.is_sequence()) return 0;
  std::uint64_t chips = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const std::string s = shape[i].scalar();
    char* end = nullptr;
    const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
    if (s.empty() || *end != '\0' || v == 0) return 0;
    chips *= v;
    if (chips > (1u << 30)) return 0;
  }
  return chips;
}

std::uint32_t chips_in_document(const std::string& experiment_path, const std::vector<std::string>& overrides) {
  sim::YamlNode root = sim::YamlNode::load_file(experiment_path);
  workloads::open_for_overrides(root, overrides, workloads::what_if_tables());
  for (const auto& o : overrides) root.apply_override(o);
  const sim::YamlNode pod = root["pod"];
  if (!pod.present()) return 1;
  if (!pod.is_map() || !pod["slice"].present()) return static_cast<std::uint32_t>(chips_of_pod(pod, experiment_path));
  // Slices joined by DCN: `slices` copies of `slice`.
  std::uint64_t slices = 1;
  if (pod["slices"].present()) {
    const std::string s = pod["slices"].scalar();
    char* end = nullptr;
    slices = std::strtoull(s.c_str(), &end, 10);
    if (s.empty() || *end != '\0' || slices == 0 || slices > (1u << 20)) return 0;
  }
  const std::uint64_t chips = chips_of_pod(pod["slice"], experiment_path) * slices;
  return chips > (1u << 30) ? 0 : static_cast<std::uint32_t>(chips);
}

[[noreturn]] void blame(const sim::ConfigError& e, const SweepSpec& spec, const SweepPoint& p,
                        const std::vector<OverrideSource>& sources) {
  // The value to blame: the override the message names, else the one whose
  // key path holds the offending key, else the point's first swept value.
  std::size_t at = sources.size();
  for (std::size_t i = 0; i < p.overrides.size() && at == sources.size(); ++i)
    if (e.where().file == "--set " + p.overrides[i]) at = i;
  for (std::size_t i = 0; i < p.overrides.size() && at == sources.size(); ++i) {
    const std::string key = p.overrides[i].substr(0, p.overrides[i].find('='));
    const std::string& k = e.key_path();
    if (k == key || k.rfind(key + ".", 0) == 0 || k.rfind(key + "[", 0) == 0) at = i;
  }
  if (at == sources.size()) at = spec.fixed.size();  // the first axis
  throw sim::ConfigError(sources[at].where, sources[at].sweep_key,
                         "point " + p.id + " (" + describe_point(spec, p) + ") is not a valid experiment: " + e.what());
}

}  // namespace

std::string describe_point(const SweepSpec& spec, const SweepPoint& p) {
  std::string s;
  for (std::size_t a = 0; a < spec.axes.size() && a < p.values.size(); ++a)
    s += (s.empty() ? "" : " ") + spec.axes[a].key + "=" + p.values[a];
  return s;
}

std::vector<SweepPoint> expand_sweep(const SweepSpec& spec) {
  const std::size_t count = spec.point_count();
  const std::size_t width = std::max<std::size_t>(3, std::to_string(count - 1).size());
  std::vector<SweepPoint> points;
  points.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    SweepPoint p;
    p.index = i;
    p.id = std::to_string(i);
    p.id = "p" + std::string(width - p.id.size(), '0') + p.id;
    std::vector<OverrideSource> sources;
    for (const auto& f : spec.fixed) {
      p.overrides.push_back(f.key + "=" + f.value.yaml);
      sources.push_back({f.value.where, "set." + f.key});
    }
    // Mixed radix, last axis fastest (product), or the same index on every axis (zip).
    std::size_t rest = i;
    std::vector<std::size_t> pick(spec.axes.size(), i);
    if (spec.combine == Combine::product)
      for (std::size_t a = spec.axes.size(); a-- > 0;) {
        pick[a] = rest % spec.axes[a].values.size();
        rest /= spec.axes[a].values.size();
      }
    for (std::size_t a = 0; a < spec.axes.size(); ++a) {
      const SweepValue& v = spec.axes[a].values[pick[a]];
      p.values.push_back(v.yaml);
      p.overrides.push_back(spec.axes[a].key + "=" + v.yaml);
      sources.push_back({v.where, "sweep." + spec.axes[a].key + "[" + std::to_string(pick[a]) + "]"});
    }
    try {
      if (!spec.per_chip.empty()) {
        std::uint32_t chips = chips_in_document(spec.experiment_path, p.overrides);
        if (chips == 0) chips = workloads::load_experiment(spec.experiment_path, p.overrides).pod.chips();
        for (const auto& pc : spec.per_chip) {
          p.overrides.push_back(pc.key + "=" + number_text(pc.per_chip * chips));
          sources.push_back({pc.where, "per_chip." + pc.key});
        }
      }
      const workloads::Experiment exp = workloads::load_experiment(spec.experiment_path, p.overrides);
      p.chips = exp.pod.chips();
      p.inputs = exp.inputs;
    } catch (const sim::ConfigError& e) {
      blame(e, spec, p, sources);
    } catch (const sim::SimFailure&) {
      // Valid input that cannot run (e.g. does not fit): the point runs,
      // fails the same way, and its record says so.
      p.chips = chips_in_document(spec.experiment_path, p.overrides);
      p.inputs = {spec.experiment_path};
    }
    points.push_back(std::move(p));
  }
  return points;
}

}  // namespace sweep
