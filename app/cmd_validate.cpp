#include <iostream>

#include "app/cli.h"
#include "sweep/points.h"
#include "sweep/spec.h"
#include "workloads/experiment.h"
#include "workloads/validation_case.h"

namespace app {

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
    const sim::YamlNode root = sim::YamlNode::load_file(path);
    if (workloads::is_validation_case(root)) {
      workloads::load_validation_case(root, path);  // the case's keys and its experiment with its overrides
      std::cout << path << ": ok (validation case)\n";
      continue;
    }
    const std::string kind = workloads::validate_file(path);
    if (kind == "sweep") sweep::expand_sweep(sweep::load_sweep_spec(path));  // loads every point's experiment
    std::cout << path << ": ok (" << kind << ")\n";
  }
  return 0;
}

}  // namespace app
