#include "kernels/kernel_launch.h"

#include "kernels/program_append.h"

namespace kernels {

std::vector<std::uint32_t> append_launch(hw::Program& prog, const hw::ChipConfig& chip,
                                         const std::vector<std::uint32_t>& deps, const std::string& name) {
  if (chip.kernel_launch <= 0) return deps;
  return {prog.add({"launch " + name, {hw::EngineKind::scalar, 0}, hw::LaunchOp{}, deps, 0})};
}

hw::Program launched(const hw::Program& kernel, const hw::ChipConfig& chip) {
  if (chip.kernel_launch <= 0 || kernel.ops.empty()) return kernel;
  hw::Program p;
  append_program(p, kernel, append_launch(p, chip, {}, "kernel"), "");
  return p;
}

}  // namespace kernels
