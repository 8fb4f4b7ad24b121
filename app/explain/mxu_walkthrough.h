#pragma once
// Text pictures of the PE array, for teaching (`tpusim explain mxu --walk`).
// Meant for small arrays (up to 16 x 16).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hw/bf16.h"
#include "hw/mxu_config.h"
#include "hw/mxu_state_view.h"
#include "hw/mxu_timing.h"

namespace explain {

// Draws, for cycle v.cycle: what the feeder and the weight loader do, and
// three grids over the PEs: the weights in both banks (the one the PE's
// activation selects marked *), the activation wavefront (value and
// tile:vector, '.' for a bubble) and the psum each PE produces.
std::string render_walkthrough_frame(const hw::ArrayStateView& v);

// ---------------------------------------------------------------------------
// The whole walk-through of one op (`tpusim explain mxu --walk`): operands,
// one frame per cycle, what left the bottom edge, and the check against the
// host.

// It prints every PE every cycle and the operands in full.
constexpr std::uint32_t kWalkthroughMaxSide = 16;  // rows, cols
constexpr std::uint64_t kWalkthroughMaxDim = 32;   // m, k, n
// Arrays up to this side also get compact frames: 2 x rows + 7 lines of at
// most 80 columns, so a frame and the pager's prompt fit an 80x24 terminal.
constexpr std::uint32_t kCompactMaxSide = 8;
constexpr std::size_t kCompactWidth = 80;

// One cycle of the walk-through as numbers, for pages that draw it
// (`explain mxu --html`). PE(r,c) at r * cols + c; NaN where nothing is (a
// bubble, a row with nothing entering, a Y entry nothing has reached yet).
struct MxuFrameState {
  std::string feeder, loader;          // as in the full frame's head line
  std::vector<float> weights[2];       // bank b
  std::vector<float> activations;      // the value each PE multiplies, NaN = bubble
  std::vector<float> psums;            // the psum each PE produces, NaN = bubble
  std::vector<std::int64_t> tiles;     // the tile of each PE's activation, -1 = bubble
  std::vector<std::uint64_t> vectors;  // its vector (row of A)
  std::vector<std::uint8_t> banks;     // the bank the activation selects
  std::vector<double> next_in;         // rows x 3: what enters row r in +3, +2, +1 cycles
  std::vector<std::string> bottom;     // what left the bottom edge ("Y[i][j] += v")
  std::vector<double> y;               // m x n, summed from the bottom edge so far
};

struct MxuWalkthrough {
  hw::MxuConfig config;
  hw::MxuShape shape;
  std::vector<hw::bf16> a, b;               // m x k and k x n: small integers, so every sum is exact
  std::vector<hw::MxuTileTiming> schedule;  // per tile: L_j, s_j, E_j (the recurrence)
  std::uint64_t cycles = 0;                 // counted by the PE engine
  std::string intro;                        // how to read a frame, the tiles and their schedule
  std::vector<std::string> frames;          // one per cycle, 0 .. cycles-1
  // One per cycle for arrays up to kCompactMaxSide (empty otherwise): the
  // same state in 80x24, cells coloured with ANSI SGR codes (strip_colour
  // for a terminal without colour). Y is summarised; the full frame has it.
  std::vector<std::string> compact_frames;
  std::vector<MxuFrameState> states;  // one per cycle: the full frame's numbers
  std::vector<float> y;               // m x n, the PE engine's result
  std::vector<float> collected;       // m x n, summed from the bottom edge as the frames show it
  std::vector<double> reference;      // m x n, host GEMM in double
  bool matches_reference = false;     // y == collected == reference, every entry
  std::string summary;                // A, B, Y and the verdict
};

// `text` without its ANSI SGR sequences (ESC [ ... m).
std::string strip_colour(const std::string& text);

// Operands for teaching runs (walk-through, `explain mxu --vcd`): A (m x k)
// and B (k x n), row-major, seeded integers in [-3, 3]: every partial sum is
// an integer of magnitude at most 9k, exact in FP32 (k < 2^24 / 9) whatever
// the order of summation, so the array must match the host exactly.
void mxu_teaching_operands(const hw::MxuShape& shape, std::uint64_t seed, std::vector<hw::bf16>& a,
                           std::vector<hw::bf16>& b);

// Plain host GEMM in double (exact for the teaching operands): m x n.
std::vector<double> host_gemm(const hw::MxuShape& shape, const std::vector<hw::bf16>& a,
                              const std::vector<hw::bf16>& b);

// Runs the PE engine on mxu_teaching_operands in [-3, 3] and draws every
// cycle.
// Throws sim::ConfigError on a bad config or shape, or beyond the limits
// above ("command line: --walk: ...").
MxuWalkthrough mxu_walkthrough(const hw::MxuConfig& config, const hw::MxuShape& shape, std::uint64_t seed);

// The same on the student's own A (m x k) and B (k x n), row-major. Values
// must be integers in [-kOwnOperandMax, kOwnOperandMax]: exact in BF16 and
// every FP32 partial sum exact (99 * 99 * 32 < 2^24), so the array must
// match the host exactly.
constexpr int kOwnOperandMax = 99;
MxuWalkthrough mxu_walkthrough(const hw::MxuConfig& config, const hw::MxuShape& shape, std::vector<hw::bf16> a,
                               std::vector<hw::bf16> b);

// Row-major matrix as text: a title line, then rows labelled
// `row_label`0.., columns `col_label`0.. ("%g" values, '.' for NaN).
std::string render_matrix(const std::string& title, std::size_t rows, std::size_t cols,
                          const std::function<double(std::size_t, std::size_t)>& value,
                          const std::string& row_label = "i", const std::string& col_label = "j");

}  // namespace explain
