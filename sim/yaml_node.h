#pragma once
// A YAML value together with where it came from (file, line, column) and its
// key path from the document root, so that every validation message can say
// "file:line:column: workload.m: expected a positive integer, got -3".
#include <yaml-cpp/yaml.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/error.h"

namespace sim {

class YamlNode {
 public:
  YamlNode(YAML::Node node, std::string file, std::string path, SourceLocation parent_loc = {});

  // Parses a file; syntax errors become ConfigError with the parser's location.
  static YamlNode load_file(const std::string& path);
  // Parses text (for --set values and tests); `origin` names it in messages.
  static YamlNode load_string(const std::string& text, const std::string& origin);

  bool present() const { return node_.IsDefined() && !node_.IsNull(); }
  bool is_map() const { return node_.IsMap(); }
  bool is_sequence() const { return node_.IsSequence(); }
  bool is_scalar() const { return node_.IsScalar(); }

  // Child by key or index. A missing child still knows its would-be path and
  // points at its parent's location, for "missing required key" messages.
  YamlNode operator[](const std::string& key) const;
  YamlNode operator[](std::size_t index) const;
  std::size_t size() const { return node_.size(); }
  std::vector<std::string> keys() const;  // in file order (map only)

  SourceLocation location() const;
  const std::string& path() const { return path_; }
  const std::string& file() const { return file_; }
  const YAML::Node& raw() const { return node_; }
  std::string scalar() const;  // the scalar text, or "" when not a scalar

  // Typed reads. Each throws ConfigError naming location, key path, the
  // expected type and what was found.
  double as_double() const;
  std::uint64_t as_uint() const;  // non-negative integer; accepts 1e9, 2**30 is not YAML
  std::int64_t as_int() const;
  bool as_bool() const;
  std::string as_string() const;

  // Rejects keys not in `known`, suggesting the nearest known key.
  void reject_unknown_keys(const std::vector<std::string>& known) const;

  [[noreturn]] void fail(const std::string& what) const;

  // Applies a command-line override "key.path=value" (value parsed as YAML)
  // to this document. The parent of the key must exist; messages about the
  // overridden value then name the override instead of a file position.
  void apply_override(const std::string& assignment);

 private:
  YAML::Node node_;
  std::string file_;
  std::string path_;
  SourceLocation parent_loc_;
  // key path -> the "--set ..." text that replaced it (shared by all nodes of a document)
  std::shared_ptr<std::map<std::string, std::string>> overrides_;
};

// Runs `check` (a validation that knows key paths but not files) and
// rethrows its ConfigError located at the node its key path names in `root`
// (the deepest node of the path that exists).
template <class F>
void located(const YamlNode& root, F&& check);
ConfigError relocate(const YamlNode& root, const ConfigError& e);

template <class F>
void located(const YamlNode& root, F&& check) {
  try {
    check();
  } catch (const ConfigError& e) {
    if (!e.where().file.empty()) throw;
    throw relocate(root, e);
  }
}

// "did you mean 'x'?" for a misspelt word, or "" when nothing is close.
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

// Human-readable description of what a node holds, for "got ..." messages.
std::string describe_yaml(const YAML::Node& n);

// One-line YAML for a value, as `--set key=VALUE` parses it back.
std::string flow_yaml(const YAML::Node& n);

}  // namespace sim
