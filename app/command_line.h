#pragma once
// The part every subcommand's argument parsing shares: its options and
// positional arguments into a variables_map, and --help.
#include <boost/program_options.hpp>

#include <iostream>
#include <string>
#include <vector>

#include "sim/yaml_node.h"

namespace app {

// Parses `args` into `vm` (throws boost's errors for misuse, which main
// reports as usage errors; an unknown option names the near misses among
// `opts`, "--tarce" -> "--trace", "-o" and "--output" -> "--out"). Options are
// never guessed from a prefix (boost's default): "--trace-chip" is an error
// naming "--trace-chips", not silently that option. With --help it prints
// `opts` and returns false: the command then returns 0 without doing
// anything.
inline bool parse_command_line(const std::vector<std::string>& args,
                               const boost::program_options::options_description& opts,
                               const boost::program_options::positional_options_description& pos,
                               boost::program_options::variables_map& vm) {
  namespace po = boost::program_options;
  try {
    namespace style = po::command_line_style;
    po::store(po::command_line_parser(args)
                  .options(opts)
                  .positional(pos)
                  .style(style::default_style & ~style::allow_guessing)
                  .run(),
              vm);
  } catch (const po::unknown_option& e) {
    const std::string given = e.get_option_name();
    std::vector<std::string> names;
    for (const auto& o : opts.options()) names.push_back("--" + o->long_name());
    std::string hint = sim::did_you_mean(given, names);
    // A short option the commands do not have: the long ones it abbreviates.
    if (hint.empty() && given.size() == 2 && given[0] == '-') hint = sim::did_you_mean("--" + given.substr(1), names);
    // A longer spelling of an option: "--output" -> "--out".
    for (const auto& n : names)
      if (hint.empty() && n.size() > 3 && given.rfind(n, 0) == 0) hint = "did you mean '" + n + "'?";
    throw po::error(std::string(e.what()) + (hint.empty() ? "" : "; " + hint));
  }
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << opts;
    return false;
  }
  return true;
}

}  // namespace app
