#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "app/cli.h"
#include "sim/error.h"
#include "sim/output.h"

namespace app {

void prepare_output_dir(const std::string& dir, const std::vector<std::string>& files, const std::string& flag) {
  namespace fs = std::filesystem;
  // Told like a bad key: "error: --out DIR: what is wrong", exit 2.
  const sim::SourceLocation where{flag + " " + dir, 0, 0};
  auto fail = [&](const std::string& what) { throw sim::ConfigError(where, "", what); };
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) fail("exists and is not a directory");
  fs::create_directories(dir, ec);
  if (ec) fail("cannot create it: " + ec.message());
  // The output-path policy (sim/output.h) for every file the run writes,
  // before any work.
  for (const auto& f : files) {
    const std::string problem = sim::output_path_problem((fs::path(dir) / f).string());
    if (!problem.empty()) fail(f + " in it " + problem + "; the run writes a file there");
  }
  // Writable: the atomic writer makes a temporary file beside each output.
  const fs::path probe = fs::path(dir) / (".tpusim-write-test." + std::to_string(::getpid()));
  {
    std::ofstream out(probe);
    if (!out) fail("cannot write in it");
  }
  fs::remove(probe, ec);
}

OutputLock::OutputLock(const std::string& dir, const std::string& flag) {
  const std::string path = (std::filesystem::path(dir) / ".tpusim-lock").string();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  const sim::SourceLocation where{flag + " " + dir, 0, 0};
  if (fd_ < 0) throw sim::ConfigError(where, "", "cannot create its lock file .tpusim-lock");
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd_);
    fd_ = -1;
    throw sim::ConfigError(where, "", "another sweep is writing into this folder; wait for it or choose another --out");
  }
}

OutputLock::~OutputLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace app
