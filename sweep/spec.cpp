#include "sweep/spec.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>
#include <set>
#include <system_error>

#include "sim/output.h"
#include "sim/yaml_node.h"

namespace sweep {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxPoints = 100000;

const std::vector<std::string> kTopLevelKeys = {"name", "description", "experiment", "scaling", "combine",
                                                "set",  "per_chip",    "sweep",      "plot"};

// One-line YAML for a value, as `--set key=VALUE` parses it back.
std::string flow_yaml(const YAML::Node& n) {
  YAML::Emitter e;
  e.SetMapFormat(YAML::Flow);
  e.SetSeqFormat(YAML::Flow);
  e << n;
  return e.c_str();
}

void check_key_path(const sim::YamlNode& at, const std::string& key) {
  if (key.empty() || key.front() == '.' || key.back() == '.' || key.find("..") != std::string::npos ||
      key.find('=') != std::string::npos || key.find(' ') != std::string::npos)
    at.fail("'" + key + "' is not a key path; write it as --set takes it, e.g. workload.m or pod.shape");
}

sim::SourceLocation key_location(const sim::YamlNode& map, const std::string& key) {
  for (const auto& kv : map.raw()) {
    if (kv.first.Scalar() != key) continue;
    const YAML::Mark m = kv.first.Mark();
    if (!m.is_null()) return {map.file(), m.line + 1, m.column + 1};
  }
  return map.location();
}

SweepValue value_of(const sim::YamlNode& n) {
  if (!n.present()) n.fail("expected a value, got " + sim::describe_yaml(n.raw()));
  return SweepValue{flow_yaml(n.raw()), n.location()};
}

Scaling parse_scaling(const sim::YamlNode& n) {
  const std::string s = n.as_string();
  if (s == "strong") return Scaling::strong;
  if (s == "weak") return Scaling::weak;
  if (s == "none") return Scaling::none;
  std::string hint = sim::did_you_mean(s, {"strong", "weak", "none"});
  n.fail("expected strong (fixed global work), weak (fixed work per chip) or none, got '" + s + "'" +
         (hint.empty() ? "" : " (" + hint + ")"));
}

Combine parse_combine(const sim::YamlNode& n) {
  const std::string s = n.as_string();
  if (s == "product") return Combine::product;
  if (s == "zip") return Combine::zip;
  std::string hint = sim::did_you_mean(s, {"product", "zip"});
  n.fail("expected product (every combination) or zip (the i-th values together), got '" + s + "'" +
         (hint.empty() ? "" : " (" + hint + ")"));
}

}  // namespace

const char* to_string(Scaling s) {
  switch (s) {
    case Scaling::strong: return "strong";
    case Scaling::weak: return "weak";
    case Scaling::none: return "none";
  }
  return "?";
}

const char* to_string(Combine c) { return c == Combine::zip ? "zip" : "product"; }

std::size_t SweepSpec::point_count() const {
  if (axes.empty()) return 1;
  if (combine == Combine::zip) return axes.front().values.size();
  std::size_t n = 1;
  for (const auto& a : axes) n *= a.values.size();
  return n;
}

SweepSpec load_sweep_spec(const std::string& path) {
  const sim::YamlNode root = sim::YamlNode::load_file(path);
  if (!root.is_map()) root.fail("a sweep file must be a mapping with 'experiment' and 'sweep'");
  root.reject_unknown_keys(kTopLevelKeys);

  SweepSpec spec;
  spec.path = path;
  spec.name = root["name"].present() ? root["name"].as_string() : fs::path(path).stem().string();
  if (spec.name.empty() || spec.name.find('/') != std::string::npos)
    root["name"].fail("a sweep name is a folder name under runs/; no '/' and not empty");

  const sim::YamlNode exp = root["experiment"];
  if (!exp.present()) exp.fail("missing required key: the base experiment file (e.g. ../experiments/x.yaml)");
  fs::path e = exp.as_string();
  if (e.is_relative()) e = fs::path(path).parent_path() / e;
  spec.experiment_path = e.lexically_normal().string();
  // The std::error_code overload: a name the OS rejects (too long, ...)
  // is "no experiment file", never a filesystem_error.
  std::error_code ec;
  if (!fs::is_regular_file(spec.experiment_path, ec))
    exp.fail("no experiment file '" + spec.experiment_path + "' (relative paths start at the sweep file's folder)");

  if (root["scaling"].present()) spec.scaling = parse_scaling(root["scaling"]);
  if (root["combine"].present()) spec.combine = parse_combine(root["combine"]);
  if (root["plot"].present()) spec.plot = root["plot"].as_bool();

  std::set<std::string> used;  // a key may be set in only one place
  auto claim = [&used](const sim::YamlNode& at, const std::string& key) {
    check_key_path(at, key);
    if (!used.insert(key).second)
      at.fail("'" + key + "' is already given in set, per_chip or sweep; give each key path once");
  };

  const sim::YamlNode set = root["set"];
  if (set.present()) {
    if (!set.is_map()) set.fail("expected a mapping of key paths to values, e.g. {workload.m: 4096}");
    for (const auto& key : set.keys()) {
      claim(set[key], key);
      spec.fixed.push_back({key, value_of(set[key])});
    }
  }

  const sim::YamlNode per_chip = root["per_chip"];
  if (per_chip.present()) {
    if (!per_chip.is_map())
      per_chip.fail("expected a mapping of key paths to per-chip numbers, e.g. {workload.global_batch: 16}");
    for (const auto& key : per_chip.keys()) {
      const sim::YamlNode v = per_chip[key];
      claim(v, key);
      const double x = v.as_double();
      if (!(x > 0)) v.fail("a per-chip value must be > 0, got " + v.scalar());
      spec.per_chip.push_back({key, x, v.location()});
    }
  }

  const sim::YamlNode sweep = root["sweep"];
  if (!sweep.present())
    sweep.fail("missing required key: the key paths to vary and their values, e.g. {pod.shape: [[1], [2], [4]]}");
  if (!sweep.is_map())
    sweep.fail("expected a mapping of key paths to lists of values, got " + sim::describe_yaml(sweep.raw()));
  for (const auto& key : sweep.keys()) {
    const sim::YamlNode values = sweep[key];
    claim(values, key);
    if (!values.is_sequence() || values.size() == 0)
      values.fail("expected a non-empty list of values, got " + sim::describe_yaml(values.raw()));
    SweepAxis axis{key, {}};
    for (std::size_t i = 0; i < values.size(); ++i) axis.values.push_back(value_of(values[i]));
    spec.axes.push_back(std::move(axis));
  }
  if (spec.axes.empty()) sweep.fail("nothing to sweep: give at least one key path and its values");

  if (spec.combine == Combine::zip) {
    const SweepAxis& first = spec.axes.front();
    for (const auto& a : spec.axes)
      if (a.values.size() != first.values.size())
        throw sim::ConfigError(key_location(sweep, a.key), "sweep." + a.key,
                               "combine: zip needs lists of equal length: '" + first.key + "' has " +
                                   std::to_string(first.values.size()) + " values, this one " +
                                   std::to_string(a.values.size()));
  }
  double count = 1;
  for (const auto& a : spec.axes) count *= double(a.values.size());
  if (spec.combine == Combine::product && count > double(kMaxPoints))
    sweep.fail("the product has " + sim::fixed(count, 0) + " points; at most " + std::to_string(kMaxPoints));
  return spec;
}

}  // namespace sweep
