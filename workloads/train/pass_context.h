#pragma once
// What every part of a layer pass and every strategy the builder calls
// reads: the step being built (forward_step.h), the model, the cache of
// matmul kernels, and the registry in which chips that name the same
// collective join the same one. Dependencies are op indices (Deps).
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "hw/bf16.h"
#include "interconnect/collective_spec.h"
#include "kernels/train_kernels.h"
#include "models/model_spec.h"
#include "models/routing.h"
#include "workloads/experiment.h"
#include "workloads/train/forward_step.h"
#include "workloads/train/train_program.h"

namespace workloads {

using Deps = std::vector<std::uint32_t>;

// Adds to `to` the ops of `from` it lacks, in order.
void append(Deps& to, const Deps& from);

// "x,y": mesh axes as collective names spell them.
std::string axes_text(const std::vector<std::string>& axes);

// Which matmuls run in the step's 8-bit format (ForwardStep::matmul, when
// it is not bf16): a linear layer's forward and input-gradient matmuls, as
// training quantizes them, and (inference with an 8-bit KV cache) the
// attention matmuls, whose K and V operands are the cache.
struct QuantizedMatmuls {
  bool linear = true, attention = false;
};
bool quantized(const models::MatmulSpec& mm, const QuantizedMatmuls& q);

// A training step's collective across slices holds the TensorCore's
// scalar unit (no kernel is issued) for host.dcn_sync per step of its
// ring: 2 (n - 1) for an all-reduce, n - 1 for the others, n the slices
// its mesh axes span (docs/calibration.md#dcn-sync).
struct DcnSync {
  std::unordered_map<std::string, std::uint32_t> dcn_axes;  // mesh axis across slices -> its size
  double step_s = 0;
  std::uint64_t hold_ps(interconnect::CollectiveOp op, const std::vector<std::string>& axes) const;
};
DcnSync dcn_sync(const Experiment& exp);

// Chips that name the same collective join the same one: the first chip to
// name it defines it, the others get its index.
class CollectiveRegistry {
 public:
  explicit CollectiveRegistry(TrainProgram& out, DcnSync sync = {}) : out_(out), sync_(std::move(sync)) {}
  std::uint32_t add(const std::string& name, interconnect::CollectiveOp op, std::uint64_t bytes,
                    const std::vector<std::string>& axes, CollectivePurpose purpose,
                    std::uint32_t element_bytes = hw::kBf16Bytes, std::vector<std::uint64_t> pair_elements = {},
                    interconnect::Algorithm algorithm = interconnect::Algorithm::automatic);
  // A collective op on the chip's ICI queue `queue`, of the collective
  // `name` (added as `add` does), after `deps` (and its DCN hold). On a
  // SparseCore queue (hw/sparsecore.h) the collective is offloaded: its
  // reductions and its DCN hold are the SparseCores'.
  std::uint32_t op(hw::Program& prog, const std::string& name, std::uint32_t queue, interconnect::CollectiveOp op,
                   std::uint64_t bytes, const std::vector<std::string>& axes, CollectivePurpose purpose,
                   const Deps& deps, std::uint32_t element_bytes = hw::kBf16Bytes);

 private:
  TrainProgram& out_;
  DcnSync sync_;
  std::unordered_map<std::string, std::uint32_t> by_name_;
};

struct PassContext {
  const Experiment& exp;
  const ForwardStep& step;
  const models::ModelSpec& model;
  kernels::MatmulPrograms& matmuls;
  CollectiveRegistry& collectives;
  QuantizedMatmuls quantize;
  // Mixture of experts: each block's routing (by block index; empty
  // without experts or expert parallelism) and the chip's rank among the
  // expert-parallel chips, whose experts are rank x local .. + local - 1.
  const std::vector<models::LayerRouting>* routing = nullptr;
  std::uint32_t expert_rank = 0;
  // Per-replica input lengths (input.h): " (N tokens)" on the collectives
  // of a replica whose sequences are N tokens instead of model.seq_len, so
  // that its tensor-parallel group joins its own (its bytes are its own);
  // empty otherwise. Collectives over the data axes keep their names.
  std::string tokens_tag;
  std::uint32_t tp() const { return step.parallelism.tensor.degree; }
};

}  // namespace workloads
