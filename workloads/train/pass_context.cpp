#include "workloads/train/pass_context.h"

#include <algorithm>
#include <cmath>

#include "hw/sparsecore.h"
#include "sim/units.h"

namespace workloads {

void append(Deps& to, const Deps& from) {
  for (auto d : from)
    if (std::find(to.begin(), to.end(), d) == to.end()) to.push_back(d);
}

std::string axes_text(const std::vector<std::string>& axes) {
  std::string s;
  for (const auto& a : axes) s += (s.empty() ? "" : ",") + a;
  return s;
}

// The matmuls the 8-bit format applies to: a linear layer's forward
// (activations x weights) and input gradient (dY x W^T), as MaxText's int8
// training quantizes them (AQT's fwd and dlhs at 8 bits; its drhs, the
// weight gradient X^T dY, stays bf16 unless quantization_local_shard_count
// is set: docs/calibration.md#number-formats). Attention's activation x
// activation matmuls stay bf16 in training; inference (forward_program.h)
// picks which of the two kinds run in its 8-bit format: the linear ones
// (weights) and the attention ones (KV cache). A mixture of experts'
// one-hot dispatch and combine einsums stay bf16 (MaxText's AQT einsum
// would take them to 8 bits too; no published run combines the two).
bool quantized(const models::MatmulSpec& mm, const QuantizedMatmuls& q) {
  if (mm.kind == models::MatmulKind::dispatch) return false;
  if (mm.kind != models::MatmulKind::linear) return q.attention;
  return q.linear && !mm.weight.empty() && mm.pass != models::Pass::backward_weight;
}

DcnSync dcn_sync(const Experiment& exp) {
  DcnSync s;
  s.step_s = exp.chip.host.dcn_sync;
  for (const auto& [axis, size] : exp.mesh)
    if (std::find(exp.pod.dcn_axes.begin(), exp.pod.dcn_axes.end(), axis) != exp.pod.dcn_axes.end())
      s.dcn_axes[axis] = size;
  return s;
}

std::uint64_t DcnSync::hold_ps(interconnect::CollectiveOp op, const std::vector<std::string>& axes) const {
  std::uint64_t n = 1;
  for (const auto& a : axes)
    if (auto it = dcn_axes.find(a); it != dcn_axes.end()) n *= it->second;
  if (step_s <= 0 || n <= 1) return 0;
  const std::uint64_t steps = (op == interconnect::CollectiveOp::all_reduce ? 2 : 1) * (n - 1);
  return static_cast<std::uint64_t>(std::llround(double(steps) * step_s * sim::kPsPerSecond));
}

std::uint32_t CollectiveRegistry::add(const std::string& name, interconnect::CollectiveOp op, std::uint64_t bytes,
                                      const std::vector<std::string>& axes, CollectivePurpose purpose,
                                      std::uint32_t element_bytes, std::vector<std::uint64_t> pair_elements,
                                      interconnect::Algorithm algorithm) {
  auto [it, fresh] = by_name_.emplace(name, static_cast<std::uint32_t>(out_.pod.collectives.size()));
  if (fresh) {
    interconnect::CollectiveSpec c;
    c.op = op;
    c.bytes = bytes;
    c.element_bytes = static_cast<int>(element_bytes);  // BF16 activations; weights and gradients as stored
    c.axes = axes;
    c.pair_elements = std::move(pair_elements);
    c.algorithm = algorithm;
    out_.pod.collectives.push_back(std::move(c));
    out_.pod.collective_names.push_back(name);
    out_.collective_purpose.push_back(purpose);
  }
  return it->second;
}

std::uint32_t CollectiveRegistry::op(hw::Program& prog, const std::string& name, std::uint32_t queue,
                                     interconnect::CollectiveOp op, std::uint64_t bytes,
                                     const std::vector<std::string>& axes, CollectivePurpose purpose, const Deps& deps,
                                     std::uint32_t element_bytes) {
  const std::uint32_t c = add(name, op, bytes, axes, purpose, element_bytes);
  // Offloaded to the SparseCores: they reduce it, and they wait on its
  // handshake across slices, not the TensorCore's scalar unit.
  const bool sparsecore = hw::is_sparsecore_ici_queue(queue);
  out_.pod.collectives[c].sparsecore = sparsecore;
  const std::uint64_t hold = sync_.hold_ps(op, axes);
  if (sparsecore) return prog.add({name, {hw::EngineKind::ici, queue}, hw::CommOp{c, hold}, deps, 0});
  Deps after = deps;
  if (hold) after = {prog.add({name + " DCN sync", {hw::EngineKind::scalar, 0}, hw::LaunchOp{hold}, deps, 0})};
  return prog.add({name, {hw::EngineKind::ici, queue}, hw::CommOp{c}, after, 0});
}

}  // namespace workloads
