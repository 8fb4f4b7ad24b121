#include "sim/error.h"

namespace sim {

std::string SourceLocation::str() const {
  std::string s = file.empty() ? std::string("<input>") : file;
  if (line > 0) {
    s += ":" + std::to_string(line);
    if (column > 0) s += ":" + std::to_string(column);
  }
  return s;
}

static std::string compose(const SourceLocation& where, const std::string& key_path, const std::string& what) {
  std::string s = where.str() + ": ";
  if (!key_path.empty()) s += key_path + ": ";
  return s + what;
}

ConfigError::ConfigError(const SourceLocation& where, const std::string& key_path, const std::string& what)
    : std::runtime_error(compose(where, key_path, what)), where_(where), key_path_(key_path), detail_(what) {}

std::string quote_short(const std::string& value) {
  constexpr std::size_t kShown = 60;
  if (value.size() <= kShown) return "'" + value + "'";
  return "'" + value.substr(0, kShown) + "...' (" + std::to_string(value.size()) + " characters)";
}

void reject(const std::string& key_path, const std::string& what) { throw ConfigError({}, key_path, what); }

}  // namespace sim
