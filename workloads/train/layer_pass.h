#pragma once
// One pass (forward or backward) of one layer on one chip: every op after
// the ops its spec names in `after` (the layer's input when none). The
// items of a pass are the layer's matmuls, elementwise ops, exchanges
// (mixture of experts) and ring-attention permutes; each kind has one arm
// (build_item's visitor), and the strategies own what is theirs:
// tensor_parallel.h reduces partial sums (and, with collective matmul,
// chunks their producers and readers), experts.h runs routed experts and
// their all-to-alls, ring_attention.h gives the permutes.
//
// Invariants: an item is built once, after every item it names in `after`
// (a cycle or an unknown name is a std::logic_error: the model spec is
// wrong); a reader of a partial sum waits for its reduction; the pass's
// result is the ops no item of the pass reads, split into the data path
// and the weight gradients.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "hw/program.h"
#include "models/layer_spec.h"
#include "workloads/train/pass_context.h"
#include "workloads/train/ring_attention.h"
#include "workloads/train/tensor_parallel.h"

namespace workloads {

// What one layer's pass leaves: the data path on to the next layer, and the
// weight gradients (backward).
struct PassResult {
  Deps data, weight;
  Deps all() const {
    Deps d = data;
    append(d, weight);
    return d;
  }
};

class LayerPass {
 public:
  // `stage` and `tag` (the task: "F3", "B3", "R3") name its collectives;
  // `ring`: the pass's ring attention permutes (ring_attention.h), which
  // its ops name in `after` as they name each other.
  LayerPass(const PassContext& ctx, hw::Program& prog, std::uint32_t stage, const models::LayerSpec& layer,
            bool backward, std::string tag, Deps input, const std::vector<RingTransfer>& ring = {});

  PassResult build();

 private:
  using Item = std::variant<const models::MatmulSpec*, const models::ElementwiseSpec*, const RingTransfer*,
                            const models::ExchangeSpec*>;
  enum State : char { kNew, kBuilding, kBuilt };

  const std::string& name(std::size_t i) const;
  const std::string& output(std::size_t i) const;
  const std::vector<std::string>& after(std::size_t i) const;
  bool weight(std::size_t i) const;
  bool partial_sum(std::size_t i) const;
  std::uint64_t output_bytes(std::size_t i) const;
  std::size_t lookup(const std::string& n, std::size_t from) const;

  void build_item(std::size_t i);
  // The arms: each builds item i's ops after `deps` into sinks_[i].
  void build_matmul(std::size_t i, const models::MatmulSpec& mm, const Deps& deps, const std::string& label);
  void build_elementwise(std::size_t i, const models::ElementwiseSpec& ew, const Deps& deps, const std::string& label);
  void build_ring(std::size_t i, const RingTransfer& t, const Deps& deps, const std::string& label);
  void build_exchange(std::size_t i, const models::ExchangeSpec& x, const Deps& deps, const std::string& label);

  // The gather item i's output still owes, or -1.
  int owes(std::size_t i) const;
  // What a reader of item i waits for: the item, or the reduction of the
  // partial sums it contributes to.
  Deps ready(std::size_t i);

  const PassContext& ctx_;
  hw::Program& prog_;
  std::uint32_t stage_;
  std::string tag_;
  Deps input_;
  std::vector<Item> items_;
  std::unordered_map<std::string, std::size_t> index_;
  std::vector<State> state_;
  std::vector<char> consumed_;
  std::vector<Deps> sinks_;
  bool sequence_;                          // sequence_split(layer)
  bool routed_;                            // a mixture-of-experts layer over expert-parallel chips
  std::uint64_t block_;                    // its routing
  TensorCollectives tensor_;               // its tensor-parallel collectives
  std::vector<int> owed_;                  // an elementwise item's output: the gather it owes
  std::vector<std::vector<Deps>> chunks_;  // a chunked producer's chunks
};

}  // namespace workloads
