#pragma once
// The recipe's libtpu/XLA flag string (LIBTPU_INIT_ARGS), split into flags
// and classified once, like the MaxText keys (keys.h): modelled flags set
// XlaSettings; ignored ones (scheduler tuning, tracing, SparseCore base
// settings, ...) are listed with their reason; unmodelled ones are an error
// unless allow_unmodelled. An unknown flag is an error with a suggestion.
// docs/maxtext.md, "XLA flags", says what each group does.
#include <string>
#include <vector>

#include "sim/yaml_node.h"
#include "workloads/maxtext/keys.h"
#include "workloads/maxtext/spec.h"

namespace workloads {

struct XlaFlagRule {
  std::string name;  // without "--"
  KeyClass cls = KeyClass::ignored;
  std::string why;      // what it does, or why it is ignored / unmodelled
  std::string neutral;  // unmodelled: the value that changes nothing ("" none)
  // Modelled: sets XlaSettings from the value (false: a bad value).
  bool (*apply)(const std::string& value, XlaSettings& out) = nullptr;
};

// Every flag tpusim knows, in documentation order.
const std::vector<XlaFlagRule>& xla_flag_rules();

// "--a=1 --b" -> {a: "1"}, {b: "true"}, each with its offset in the text
// (for the column of an error).
struct XlaFlagText {
  XlaFlag flag;
  std::size_t offset = 0;
};
std::vector<XlaFlagText> split_xla_flags(const std::string& text);

// Reads `node` (a string of flags) into cfg.xla, adding ignored flags to
// cfg.ignored_keys and, with cfg.allow_unmodelled, unmodelled ones to
// cfg.approximations. Errors (exit 2) are located at the flag inside the
// string: an unknown flag (with the nearest known one), a bad value, an
// unmodelled flag.
void load_xla_flags(const sim::YamlNode& node, MaxTextConfig& cfg);

}  // namespace workloads
