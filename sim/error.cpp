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

std::size_t utf8_sequence(const std::string& s, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char b = byte(at);
  if (b < 0x80) return 1;
  // RFC 3629: the lead byte says how many continuation bytes follow; no
  // overlong forms, no surrogates, nothing above U+10FFFF.
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (b >= 0xC2 && b <= 0xDF) {
    n = 1;
  } else if (b >= 0xE0 && b <= 0xEF) {
    n = 2;
    if (b == 0xE0) lo = 0xA0;
    if (b == 0xED) hi = 0x9F;
  } else if (b >= 0xF0 && b <= 0xF4) {
    n = 3;
    if (b == 0xF0) lo = 0x90;
    if (b == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (at + n >= s.size()) return 0;
  for (std::size_t i = 1; i <= n; ++i) {
    const unsigned char c = byte(at + i);
    if (c < (i == 1 ? lo : 0x80) || c > (i == 1 ? hi : 0xBF)) return 0;
  }
  return n + 1;
}

std::string printable(const std::string& s) {
  std::string out;
  for (std::size_t at = 0; at < s.size();) {
    const unsigned char b = static_cast<unsigned char>(s[at]);
    const std::size_t n = utf8_sequence(s, at);
    if (n == 0 || (n == 1 && (b < 0x20 || b == 0x7F))) {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 15];
      ++at;
    } else {
      out.append(s, at, n);
      at += n;
    }
  }
  return out;
}

std::string quote_short(const std::string& value) {
  constexpr std::size_t kShown = 60;
  if (value.size() <= kShown) return "'" + printable(value) + "'";
  return "'" + printable(value.substr(0, kShown)) + "...' (" + std::to_string(value.size()) + " characters)";
}

void reject(const std::string& key_path, const std::string& what) { throw ConfigError({}, key_path, what); }

}  // namespace sim
