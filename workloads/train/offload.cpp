#include "workloads/train/offload.h"

#include "hw/host_link.h"
#include "workloads/train/tensor_split.h"

namespace workloads {

void HostOffload::to_host(hw::Program& prog, std::size_t layer, std::uint32_t microbatch, const std::string& tag,
                          const Deps& after) {
  to_host_[{microbatch, layer}] = copy(prog, layer, tag, false, after);
}

std::uint32_t HostOffload::from_host(hw::Program& prog, std::size_t layer, std::uint32_t microbatch,
                                     const std::string& tag, const Deps& after) const {
  Deps deps{to_host_.at({microbatch, layer})};
  append(deps, after);
  return copy(prog, layer, tag, true, deps);
}

std::uint32_t HostOffload::copy(hw::Program& prog, std::size_t layer, const std::string& tag, bool back,
                                const Deps& after) const {
  const models::LayerSpec& l = ctx_.model.layers[layer];
  const std::uint64_t bytes = local_stash_bytes(l, ctx_.tp(), sequence_split(l, ctx_.step.parallelism.sequence));
  return prog.add({tag + " " + l.name + (back ? " stash from host" : " stash to host"),
                   {hw::EngineKind::dma, hw::host_dma_engine(ctx_.exp.chip, back)},
                   hw::DmaOp{0, bytes, back},
                   after,
                   0});
}

}  // namespace workloads
