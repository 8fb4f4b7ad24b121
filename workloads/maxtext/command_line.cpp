#include "workloads/maxtext/command_line.h"

#include "sim/error.h"
#include "sim/text.h"

namespace workloads {

namespace {

using sim::ends_with;

// The words that start MaxText rather than configure it.
bool launcher_word(const std::string& w) {
  return w == "python" || w == "python3" || w == "-m" || w == "export" || w == "MaxText.train" ||
         w == "maxtext.train" || ends_with(w, "/train.py") || w == "train.py" || ends_with(w, ".yml") ||
         ends_with(w, ".yaml");
}

}  // namespace

MaxTextCommandLine parse_maxtext_command_line(const std::vector<std::string>& words) {
  MaxTextCommandLine out;
  std::string text;
  for (const auto& w : words) {
    const std::size_t eq = w.find('=');
    if (eq == std::string::npos || eq == 0) {
      if (launcher_word(w)) continue;
      throw sim::ConfigError({"command line", 0, 0}, "",
                             "expected key=value (a MaxText setting), got " + sim::quote_short(w));
    }
    const std::string key = w.substr(0, eq), value = w.substr(eq + 1);
    if (key == "LIBTPU_INIT_ARGS" || key == "XLA_FLAGS") {
      out.xla_flags += (out.xla_flags.empty() ? "" : " ") + value;
      out.has_xla_flags = true;
      continue;
    }
    if (key.find_first_of(" :#{}[],&*!|>'\"%@`") != std::string::npos)
      throw sim::ConfigError({"command line", 0, 0}, "", "not a MaxText key: " + sim::quote_short(key));
    text += key + ": " + value + "\n";
  }
  out.config = sim::YamlNode::load_string(text.empty() ? "{}" : text, "command line");
  if (!out.config.is_map()) out.config.fail("expected key=value words");
  return out;
}

}  // namespace workloads
