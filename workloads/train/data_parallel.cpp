#include "workloads/train/data_parallel.h"

#include "sim/units.h"
#include "workloads/train/holdings.h"
#include "workloads/train/tensor_split.h"

namespace workloads {

Deps DataParallelSync::reduce(hw::Program& prog, std::size_t layer, const Deps& grads) {
  const PassContext& ctx = stage_.pass;
  const TrainParallelism& par = stage_.spec.parallelism;
  std::uint64_t experts = 0;
  for (const auto* p : held_params(ctx.model, stage_.layers, layer))
    if (p->shards > 1) experts += local_param_elements(*p, ctx.tp());
  Deps out;
  for (const bool expert : {false, true}) {
    const std::uint64_t held = expert ? experts : stage_.held_elements(layer) - experts;
    const std::uint64_t n = sim::ceil_div(held, par.fsdp.degree);
    const ParallelAxes over = par.gradient_axes(expert);
    if (n == 0 || over.degree == 1) continue;
    const std::string name = stage_.name() + " " + ctx.model.layers[layer].name + (expert ? " expert" : "") +
                             " gradients all-reduce over " + axes_text(over.axes);
    const std::uint32_t stored = stage_.stored_bytes();  // the gradients as stored
    out.push_back(ctx.collectives.op(prog, name, sync_queue(par, interconnect::CollectiveOp::all_reduce),
                                     interconnect::CollectiveOp::all_reduce, stored * n, over.axes,
                                     CollectivePurpose::gradients, grads, stored));
  }
  return out.empty() ? grads : out;
}

Deps replica_gradient_all_reduce(const StageView& stage, hw::Program& prog, std::size_t layer, const Deps& deps) {
  const PassContext& ctx = stage.pass;
  const TrainParallelism& par = stage.spec.parallelism;
  std::uint64_t replicated = 0;
  for (const auto* p : held_params(ctx.model, stage.layers, layer))
    if (p->tp_units != 0 && p->tp_units < ctx.tp()) replicated += local_param_elements(*p, ctx.tp());
  const std::uint64_t n = sim::ceil_div(replicated, par.fsdp.degree);
  if (n == 0) return deps;
  const std::string name = stage.name() + " " + ctx.model.layers[layer].name +
                           " replicated key/value gradients all-reduce over " + axes_text(par.tensor.axes);
  const std::uint32_t stored = stage.stored_bytes();  // the gradients as stored
  return {ctx.collectives.op(prog, name, sync_queue(par, interconnect::CollectiveOp::all_reduce),
                             interconnect::CollectiveOp::all_reduce, stored * n, par.tensor.axes,
                             CollectivePurpose::gradients, deps, stored)};
}

}  // namespace workloads
