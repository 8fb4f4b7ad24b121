#pragma once
// What each instruction of an HLO module asks of a chip (docs/hlo.md):
// the matmuls of its dots and convolutions (FLOPs = 2 x output elements x
// contracted size, padding excluded), the HBM bytes it moves (a fusion: its
// operands and results in HBM, as XLA moves them between HBM and VMEM), the
// vector work of the rest, and its collective; and the executed order of a
// computation with `while` bodies repeated by their trip counts.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "hlo/module.h"

namespace hlo {

// A dot or convolution as a matmul: m x k times k x n, 2 m k n = its FLOPs.
struct Matmul {
  std::uint64_t m = 0, k = 0, n = 0;
  double flops() const { return 2.0 * double(m) * double(k) * double(n); }
};

enum class CollectiveKind { none, all_reduce, all_gather, reduce_scatter, collective_permute, all_to_all };
const char* to_string(CollectiveKind k);

// The cost of one instruction executed once.
struct Cost {
  std::vector<Matmul> matmuls;                      // its dots and convolutions (a fusion's, nested ones too)
  double flops = 0;                                 // the matmuls' FLOPs
  std::uint64_t read_bytes = 0, written_bytes = 0;  // HBM
  // Host memory (S(5)) read and written: a transfer over the host link, its
  // HBM side in read_bytes / written_bytes.
  std::uint64_t host_read_bytes = 0, host_written_bytes = 0;
  std::uint64_t elements = 0;    // vector work: elements of the result ...
  double flops_per_element = 0;  // ... and operations on each
  // A collective: its kind, the bytes NCCL-tests counts (the array reduced,
  // the gathered output, the scattered input, what is sent) and the bytes of
  // an element.
  CollectiveKind collective = CollectiveKind::none;
  std::uint64_t collective_bytes = 0;
  int element_bytes = 4;
  bool free = false;  // no work: parameter, constant, bitcast, tuple, ...
  double bytes() const { return double(read_bytes) + double(written_bytes); }
};

// Costs instructions and reports what it approximated.
class CostModel {
 public:
  // `custom_call_flops`: the FLOPs of custom-calls whose backend_config
  // gives no cost_estimate (a Pallas kernel such as MaxText's splash
  // attention), by instruction name or by its name without XLA's `.N`
  // suffix (every instance); workload.custom_call_flops in kind: hlo.
  explicit CostModel(const Module& module, std::map<std::string, double> custom_call_flops = {})
      : module_(module), custom_call_flops_(std::move(custom_call_flops)) {}

  Cost cost(const Computation& comp, const Instruction& in);

  // The instructions a computation executes, in order: while bodies
  // repeated by their trip counts, calls inlined, a conditional's costliest
  // branch, async wrappers' wrapped instruction. Each entry names the
  // instruction and the computation it belongs to.
  struct Step {
    const Instruction* instruction = nullptr;
    const Computation* computation = nullptr;
    // An instruction started by an async-start (its wrapped op): the
    // start's position in the schedule; -1 otherwise.
    long started_by = -1;
    // The thread it runs on: "main" (the TensorCore) or, for a computation
    // printed with execution_thread= or wrapped by an async op with
    // async_execution_thread=, that thread ("sparsecore").
    std::string thread = "main";
  };
  std::vector<Step> schedule(const Computation& comp);

  // A while loop's trip count: backend_config's known_trip_count, else its
  // condition's `compare(induction variable, constant)` with the variable's
  // start (a constant in the loop's init tuple, else 0) and its step (the
  // body's `add(variable, constant)`, else 1); nullopt if neither.
  std::optional<std::int64_t> trip_count(const Instruction& loop, const Computation* parent = nullptr) const;

  // What was approximated, one line each: unknown opcodes with their
  // counts, custom-calls costed by their shapes, loops of unknown trip count.
  std::vector<std::string> approximations() const;

  // The collective an instruction starts or performs (the `-start` or sync
  // op, or an async-start wrapping one), with the instruction that carries
  // its attributes.
  const Instruction* collective_of(const Instruction& in) const;
  static CollectiveKind collective_kind(const std::string& opcode);

 private:
  void expand(const Computation& comp, std::vector<Step>& out, int depth);
  Cost fusion_cost(const Computation& comp, const Instruction& in);
  std::uint64_t operand_bytes(const Computation& comp, const Instruction& in) const;
  void host_transfer(const Computation& comp, const Instruction& in, Cost& c) const;
  void note(const Instruction& in, const std::string& what) { notes_[what].insert(in.name); }

  const Module& module_;
  std::map<std::string, double> custom_call_flops_;
  std::map<std::string, std::set<std::string>> notes_;  // what -> the instructions
};

// The largest count of a kernel's work (FLOPs, bytes) tpusim takes, from a
// cost_estimate or workload.custom_call_flops: below 2^62, so that the
// casts to 64-bit integers cannot wrap (flops: -1e30 once ran as a number).
constexpr double kMaxKernelCount = 4.6e18;

// An instruction's name without XLA's `.N` suffix ("splash_mha_fwd.3" ->
// "splash_mha_fwd"); the name itself when it has none.
std::string base_name(const std::string& name);

// FLOPs of a dot or convolution as a matmul (m, k, n); throws
// sim::ConfigError at the instruction when its attributes do not fit its
// operands' shapes.
Matmul matmul_of(const Module& module, const Computation& comp, const Instruction& in);

}  // namespace hlo
