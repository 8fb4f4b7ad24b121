// scripts/check-layers on the real tree and on copies of it with one
// violation injected: an upward include, an include cycle, a layer target
// that links a layer above it. Each must be found and named.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "app/cli_runner.h"

namespace test_check_layers {

namespace fs = std::filesystem;

namespace {

// The layer folders and CMakeLists.txt, copied into `dir`.
void copy_tree(const fs::path& dir) {
  for (const char* folder : {"sim", "hw", "models", "interconnect", "kernels", "runtime", "workloads", "sweep", "app"})
    fs::copy(fs::path(TPUSIM_SOURCE_DIR) / folder, dir / folder, fs::copy_options::recursive);
  fs::copy(fs::path(TPUSIM_SOURCE_DIR) / "CMakeLists.txt", dir / "CMakeLists.txt");
}

void append(const fs::path& file, const std::string& text) {
  std::ofstream out(file, std::ios::app);
  out << text;
}

testing_cli::CliResult check(const fs::path& root) {
  return testing_cli::run_in_source_tree("python3 scripts/check-layers --root " + root.string());
}

}  // namespace

TEST_CASE("check-layers: the tree passes", "[scripts][layers]") {
  const auto r = testing_cli::run_in_source_tree("python3 scripts/check-layers");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("every include points down, no cycles") != std::string::npos);
}

TEST_CASE("check-layers: an upward include fails, naming file, line and layers", "[scripts][layers]") {
  testing_cli::TempDir dir("layers-up");
  copy_tree(dir.path);
  append(dir.path / "hw" / "bf16.h", "\n#include \"workloads/experiment.h\"\n");
  const auto r = check(dir.path);
  INFO(r.output);
  CHECK(r.status == 1);
  CHECK(r.output.find("hw/bf16.h:") != std::string::npos);
  CHECK(r.output.find("hw includes workloads") != std::string::npos);
}

TEST_CASE("check-layers: a peer include fails (kernels and runtime are one level)", "[scripts][layers]") {
  testing_cli::TempDir dir("layers-peer");
  copy_tree(dir.path);
  append(dir.path / "kernels" / "matmul_kernel.cpp", "\n#include \"runtime/limits.h\"\n");
  const auto r = check(dir.path);
  INFO(r.output);
  CHECK(r.status == 1);
  CHECK(r.output.find("kernels includes runtime") != std::string::npos);
}

TEST_CASE("check-layers: an include cycle inside a layer fails", "[scripts][layers]") {
  testing_cli::TempDir dir("layers-cycle");
  copy_tree(dir.path);
  // sim/yaml_node.h includes sim/error.h; the reverse closes a cycle.
  append(dir.path / "sim" / "error.cpp", "\n#include \"sim/yaml_node.h\"\n");
  const auto r = check(dir.path);
  INFO(r.output);
  CHECK(r.status == 1);
  // The cycle may run through sim/input_file (yaml_node.cpp reads files
  // through it, and it throws sim/error's ConfigError).
  const std::size_t at = r.output.find("include cycle between modules: sim/error <-> ");
  REQUIRE(at != std::string::npos);
  CHECK(r.output.find("sim/yaml_node", at) < r.output.find('\n', at));
}

TEST_CASE("check-layers: a layer target linking a layer above it fails", "[scripts][layers]") {
  testing_cli::TempDir dir("layers-cmake");
  copy_tree(dir.path);
  append(dir.path / "CMakeLists.txt", "\ntarget_link_libraries(tpusim_hw PUBLIC tpusim_runtime)\n");
  const auto r = check(dir.path);
  INFO(r.output);
  CHECK(r.status == 1);
  CHECK(r.output.find("tpusim_hw links tpusim_runtime") != std::string::npos);
}

}  // namespace test_check_layers
