#include "workloads/validation_case.h"

#include <filesystem>

namespace workloads {

namespace fs = std::filesystem;

namespace {

// `set:` (and an approximation's): a mapping of key path to value, kept as
// the --set assignments scripts/validate passes.
std::vector<std::string> read_settings(const sim::YamlNode& n) {
  if (!n.is_map()) n.fail("expected a mapping of key path to value, e.g. {workload.m: 1024}");
  std::vector<std::string> out;
  for (const std::string& key : n.keys()) out.push_back(key + "=" + sim::flow_yaml(n[key].raw()));
  return out;
}

const sim::ParamTable<ValidationCase::Source>& source_params() {
  static const sim::ParamTable<ValidationCase::Source> t = [] {
    sim::ParamTable<ValidationCase::Source> p("source", "where the measured number was published");
    p.text("cite", &ValidationCase::Source::cite, std::nullopt, "short name of the source, for the table")
        .informational("describes the measurement")
        .text("where", &ValidationCase::Source::where, std::nullopt,
              "repository + path + commit, paper + table or figure, or URL")
        .informational("describes the measurement")
        .text("reference", &ValidationCase::Source::reference, std::string(""),
              "its section in docs/reference/, relative to docs/")
        .informational("describes the measurement");
    return p;
  }();
  return t;
}

const sim::ParamTable<ValidationCase::Measured>& measured_params() {
  static const sim::ParamTable<ValidationCase::Measured> t = [] {
    sim::ParamTable<ValidationCase::Measured> p("measured", "the published number");
    p.real("value", &ValidationCase::Measured::value, "", std::nullopt, sim::above(0), "the number, in `unit`")
        .informational("the measurement tpusim is compared with")
        .text("unit", &ValidationCase::Measured::unit, std::nullopt, "s (lower is better) or a rate")
        .informational("the measurement's unit")
        .text("published", &ValidationCase::Measured::published, std::string(""), "the figure as published")
        .informational("describes the measurement")
        .text("how", &ValidationCase::Measured::how, std::string(""), "how `value` follows from it")
        .informational("describes the measurement");
    return p;
  }();
  return t;
}

const sim::ParamTable<ValidationCase::Approximation>& approximation_params() {
  static const sim::ParamTable<ValidationCase::Approximation> t = [] {
    sim::ParamTable<ValidationCase::Approximation> p(
        "approximation", "the closest run tpusim can do today of a case it cannot run faithfully");
    p.text("experiment", &ValidationCase::Approximation::experiment, std::nullopt,
           "its experiment file, relative to the repository")
        .informational("scripts/validate runs it; tpusim run takes the file itself")
        .text("differs", &ValidationCase::Approximation::differs, std::nullopt, "what it does not do faithfully")
        .informational("describes the approximation")
        .custom("set", {"mapping", "", "none", ""}, "--set overrides of the approximation",
                [](const sim::YamlNode& n, ValidationCase::Approximation& a) { a.set = read_settings(n); })
        .informational("scripts/validate passes them with the approximation");
    return p;
  }();
  return t;
}

// The experiment file a case names: its path is relative to the repository
// root, the case file's folder or one of its parents.
std::string experiment_file(const sim::YamlNode& ref, const std::string& case_path) {
  const std::string name = ref.as_string();
  const fs::path rel(name);
  if (rel.is_absolute()) {
    std::error_code ec;
    if (fs::is_regular_file(rel, ec)) return rel.string();
    ref.fail("no experiment file '" + name + "'");
  }
  for (fs::path dir = fs::absolute(case_path).parent_path();; dir = dir.parent_path()) {
    std::error_code ec;
    if (fs::is_regular_file(dir / rel, ec)) return (dir / rel).lexically_normal().string();
    if (dir == dir.parent_path()) break;
  }
  ref.fail("no experiment file '" + name +
           "' in the case's folder or any folder above it (a case's paths are relative to the repository root)");
}

}  // namespace

const sim::ParamTable<ValidationCase>& validation_case_params() {
  static const sim::ParamTable<ValidationCase> t = [] {
    sim::ParamTable<ValidationCase> p("case",
                                      "a validation case (validation/cases/*.yaml): one published measurement and the "
                                      "experiment that reproduces it (validation/README.md)");
    p.text("title", &ValidationCase::title, std::nullopt, "what was measured, in one line")
        .informational("describes the measurement")
        .choice("group", &ValidationCase::group, {"matmul", "collective", "sharded_matmul", "train", "inference"},
                std::nullopt, "what kind of run was measured: its table in docs/validation.md and its validation group")
        .informational("groups the measurement")
        .group("source", &ValidationCase::source, source_params())
        .text("configuration", &ValidationCase::configuration, std::nullopt, "what ran, in words, enough to redo it")
        .informational("describes the measurement")
        .list("assumptions", &ValidationCase::assumptions, sim::text_item(), {}, "none",
              "what the source does not say and the experiment had to choose")
        .informational("describes the experiment")
        .group("measured", &ValidationCase::measured, measured_params())
        .text("compare", &ValidationCase::compare, std::nullopt,
              "the report.json field (or formula of fields) scripts/validate compares with the measurement")
        .informational("read by scripts/validate")
        .custom(
            "experiment", {"string or mapping", "", "", ""},
            "the experiment: a file relative to the repository, or an inline experiment mapping",
            [](const sim::YamlNode& n, ValidationCase& c) { c.experiment_node = n; }, true)
        .informational("the experiment's own keys are walked in its tables")
        .custom("set", {"mapping", "", "none", ""}, "--set overrides of the experiment for this case",
                [](const sim::YamlNode& n, ValidationCase& c) { c.set = read_settings(n); })
        .informational("--set overrides, walked as the experiment's keys")
        .list("missing", &ValidationCase::missing, sim::text_item(), {}, "none",
              "capabilities tpusim lacks to run the case faithfully; then it is not run")
        .informational("read by scripts/validate")
        .optional_group("approximation", &ValidationCase::approximation, approximation_params(), "none")
        .custom("band", {"number", "", "null", ">= 0"},
                "the largest |error| the case may have (null before its first run)",
                [](const sim::YamlNode& n, ValidationCase& c) { c.band = sim::read_real(n, sim::at_least(0), ""); })
        .informational("read by scripts/validate")
        .text("notes", &ValidationCase::notes, std::string(""), "anything else about the case")
        .informational("describes the measurement")
        .flag("dropless_moe", &ValidationCase::dropless_moe, false,
              "the run is a mixture of experts without a capacity, whose routing costs tpusim does not model")
        .informational("read by scripts/calibrate (left out of compute_efficiency)");
    return p;
  }();
  return t;
}

bool is_validation_case(const sim::YamlNode& root) {
  return root.is_map() && root["experiment"].present() && root["measured"].present();
}

Experiment load_validation_case(const sim::YamlNode& root, const std::string& path,
                                const std::vector<std::string>& overrides) {
  ValidationCase c;
  validation_case_params().load(root, c);
  if (!c.missing.empty()) {
    std::string lacks;
    for (const std::string& m : c.missing) lacks += (lacks.empty() ? "" : ", ") + m;
    std::string msg = "this case needs what tpusim cannot do yet (" + lacks + "), so it does not run";
    if (!c.approximation.experiment.empty())
      msg += "; the closest run tpusim can do is `tpusim run " + c.approximation.experiment + "`";
    root["missing"].fail(msg);
  }
  std::vector<std::string> sets = c.set;
  sets.insert(sets.end(), overrides.begin(), overrides.end());
  const sim::YamlNode& ref = *c.experiment_node;
  Experiment exp = ref.is_map() ? load_experiment_node(sim::YamlNode(ref.raw(), path, ""), path, sets)
                                : load_experiment(experiment_file(ref, path), sets);
  exp.name = fs::path(path).stem().string();
  exp.inputs.insert(exp.inputs.begin(), path);
  return exp;
}

Experiment load_run_file(const std::string& path, const std::vector<std::string>& overrides) {
  const sim::YamlNode root = sim::YamlNode::load_file(path);
  if (is_validation_case(root)) return load_validation_case(root, path, overrides);
  return load_experiment(path, overrides);
}

}  // namespace workloads
