#pragma once
// The part every subcommand's argument parsing shares: its options and
// positional arguments into a variables_map, and --help.
#include <boost/program_options.hpp>

#include <iostream>
#include <string>
#include <vector>

namespace app {

// Parses `args` into `vm` (throws boost's errors for misuse, which main
// reports as usage errors). With --help it prints `opts` and returns false:
// the command then returns 0 without doing anything.
inline bool parse_command_line(const std::vector<std::string>& args,
                               const boost::program_options::options_description& opts,
                               const boost::program_options::positional_options_description& pos,
                               boost::program_options::variables_map& vm) {
  namespace po = boost::program_options;
  po::store(po::command_line_parser(args).options(opts).positional(pos).run(), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << opts;
    return false;
  }
  return true;
}

}  // namespace app
