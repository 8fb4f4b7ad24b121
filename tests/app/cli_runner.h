#pragma once
// Runs the real tpusim binary, as a user would, and captures what it says.
#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>

namespace testing_cli {

struct CliResult {
  int status = -1;
  std::string output;  // stdout and stderr together
};

inline CliResult run_tpusim(const std::string& args) {
  const std::string cmd = std::string("cd ") + TPUSIM_SOURCE_DIR + " && SC_COPYRIGHT_MESSAGE=DISABLE " +
                          TPUSIM_BINARY + " " + args + " 2>&1";
  CliResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  int raw = pclose(p);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

}  // namespace testing_cli
