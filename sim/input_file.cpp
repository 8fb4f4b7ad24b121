#include "sim/input_file.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/error.h"

namespace sim {

std::string read_config_text(const std::string& path) {
  // Only regular files of a config's size: a device (/dev/zero) or a FIFO
  // would be read forever.
  constexpr std::uintmax_t kMaxBytes = 16u << 20;
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    throw ConfigError(SourceLocation{path, 0, 0}, "", "not a regular file");
  if (!ec && std::filesystem::exists(status) && std::filesystem::file_size(path, ec) > kMaxBytes)
    throw ConfigError(SourceLocation{path, 0, 0}, "", "larger than 16 MiB: not a config file");
  std::ifstream in(path);
  if (!in) throw ConfigError(SourceLocation{path, 0, 0}, "", "cannot open file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace sim
