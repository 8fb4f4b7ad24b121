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
int cmd_plan(const std::vector<std::string>& args);
int cmd_validate(const std::vector<std::string>& args);
int cmd_explain(const std::vector<std::string>& args);
int cmd_scalesim(const std::vector<std::string>& args);
int cmd_compare(const std::vector<std::string>& args);
int cmd_maxtext(const std::vector<std::string>& args);

// What `tpusim validate PATH` checks (a chip, pod, experiment or sweep file,
// a sweep with every point's experiment): the file's kind, or sim::ConfigError.
std::string validate_path(const std::string& path);

// Raised for command-line misuse; exit 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Makes `dir` (--out, or its default) ready before anything is simulated: it
// is or becomes a directory this process can write, and none of `files` in
// it is a directory. Throws sim::ConfigError naming `flag` otherwise, so a
// bad output folder is exit 2 before the run, not an internal error after it.
void prepare_output_dir(const std::string& dir, const std::vector<std::string>& files, const std::string& flag);

// An exclusive lock (flock) on DIR/.tpusim-lock for the life of the object,
// so that a second sweep into a folder one is writing stops with exit 2
// (ConfigError naming `flag`) instead of mixing its points with the first
// one's. The kernel drops the lock when the process ends, killed or not.
class OutputLock {
 public:
  OutputLock(const std::string& dir, const std::string& flag);
  ~OutputLock();
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace app
