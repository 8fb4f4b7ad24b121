#pragma once
// The `tpusim` subcommands. Each takes the arguments after its name and
// returns the process exit status (docs/interface.md: 0 ok, 1 internal error,
// 2 bad input, 3 the simulated system fails).
#include <stdexcept>
#include <string>
#include <vector>

namespace app {

int cmd_run(const std::vector<std::string>& args);
int cmd_sweep(const std::vector<std::string>& args);
int cmd_validate(const std::vector<std::string>& args);
int cmd_explain(const std::vector<std::string>& args);

// Raised for command-line misuse; exit 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Makes `dir` (--out, or its default) ready before anything is simulated: it
// is or becomes a directory this process can write, and none of `files` in
// it is a directory. Throws sim::ConfigError naming `flag` otherwise, so a
// bad output folder is exit 2 before the run, not an internal error after it.
void prepare_output_dir(const std::string& dir, const std::vector<std::string>& files, const std::string& flag);

}  // namespace app
