#include "sim/input_file.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/error.h"

namespace sim {

std::string read_config_text(const std::string& path) { return read_input_text(path, 16u << 20, "a config file"); }

std::string read_input_text(const std::string& path, std::uintmax_t max_bytes, const std::string& kind) {
  // Only regular files of an input's size: a device (/dev/zero) or a FIFO
  // would be read forever.
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    throw ConfigError(SourceLocation{path, 0, 0}, "", "not a regular file");
  if (!ec && std::filesystem::exists(status) && std::filesystem::file_size(path, ec) > max_bytes)
    throw ConfigError(SourceLocation{path, 0, 0}, "",
                      "larger than " + std::to_string(max_bytes >> 20) + " MiB: not " + kind + " tpusim reads");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(SourceLocation{path, 0, 0}, "", "cannot open file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void check_utf8(const std::string& text, const std::string& origin) {
  int line = 1, column = 1;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t n = utf8_sequence(text, at);
    if (n == 0)
      throw ConfigError(SourceLocation{origin, line, column}, "",
                        "byte " + printable(text.substr(at, 1)) + " is not UTF-8 text; save the file as UTF-8");
    if (text[at] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
    at += n;
  }
}

}  // namespace sim
