#include "workloads/train/forward_program.h"

#include <map>

#include "workloads/train/experts.h"
#include "workloads/train/layer_pass.h"
#include "workloads/train/layout.h"

namespace workloads {

ForwardProgram build_forward_program(const Experiment& exp, const ForwardStep& step, const models::ModelSpec& model,
                                     QuantizedMatmuls quantize, const std::vector<models::LayerRouting>& routing) {
  TrainProgram out;
  kernels::MatmulPrograms matmuls(
      exp.chip, exp.fidelity, step.matmul,
      step.weight_only ? kernels::OperandQuantization::weight_only : kernels::OperandQuantization::stored);
  out.chip = matmuls.simulated_chip();
  CollectiveRegistry collectives(out);
  // One program per set of expert loads (the expert-parallel ranks whose
  // experts take the same tokens share one), as build_train_program does.
  const std::uint32_t ep = step.parallelism.expert.degree;
  const std::vector<ChipRole> roles =
      ep > 1 ? make_train_layout(exp, step.parallelism, model).roles : std::vector<ChipRole>(exp.pod.devices());
  std::map<std::vector<std::uint64_t>, std::uint32_t> program_of_loads;
  std::vector<std::vector<std::uint32_t>> layer_begin;
  out.pod.program_of.resize(exp.pod.devices());
  for (std::uint32_t c = 0; c < exp.pod.devices(); ++c) {
    const std::uint32_t rank = roles[c].expert;
    auto [at, fresh] = program_of_loads.try_emplace(expert_loads(routing, rank, ep), 0);
    if (fresh) {
      const PassContext ctx{exp, step, model, matmuls, collectives, quantize, &routing, rank, ""};
      hw::Program prog;
      Deps x;
      std::vector<std::uint32_t>& begin = layer_begin.emplace_back();
      for (const models::LayerSpec& layer : model.layers) {
        begin.push_back(static_cast<std::uint32_t>(prog.ops.size()));
        x = LayerPass(ctx, prog, 0, layer, false, "F", x).build().all();
      }
      at->second = out.pod.add_program(std::move(prog));
    }
    out.pod.program_of[c] = at->second;
  }
  return {std::move(out.pod), std::move(out.chip), std::move(layer_begin)};
}

}  // namespace workloads
