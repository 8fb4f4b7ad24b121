#pragma once
// Child processes of a sweep (a point's `tpusim run`, the plot script):
// started with fork/exec, output into a log file, and ended by the kernel
// when the sweep process dies (PR_SET_PDEATHSIG), so killing a sweep never
// leaves orphans writing into its folder.
#include <sys/types.h>

#include <string>
#include <vector>

namespace sweep {

struct ChildExit {
  int exit_code = 0;  // -1 when a signal ended it
  int signal = 0;
};

// Starts argv[0] with the arguments; stdout and stderr go to `log_path`
// (truncated). Throws std::runtime_error when it cannot fork.
pid_t spawn_process(const std::vector<std::string>& argv, const std::string& log_path);

ChildExit decode_wait_status(int status);

// Waits for one given child; retries on EINTR.
ChildExit wait_for(pid_t pid);

// This program's own binary (/proc/self/exe resolved), so points run the
// very build that runs the sweep.
std::string self_executable();

}  // namespace sweep
