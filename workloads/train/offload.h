#pragma once
// Host offload of activations (remat: offload; MaxText's offloaded remat
// policies): a layer's stash (its tensor-parallel share) is copied over
// the chip's host link to host memory after its forward (an HBM read) and
// back before its backward (an HBM write), on the host DMA engines
// (hw/host_link.h, one each way). The copy back is issued one layer ahead:
// once the stash is on the host and the backward two layers on has freed
// the buffer it lands in, so it runs under the next layer's backward.
// Which layers offload: holdings.h (offloaded). Memory: memory.cpp
// (layer_memory's host bytes and the two HBM buffers).
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "hw/program.h"
#include "workloads/train/pass_context.h"

namespace workloads {

class HostOffload {
 public:
  explicit HostOffload(const PassContext& ctx) : ctx_(ctx) {}
  // Layer `layer`'s stash of microbatch `microbatch` to the host, after
  // its forward pass (`after`); `tag` names the task.
  void to_host(hw::Program& prog, std::size_t layer, std::uint32_t microbatch, const std::string& tag,
               const Deps& after);
  // And back, after its copy to the host and `after`; returns the copy.
  std::uint32_t from_host(hw::Program& prog, std::size_t layer, std::uint32_t microbatch, const std::string& tag,
                          const Deps& after) const;

 private:
  std::uint32_t copy(hw::Program& prog, std::size_t layer, const std::string& tag, bool back, const Deps& after) const;

  const PassContext& ctx_;
  std::map<std::pair<std::uint32_t, std::size_t>, std::uint32_t> to_host_;  // (microbatch, layer) -> its copy
};

}  // namespace workloads
