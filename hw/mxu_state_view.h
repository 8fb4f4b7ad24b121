#pragma once
// Read-only view of the PE array during one cycle, handed to a per-cycle
// observer of the PE engine (teaching walk-through, VCD). Pointers are valid
// only inside the observer call.
//
// The view shows what every PE did during cycle `cycle`: the activation it
// received (latched into its activation register at the end of the cycle),
// the weight it multiplied by, and the partial sum it produced (latched into
// its psum register at the end of the cycle). Weight latches that happen at
// the end of this cycle are not yet visible.
#include <cstddef>
#include <cstdint>

namespace hw {

// Which activation vector a PE holds. Every PE on an anti-diagonal r + c
// holds elements of the same vector (the skew), so slots are kept by
// "age" = r + c, the cycles since the feeder injected that vector.
struct MxuVectorSlot {
  std::int64_t tile = -1;    // -1: a bubble (no valid activation)
  std::uint64_t vector = 0;  // row i of A within the tile's stream
};

// A weight tile whose column staging chains are shifting this cycle.
struct MxuWeightLoad {
  std::uint64_t tile = 0;
  std::uint64_t start_cycle = 0;  // L_j: column c shifts in L_j+c .. L_j+c+R-1
  unsigned bank = 0;
};

struct ArrayStateView {
  std::uint64_t cycle = 0;
  std::uint32_t rows = 0, cols = 0;
  bool double_buffer = true;

  const float* activations = nullptr;  // PE(r,c): activations[r * activation_stride + c]
  std::size_t activation_stride = 0;
  const float* psums = nullptr;                  // PE(r,c): psums[r * cols + c]
  const float* weights[2] = {nullptr, nullptr};  // bank b, PE(r,c): weights[b][r * cols + c]
  const MxuVectorSlot* slots_by_age = nullptr;   // rows + cols - 1 entries

  std::int64_t injected_tile = -1;  // tile whose vector the feeder injected this cycle
  std::uint64_t injected_vector = 0;
  const MxuWeightLoad* loads = nullptr;
  std::size_t load_count = 0;

  const MxuVectorSlot& slot(std::uint32_t r, std::uint32_t c) const { return slots_by_age[r + c]; }
  bool valid(std::uint32_t r, std::uint32_t c) const { return slot(r, c).tile >= 0; }
  // The bank the activation at PE(r,c) selects (bank 0 for a bubble).
  unsigned bank(std::uint32_t r, std::uint32_t c) const {
    return double_buffer && valid(r, c) ? static_cast<unsigned>(slot(r, c).tile % 2) : 0u;
  }
  float activation(std::uint32_t r, std::uint32_t c) const { return activations[r * activation_stride + c]; }
  float psum(std::uint32_t r, std::uint32_t c) const { return psums[r * cols + c]; }
  float weight(unsigned b, std::uint32_t r, std::uint32_t c) const { return weights[b][r * cols + c]; }
  float active_weight(std::uint32_t r, std::uint32_t c) const { return weight(bank(r, c), r, c); }
};

}  // namespace hw
