#pragma once
// The two ways a run can fail that are not bugs, each with its exit status
// (docs/interface.md): bad input (2) and a simulated system that fails (3).
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace sim {

// Where in which file a value came from. line/column are 1-based; 0 = unknown.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
  std::string str() const;  // "file:line:column" (or less when unknown)
};

// Bad input: YAML syntax, wrong type, out of range, unknown key, ... Exit 2.
// The message reads "file:line:column: key.path: what was wrong".
// A value quoted in an error message: 'value', or its first 60 characters
// and its length when it is longer, so a huge scalar does not become a huge
// message.
// Raw bytes are escaped (printable).
std::string quote_short(const std::string& value);

// Bytes of the well-formed UTF-8 sequence at `at` (RFC 3629), 0 if there is none.
std::size_t utf8_sequence(const std::string& s, std::size_t at);
// `s` with control characters and bytes that are not UTF-8 written as \xNN,
// so an error line never carries raw bytes of the input.
std::string printable(const std::string& s);

class ConfigError : public std::runtime_error {
 public:
  ConfigError(const SourceLocation& where, const std::string& key_path, const std::string& what);
  const SourceLocation& where() const { return where_; }
  const std::string& key_path() const { return key_path_; }
  const std::string& detail() const { return detail_; }  // the message without location and key path
  // The same problem, told at another place (a lower layer reports what is
  // wrong; the caller knows which file or command-line option it came from).
  ConfigError at(const SourceLocation& where, const std::string& key_path) const {
    return ConfigError(where, key_path, detail_);
  }

 private:
  SourceLocation where_;
  std::string key_path_;
  std::string detail_;
};

// Throws ConfigError for key_path without a location: a lower layer checks
// a value it was handed and its caller re-throws the error `at` the place the
// value came from.
[[noreturn]] void reject(const std::string& key_path, const std::string& what);

// The simulated system cannot do what was asked: does not fit in HBM,
// deadlock, runaway. Exit 3.
class SimFailure : public std::runtime_error {
 public:
  using Numbers = std::vector<std::pair<std::string, double>>;
  using std::runtime_error::runtime_error;
  // `numbers`: the figures the message quotes, by name (needed_bytes,
  // capacity_bytes, chip, ...), for callers that read them rather than the
  // text (the Python module's tpusim.SimulationFailed).
  SimFailure(const std::string& what, Numbers numbers) : std::runtime_error(what), numbers_(std::move(numbers)) {}
  const Numbers& numbers() const { return numbers_; }

 private:
  Numbers numbers_;
};

}  // namespace sim
