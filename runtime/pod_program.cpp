#include "runtime/pod_program.h"

namespace runtime {

void PodProgram::add_chip(hw::Program program) { add_replicas(std::move(program), 1); }

void PodProgram::add_replicas(hw::Program program, std::uint32_t count) {
  programs.push_back(std::move(program));
  program_of.insert(program_of.end(), count, static_cast<std::uint32_t>(programs.size() - 1));
}

}  // namespace runtime
