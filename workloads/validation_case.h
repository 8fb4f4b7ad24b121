#pragma once
// A validation case file (validation/cases/*.yaml; format and rules in
// validation/README.md) as `tpusim run` and `tpusim validate` take it: the
// published measurement it describes, and the experiment that reproduces
// it, run with the case's `set:` overrides (then the command line's). A
// case tpusim cannot run faithfully (`missing:`) is a located error naming
// what it lacks. scripts/validate reads the same files to run every case.
#include <optional>
#include <string>
#include <vector>

#include "sim/params.h"
#include "sim/yaml_node.h"
#include "workloads/experiment.h"

namespace workloads {

struct ValidationCase {
  struct Source {
    std::string cite, where, reference;
  };
  struct Measured {
    double value = 0;
    std::string unit, published, how;
  };
  struct Approximation {
    std::string experiment, differs;
    std::vector<std::string> set;  // "key.path=value"
  };
  std::string title, group, configuration, compare, notes;
  Source source;
  Measured measured;
  std::vector<std::string> assumptions, missing;
  bool dropless_moe = false;  // read by scripts/calibrate: left out of compute_efficiency
  std::optional<double> band;
  Approximation approximation;  // experiment empty: none
  // `experiment:`: a path relative to the repository (resolved against the
  // case file's folder and its parents), or an inline experiment mapping.
  std::optional<sim::YamlNode> experiment_node;
  std::vector<std::string> set;  // `set:` as "key.path=value", in file order
};

const sim::ParamTable<ValidationCase>& validation_case_params();

// A case file: a mapping with `experiment` and `measured` (a sweep has
// `experiment` but no `measured`).
bool is_validation_case(const sim::YamlNode& root);

// The experiment a case file runs: its experiment, with its `set:` and then
// `overrides`, named after the case. Throws sim::ConfigError (located) for
// a malformed case, an experiment path that names no file, or a case with
// `missing:` capabilities.
Experiment load_validation_case(const sim::YamlNode& root, const std::string& path,
                                const std::vector<std::string>& overrides = {});

// What `tpusim run FILE` runs: a validation case's experiment, or the
// experiment file itself.
Experiment load_run_file(const std::string& path, const std::vector<std::string>& overrides = {});

}  // namespace workloads
