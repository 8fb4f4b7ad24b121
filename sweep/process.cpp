#include "sweep/process.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "sim/output.h"

namespace sweep {

pid_t spawn_process(const std::vector<std::string>& argv, const std::string& log_path) {
  // Everything the child needs is prepared before fork: between fork and
  // exec only async-signal-safe calls are allowed.
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = ::getpid();
  // The output-path policy (sim/output.h) for the log too: never through a
  // link (O_NOFOLLOW), never waiting on a FIFO (O_NONBLOCK: no reader is an
  // error), and only a regular file.
  const std::string problem = sim::output_path_problem(log_path);
  if (!problem.empty()) throw std::runtime_error("cannot write " + log_path + ": it " + problem);
  const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
  if (log < 0) throw std::runtime_error("cannot write " + log_path + ": " + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(log);
    throw std::runtime_error(std::string("cannot start a worker process: ") + std::strerror(err));
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl took effect
    ::dup2(log, STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
    ::execv(args[0], args.data());
    static const char msg[] = "internal error: cannot execute the worker binary\n";
    (void)!::write(STDERR_FILENO, msg, sizeof msg - 1);
    ::_exit(127);
  }
  ::close(log);
  return pid;
}

ChildExit decode_wait_status(int status) {
  if (WIFEXITED(status)) return {WEXITSTATUS(status), 0};
  if (WIFSIGNALED(status)) return {-1, WTERMSIG(status)};
  return {-1, 0};
}

ChildExit wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return {-1, 0};
  }
  return decode_wait_status(status);
}

std::string self_executable() {
  std::error_code ec;
  const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("/proc/self/exe") : p.string();
}

}  // namespace sweep
