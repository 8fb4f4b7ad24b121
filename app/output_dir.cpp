#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "app/cli.h"
#include "sim/error.h"

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
  for (const auto& f : files)
    if (fs::is_directory(fs::path(dir) / f, ec)) fail(f + " in it is a directory; the run writes a file there");
  // Writable: the atomic writer makes a temporary file beside each output.
  const fs::path probe = fs::path(dir) / (".tpusim-write-test." + std::to_string(::getpid()));
  {
    std::ofstream out(probe);
    if (!out) fail("cannot write in it");
  }
  fs::remove(probe, ec);
}

}  // namespace app
