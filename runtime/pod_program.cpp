#include "runtime/pod_program.h"

#include <stdexcept>

namespace runtime {

void PodProgram::add_chip(hw::Program program) { add_replicas(std::move(program), 1); }

void PodProgram::add_replicas(hw::Program program, std::uint32_t count) {
  programs.push_back(std::move(program));
  program_of.insert(program_of.end(), count, static_cast<std::uint32_t>(programs.size() - 1));
}

std::uint32_t PodProgram::add_program(hw::Program program) {
  programs.push_back(std::move(program));
  return static_cast<std::uint32_t>(programs.size() - 1);
}

std::uint32_t PodProgram::peer(std::uint32_t c, std::uint32_t slot) const {
  if (c < peers.size() && slot < peers[c].size() && peers[c][slot] != kNoPeer) return peers[c][slot];
  throw std::logic_error("chip " + std::to_string(c) + " names peer " + std::to_string(slot) +
                         " of its peer table, which names no chip");
}

}  // namespace runtime
