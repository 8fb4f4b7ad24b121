#include <iostream>

#include "app/cli.h"
#include "sweep/points.h"
#include "sweep/spec.h"
#include "workloads/experiment.h"
#include "workloads/validation_case.h"

namespace app {

std::string validate_path(const std::string& path) {
  const sim::YamlNode root = sim::YamlNode::load_file(path);
  if (workloads::is_validation_case(root)) {
    workloads::load_validation_case(root, path);  // the case's keys and its experiment with its overrides
    return "validation case";
  }
  const std::string kind = workloads::validate_file(path);
  if (kind == "sweep") sweep::expand_sweep(sweep::load_sweep_spec(path));  // loads every point's experiment
  return kind;
}

int cmd_validate(const std::vector<std::string>& args) {
  if (args.empty()) throw UsageError("validate needs at least one file");
  for (const auto& a : args) {
    if (a == "-h" || a == "--help") {
      std::cout << "tpusim validate FILE.yaml...: check chip, pod, experiment, sweep and validation case files; run "
                   "nothing\n";
      return 0;
    }
  }
  for (const auto& path : args) {
    std::cout << path << ": ok (" << validate_path(path) << ")\n";
  }
  return 0;
}

}  // namespace app
