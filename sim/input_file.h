#pragma once
// Reading an input file's text, guarded: YAML configs (sim/yaml_node.h) and
// SCALE-Sim's .cfg and .csv files (workloads/scalesim.h) go through it.
#include <cstdint>
#include <string>

namespace sim {

// The text of an input file: a regular file of at most 16 MiB (a device
// such as /dev/zero would be read forever). Throws ConfigError naming it.
std::string read_config_text(const std::string& path);

// The same guard for any input of at most `max_bytes` (HLO text): `kind`
// names it in the message ("larger than 256 MiB: not an HLO module ...").
std::string read_input_text(const std::string& path, std::uintmax_t max_bytes, const std::string& kind);

// Throws ConfigError at the line and column of `text`'s first byte that is
// not well-formed UTF-8 (a name read from it goes into report.json, which
// is UTF-8; a SCALE-Sim layer name in Latin-1 was an internal error).
void check_utf8(const std::string& text, const std::string& origin);

}  // namespace sim
