#pragma once
// Runs the real tpusim binary (or a script of the source tree), as a user
// would, and captures what it says; a temporary folder per test.
#include <unistd.h>

#include <sys/wait.h>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace testing_cli {

struct CliResult {
  int status = -1;
  std::string output;  // stdout and stderr together
};

// `command` run by the shell in the source tree.
inline CliResult run_in_source_tree(const std::string& command) {
  const std::string cmd = std::string("cd ") + TPUSIM_SOURCE_DIR + " && " + command + " 2>&1";
  CliResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  const int raw = pclose(p);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

inline CliResult run_tpusim(const std::string& args) {
  return run_in_source_tree(std::string("SC_COPYRIGHT_MESSAGE=DISABLE ") + TPUSIM_BINARY + " " + args);
}

// The report.json a run wrote into `dir` (relative to the source tree, where
// run_tpusim runs, or absolute).
inline nlohmann::json read_report(const std::string& dir) {
  std::ifstream in(std::filesystem::path(TPUSIM_SOURCE_DIR) / dir / "report.json");
  if (!in) throw std::runtime_error("no report.json in " + dir);
  return nlohmann::json::parse(in);
}

// <tmp>/tpusim-test-<name>-<pid>, empty at first, removed with the object.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& name)
      : path(std::filesystem::temp_directory_path() / ("tpusim-test-" + name + "-" + std::to_string(getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string operator/(const std::string& file) const { return (path / file).string(); }
};

}  // namespace testing_cli
