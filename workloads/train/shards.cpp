#include "workloads/train/shards.h"

#include "workloads/train/holdings.h"

namespace workloads {

std::uint64_t StageView::held_elements(std::size_t layer) const {
  return workloads::held_elements(pass.model, layers, layer, pass.tp());
}

std::uint32_t StageView::stored_bytes() const { return bytes_of(spec.precision.params); }

std::uint32_t sync_queue(const TrainParallelism& p, interconnect::CollectiveOp op) {
  const bool gather = op == interconnect::CollectiveOp::all_gather;
  if (p.sparsecore_offload.of(op)) return gather ? kIciSparseCoreWeights : kIciSparseCoreGradients;
  return gather ? kIciWeights : kIciGradients;
}

Deps sharded_collective(const StageView& stage, hw::Program& prog, interconnect::CollectiveOp op, std::size_t layer,
                        const std::string& tag, CollectivePurpose what, const ParallelAxes& over,
                        std::uint32_t element_bytes, const Deps& deps) {
  const std::uint64_t n = stage.held_elements(layer);
  if (n == 0) return deps;
  const bool gather = op == interconnect::CollectiveOp::all_gather;
  const std::string name = stage.name() + (tag.empty() ? "" : " " + tag) + " " + stage.pass.model.layers[layer].name +
                           " " + to_string(what) + (gather ? " all-gather" : " reduce-scatter") + " over " +
                           axes_text(over.axes);
  return {stage.pass.collectives.op(prog, name, sync_queue(stage.spec.parallelism, op), op,
                                    element_bytes * gathered_elements(n, over.degree), over.axes, what, deps,
                                    element_bytes)};
}

}  // namespace workloads
