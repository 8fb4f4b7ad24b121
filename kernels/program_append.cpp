#include "kernels/program_append.h"

namespace kernels {

std::vector<std::uint32_t> append_program(hw::Program& dst, const hw::Program& src,
                                          const std::vector<std::uint32_t>& after, const std::string& name_suffix) {
  const std::uint32_t base = static_cast<std::uint32_t>(dst.ops.size());
  std::vector<char> needed(src.ops.size(), 0);  // some later op of src depends on it
  for (const hw::Op& op : src.ops)
    for (auto d : op.deps) needed[d] = 1;
  std::vector<std::uint32_t> stores, leaves;
  for (std::size_t i = 0; i < src.ops.size(); ++i) {
    hw::Op copy = src.ops[i];
    copy.name += name_suffix;
    if (copy.deps.empty()) {
      copy.deps = after;
    } else {
      for (auto& d : copy.deps) d += base;
    }
    const std::uint32_t id = dst.add(std::move(copy));
    if (const auto* dma = std::get_if<hw::DmaOp>(&src.ops[i].payload); dma && dma->write) stores.push_back(id);
    if (!needed[i]) leaves.push_back(id);
  }
  return stores.empty() ? leaves : stores;
}

}  // namespace kernels
