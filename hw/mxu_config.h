#pragma once
// What an MXU is (array size, weight buffering) and what one MXU op asks of
// it. Shared by the closed-form timing, the PE engine and the SystemC module.
#include <cstdint>

namespace sim {
template <class E>
class EnumNames;
}

namespace hw {

// How an MXU op is simulated: `tile` computes its cycles in closed form and
// advances time once; `pe` steps every processing element every cycle.
// How finely a chip is simulated (docs/architecture.md, "Timing model"):
// kernel: a whole kernel is one op, a flow on the chip's fluid HBM
// (hw/kernel_op.h); tile: every block's DMA and MXU ops, an MXU op in
// closed form; pe: every processing element every cycle. An MXU runs its
// own ops as at tile fidelity when the chip is at kernel fidelity.
enum class Fidelity { kernel, tile, pe };
const sim::EnumNames<Fidelity>& fidelity_names();  // the YAML spellings: kernel, tile, pe
const char* to_string(Fidelity f);

// How an op's weight tiles (SCALE-Sim's "folds") follow each other:
// overlapped: tile j's weights load while tile j-1 still streams and drains
// (the recurrence of mxu_timing.h); fold_serial: tile j's weight load starts
// only once tile j-1 has left the array entirely, padded columns included,
// so an op of F tiles takes F x (2R + C + m - 2) cycles: the stall-free
// convention of SCALE-Sim (Samajdar et al., "A Systematic Methodology for
// Characterizing Scalability of DNN Accelerators using SCALE-Sim", ISPASS
// 2020, section III; docs/mxu.md, "Fold-serial schedule").
enum class MxuSchedule { overlapped, fold_serial };
const sim::EnumNames<MxuSchedule>& mxu_schedule_names();  // the YAML spellings
const char* to_string(MxuSchedule s);

// What stays in the PEs while the other operands stream through
// (docs/mxu.md, "Dataflows"; the names are SCALE-Sim's Dataflow field):
// ws: weight-stationary, a tile of B (R rows of k x C columns of n) sits in
// the array and A's rows stream; os: output-stationary, a tile of Y (R rows
// of m x C columns of n) accumulates in place while A and B stream over k;
// is: input-stationary, a tile of A^T (R rows of k x C rows of m) sits in
// the array and B's columns stream.
enum class MxuDataflow { ws, os, is };
const sim::EnumNames<MxuDataflow>& mxu_dataflow_names();  // the YAML spellings: ws, os, is
const char* to_string(MxuDataflow d);

// R x C systolic array, weight-stationary unless `dataflow` says otherwise.
// ws: rows = R = contraction (k) extent of a weight tile, cols = C = output
// columns (n) of a tile (is: C = rows of A; os: R rows of m, C columns of n
// of an output tile). 128 x 128 on TPU
// v2-v5 (docs/reference/tpu-specs.md#common.mxu_macs_per_cycle = 16384 = 128 x 128),
// 256 x 256 on v6e (common.mxu_size_v6e).
struct MxuConfig {
  std::uint32_t rows = 128;
  std::uint32_t cols = 128;
  // Two weight registers per PE: the next tile loads while the current one
  // streams.
  bool double_buffer = true;
  MxuSchedule schedule = MxuSchedule::overlapped;
  MxuDataflow dataflow = MxuDataflow::ws;
};

// One MXU op: Y (m x n, FP32) = A (m x k, BF16 activations, streamed) times
// B (k x n, BF16 weights, stationary).
struct MxuShape {
  std::uint64_t m = 0, k = 0, n = 0;
};

// Bytes one op moves between VMEM and the MXU (docs/mxu.md#energy): its
// BF16 operands read once (2 (m k + k n)) and its FP32 accumulators read and
// written once (8 m n), whatever the array's tiling.
inline double mxu_vmem_bytes(const MxuShape& s) {
  return 2.0 * (double(s.m) * double(s.k) + double(s.k) * double(s.n)) + 8.0 * double(s.m) * double(s.n);
}

// Range limits of the model (rows, cols in [2, 256]; m, k, n >= 1).
// Throws sim::ConfigError naming the offending key (mxu.rows, mxu.m, ...).
void validate(const MxuConfig& config);
void validate(const MxuShape& shape);

// Weight tiles of an op, processed in the order `for nt: for kt:`; tile j has
// nt = j / k_tiles, kt = j % k_tiles. Ragged last tiles are padded with zeros
// to the full array (docs/reference/tpu-specs.md#common.padding_rule).
// An os array tiles Y instead: m_tiles of R rows of m (the last with
// last_m_rows) x n_tiles, `for nt: for mt:`.
struct MxuTiling {
  std::uint64_t k_tiles = 0, n_tiles = 0;
  std::uint64_t last_n_cols = 0;  // useful columns of the last n-tile (1..C)
  std::uint64_t m_tiles = 0;      // os: tiles of R rows of m
  std::uint64_t last_m_rows = 0;  // os: useful rows of the last m-tile (1..R)
  std::uint64_t count() const { return k_tiles * n_tiles; }
};
MxuTiling mxu_tiling(const MxuConfig& config, const MxuShape& shape);

}  // namespace hw
