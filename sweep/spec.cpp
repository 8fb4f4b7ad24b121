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
  return SweepValue{sim::flow_yaml(n.raw()), n.location()};
}

// A key path may be set in only one of set, per_chip and sweep.
void claim(const SweepSpec& spec, const sim::YamlNode& at, const std::string& key) {
  check_key_path(at, key);
  bool used = false;
  for (const auto& f : spec.fixed) used = used || f.key == key;
  for (const auto& p : spec.per_chip) used = used || p.key == key;
  for (const auto& a : spec.axes) used = used || a.key == key;
  if (used) at.fail("'" + key + "' is already given in set, per_chip or sweep; give each key path once");
}

void load_name(const sim::YamlNode& n, SweepSpec& spec) {
  spec.name = n.as_string();
  if (spec.name.empty() || spec.name.find('/') != std::string::npos)
    n.fail("a sweep name is a folder name under runs/; no '/' and not empty");
}

void load_experiment_path(const sim::YamlNode& exp, SweepSpec& spec) {
  fs::path e = exp.as_string();
  if (e.is_relative()) e = fs::path(spec.path).parent_path() / e;
  spec.experiment_path = e.lexically_normal().string();
  // The std::error_code overload: a name the OS rejects (too long, ...)
  // is "no experiment file", never a filesystem_error.
  std::error_code ec;
  if (!fs::is_regular_file(spec.experiment_path, ec))
    exp.fail("no experiment file '" + spec.experiment_path + "' (relative paths start at the sweep file's folder)");
}

void load_set(const sim::YamlNode& set, SweepSpec& spec) {
  if (!set.is_map()) set.fail("expected a mapping of key paths to values, e.g. {workload.m: 4096}");
  for (const auto& key : set.keys()) {
    claim(spec, set[key], key);
    spec.fixed.push_back({key, value_of(set[key])});
  }
}

void load_per_chip(const sim::YamlNode& per_chip, SweepSpec& spec) {
  if (!per_chip.is_map())
    per_chip.fail("expected a mapping of key paths to per-chip numbers, e.g. {workload.global_batch: 16}");
  for (const auto& key : per_chip.keys()) {
    const sim::YamlNode v = per_chip[key];
    claim(spec, v, key);
    spec.per_chip.push_back({key, sim::read_real(v, sim::positive(), ""), v.location()});
  }
}

void load_axes(const sim::YamlNode& sweep, SweepSpec& spec) {
  if (!sweep.is_map())
    sweep.fail("expected a mapping of key paths to lists of values, got " + sim::describe_yaml(sweep.raw()));
  for (const auto& key : sweep.keys()) {
    const sim::YamlNode values = sweep[key];
    claim(spec, values, key);
    if (!values.is_sequence() || values.size() == 0)
      values.fail("expected a non-empty list of values, got " + sim::describe_yaml(values.raw()));
    SweepAxis axis{key, {}};
    for (std::size_t i = 0; i < values.size(); ++i) axis.values.push_back(value_of(values[i]));
    spec.axes.push_back(std::move(axis));
  }
  if (spec.axes.empty()) sweep.fail("nothing to sweep: give at least one key path and its values");
}

// Zip needs lists of equal length; a product at most kMaxPoints points.
void check_points(const sim::YamlNode& root, SweepSpec& spec) {
  const sim::YamlNode sweep = root["sweep"];
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
}

const sim::Range& metric_range(PublishedMetric m) {
  static const sim::Range fraction = sim::above(0, 1), seconds = sim::positive();
  return m == PublishedMetric::mfu ? fraction : seconds;
}

void load_published_points(const sim::YamlNode& points, PublishedSeries& series) {
  if (!points.is_map() || points.size() == 0)
    points.fail("expected a mapping of the swept key's values to published figures, e.g. {1: 0.611, 2: 0.594}");
  for (const auto& key : points.keys()) {
    const sim::YamlNode v = points[key];
    series.points.push_back({key, sim::read_real(v, metric_range(series.metric), ""), key_location(points, key)});
  }
}

const sim::ParamTable<PublishedSeries>& published_params() {
  static const sim::ParamTable<PublishedSeries> t = [] {
    sim::ParamTable<PublishedSeries> p("published", "measured figures to read the sweep against (one swept key)");
    p.enumeration("metric", &PublishedSeries::metric, published_metric_names(), PublishedMetric::mfu,
                  "which report figure was published")
        .text("source", &PublishedSeries::source, std::nullopt, "where the figures were published")
        .informational("names the source; no simulated figure depends on it")
        .custom("points", {"mapping of swept value to number", "", "", "mfu: (0, 1]; step_time_s: > 0"},
                "the published figure at each of some values of the swept key, e.g. {1: 0.611, 2: 0.594}",
                load_published_points, true);
    return p;
  }();
  return t;
}

// `published:` reads its points against the one swept key's values.
void load_published(const sim::YamlNode& node, SweepSpec& spec) {
  published_params().load(node, spec.published);
  if (spec.axes.size() != 1)
    node.fail("published figures need a sweep of one key path; this sweep varies " + std::to_string(spec.axes.size()));
  const SweepAxis& axis = spec.axes.front();
  std::string swept;
  for (const auto& v : axis.values) swept += (swept.empty() ? "" : ", ") + v.yaml;
  for (const auto& p : spec.published.points) {
    bool found = false;
    for (const auto& v : axis.values) found = found || v.yaml == p.at;
    if (!found)
      throw sim::ConfigError(p.where, "published.points." + p.at,
                             "no point has " + axis.key + "=" + p.at + "; the swept values are " + swept);
  }
}

}  // namespace

const sim::EnumNames<PublishedMetric>& published_metric_names() {
  static const sim::EnumNames<PublishedMetric> names(
      "metric", {{PublishedMetric::mfu, "mfu", "model FLOPs utilization, result.mfu (a fraction)"},
                 {PublishedMetric::step_time_s, "step_time_s", "the step time, result.step_time_s (seconds)"}});
  return names;
}

const char* to_string(PublishedMetric m) { return published_metric_names().name(m); }

const char* report_pointer(PublishedMetric m) {
  return m == PublishedMetric::mfu ? "/result/mfu" : "/result/step_time_s";
}

const sim::EnumNames<Scaling>& scaling_names() {
  static const sim::EnumNames<Scaling> names(
      "scaling", {{Scaling::strong, "strong", "fixed global work: speedups against Amdahl's law"},
                  {Scaling::weak, "weak", "fixed work per chip: against Gustafson's law"},
                  {Scaling::none, "none", "no speedups, just the table"}});
  return names;
}

const sim::EnumNames<Combine>& combine_names() {
  static const sim::EnumNames<Combine> names(
      "combine", {{Combine::product, "product", "every combination, the first key varying slowest"},
                  {Combine::zip, "zip", "the i-th values of every key together"}});
  return names;
}

const char* to_string(Scaling s) { return scaling_names().name(s); }

const char* to_string(Combine c) { return combine_names().name(c); }

const sim::ParamTable<SweepSpec>& sweep_params() {
  static const sim::ParamTable<SweepSpec> t = [] {
    sim::ParamTable<SweepSpec> p("sweep", "one experiment run at many points, each a set of --set overrides");
    p.custom("name", {"string", "", "the file name without .yaml", ""},
             "names the sweep and its default output folder runs/<name>/", load_name)
        .text("description", &SweepSpec::description, "", "free text for the reader")
        .custom("experiment", {"path", "", "", ""}, "the base experiment file, relative to this file",
                load_experiment_path, true)
        .enumeration("scaling", &SweepSpec::scaling, scaling_names(), Scaling::strong,
                     "which law the step times are read against")
        .enumeration("combine", &SweepSpec::combine, combine_names(), Combine::product,
                     "how the lists of `sweep` combine into points")
        .custom("set", {"mapping of key path to value", "", "nothing", ""},
                "overrides applied to every point, e.g. {workload.optimizer: adam}", load_set)
        .custom("per_chip", {"mapping of key path to number", "", "nothing", "> 0"},
                "a key set to the number times the point's chip count, e.g. {workload.global_batch: 16}", load_per_chip)
        .custom("sweep", {"mapping of key path to list of values", "", "", ""},
                "the key paths to vary (as --set takes them) and their values, e.g. {pod.shape: [[1], [2], [4]]}",
                load_axes, true)
        .then(check_points)
        .custom("published", {"mapping", "", "none", ""},
                "published figures at values of the swept key: summary.json compares them and published.png "
                "draws both (tpusim explain sweep.published)",
                load_published, false, [] { return published_params().describe(); })
        .flag("plot", &SweepSpec::plot, true,
              "draw the pictures: speedup.png (or serving.png for decode steps) and published.png");
    return p;
  }();
  return t;
}

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
  SweepSpec spec;
  spec.path = path;
  spec.name = fs::path(path).stem().string();
  sweep_params().load(root, spec);
  if (spec.name.empty()) root["name"].fail("a sweep name is a folder name under runs/; no '/' and not empty");
  return spec;
}

}  // namespace sweep
