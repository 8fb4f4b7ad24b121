#include "app/run_folder.h"

#include <filesystem>

namespace app {

std::string default_run_folder(const std::string& name, const std::string& root) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path dir = fs::path(root) / name;
  for (int n = 2; fs::exists(dir / "report.json", ec); ++n) dir = fs::path(root) / (name + "-" + std::to_string(n));
  return dir.string();
}

}  // namespace app
