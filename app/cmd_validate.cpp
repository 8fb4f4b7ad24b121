#include <iostream>

#include "app/cli.h"
#include "workloads/experiment.h"

namespace app {

int cmd_validate(const std::vector<std::string>& args) {
  if (args.empty()) throw UsageError("validate needs at least one file");
  for (const auto& a : args) {
    if (a == "-h" || a == "--help") {
      std::cout << "tpusim validate FILE.yaml...: check chip, pod and experiment files; run nothing\n";
      return 0;
    }
  }
  for (const auto& path : args) {
    std::string kind = workloads::validate_file(path);
    std::cout << path << ": ok (" << kind << ")\n";
  }
  return 0;
}

}  // namespace app
