#pragma once
// Expert parallelism (GShard, Lepikhin et al. 2020, arXiv:2006.16668): a
// mixture of experts' experts sharded over the expert axes, whole experts
// per chip. Each Transformer block's tokens go to their experts' chips in
// a dispatch all-to-all and come back in a combine all-to-all (their
// blocks per chip pair from the routing, models/routing.h); each chip runs
// each of its experts as one matmul on the tokens routed to it (none for an
// expert that got none: its weights are not read). Chips whose experts
// take different tokens get programs of their own (expert_loads). Under
// GShard's one-hot einsum dispatch (expert_matmul: einsum, MaxText's
// dense_matmul) what moves and computes is each sequence's capacity-padded
// buffer per expert, filled or not: equal blocks, the plain all-to-all.
//
// The layer pass (layer_pass.h) hands a routed layer's expert matmuls and
// exchanges to ChipExperts; everything else of the layer is as without
// experts.
#include <cstdint>
#include <string>
#include <vector>

#include "hw/program.h"
#include "models/model_spec.h"
#include "models/routing.h"
#include "workloads/train/forward_step.h"
#include "workloads/train/pass_context.h"

namespace workloads {

// Each Transformer block's routing of `model`'s tokens (model.tokens() per
// chip) among the step's expert-parallel chips (one without expert
// parallelism), whatever the degree: what a serving step's experts take.
// Empty without experts.
std::vector<models::LayerRouting> moe_routing(const ForwardStep& step, const models::ModelSpec& model);
// The same for a training step's microbatch (`micro`'s tokens per chip;
// the same draw for every microbatch and data-parallel group), and empty
// without expert parallelism.
std::vector<models::LayerRouting> train_routing(const ForwardStep& step, const models::ModelSpec& micro);
// The tokens each expert of expert-parallel rank `rank` (of `ep`) keeps,
// block by block: chips with equal loads run the same program.
std::vector<std::uint64_t> expert_loads(const std::vector<models::LayerRouting>& routing, std::uint32_t rank,
                                        std::uint32_t ep);

// Whether a layer of the pass is routed among expert-parallel chips: a
// mixture-of-experts layer (it has exchanges) with a routing.
bool routed_layer(const PassContext& ctx, const models::LayerSpec& layer);

// One routed layer's experts on the chip of ctx.expert_rank.
class ChipExperts {
 public:
  ChipExperts(const PassContext& ctx, std::uint64_t block) : ctx_(ctx), block_(block) {}
  // The rows the chip's experts compute: the token-expert pairs they keep,
  // or under einsum dispatch their buffers' rows (models::LayerRouting::rows).
  std::uint64_t tokens() const;
  // An expert matmul of the model (count = the chip's experts, the uniform
  // share of tokens each) as the chip runs it: one matmul per expert on
  // the tokens its router sent it, or a grouped one (MatmulSpec::groups)
  // over all of them in whole tiles; returns the sinks (`deps` when no
  // expert got a token).
  Deps matmuls(hw::Program& prog, const models::MatmulSpec& mm, const std::string& label, const Deps& deps) const;
  // The all-to-all over the expert axes (a collective named from `prefix`
  // and `label`): chip i sends chip j the tokens (x.width elements each)
  // of its own that chip j's experts keep; back the other way. Equal
  // blocks everywhere (uniform routing that divides evenly) make it the
  // plain all-to-all. On the tensor-parallel ICI queue, which experts
  // leave free.
  std::uint32_t exchange(hw::Program& prog, const std::string& prefix, const models::ExchangeSpec& x,
                         const std::string& label, const Deps& deps) const;

 private:
  std::uint64_t local_experts() const;
  std::uint64_t expert_tokens(std::uint64_t local) const;  // the chip's `local`-th expert's

  const PassContext& ctx_;
  std::uint64_t block_;
};

}  // namespace workloads
