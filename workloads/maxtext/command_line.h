#pragma once
// A pasted MaxText command line as the mapping load_maxtext_config reads
// (docs/maxtext.md, "From a command line"): the words
//   LIBTPU_INIT_ARGS="--xla_..." python3 -m MaxText.train MaxText/configs/base.yml
//     model_name=llama3.1-70b per_device_batch_size=2 ici_fsdp_parallelism=-1 ...
// as the shell splits them. Each key=value word is one key, its value read as
// YAML as OmegaConf.from_cli reads it (2 is a number, true a boolean,
// [silu,linear] a list); LIBTPU_INIT_ARGS=... (or XLA_FLAGS=...) gives the
// flag string; the launcher's words (python3, -m, the module, the base
// config .yml) are skipped.
#include <string>
#include <vector>

#include "sim/yaml_node.h"

namespace workloads {

struct MaxTextCommandLine {
  // The keys, one line per key=value word in order: an error in the Nth
  // such word is located at "command line:N:column".
  sim::YamlNode config{YAML::Node(YAML::NodeType::Map), "command line", ""};
  std::string xla_flags;  // "" when none was given
  bool has_xla_flags = false;
};

// Throws sim::ConfigError for a word that is neither key=value nor part of
// the launcher, and for a key given twice.
MaxTextCommandLine parse_maxtext_command_line(const std::vector<std::string>& words);

}  // namespace workloads
