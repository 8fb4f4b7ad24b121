#include "kernels/program_append.h"

namespace kernels {

std::vector<std::uint32_t> append_program(hw::Program& dst, const hw::Program& src,
                                          const std::vector<std::uint32_t>& after, const std::string& name_suffix) {
  const std::uint32_t base = static_cast<std::uint32_t>(dst.ops.size());
  std::vector<std::uint32_t> sinks;
  for (const hw::Op& op : src.ops) {
    hw::Op copy = op;
    copy.name += name_suffix;
    if (copy.deps.empty()) {
      copy.deps = after;
    } else {
      for (auto& d : copy.deps) d += base;
    }
    const std::uint32_t id = dst.add(std::move(copy));
    if (const auto* dma = std::get_if<hw::DmaOp>(&op.payload); dma && dma->write) sinks.push_back(id);
  }
  if (sinks.empty() && !src.ops.empty()) sinks.push_back(static_cast<std::uint32_t>(dst.ops.size() - 1));
  return sinks;
}

}  // namespace kernels
