#pragma once
// Reading an input file's text, guarded: YAML configs (sim/yaml_node.h) and
// SCALE-Sim's .cfg and .csv files (workloads/scalesim.h) go through it.
#include <string>

namespace sim {

// The text of an input file: a regular file of at most 16 MiB (a device
// such as /dev/zero would be read forever). Throws ConfigError naming it.
std::string read_config_text(const std::string& path);

}  // namespace sim
