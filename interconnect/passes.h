#pragma once
// The passes collective algorithms are built from. Positions are indices
// into a shared list of chips (a ring, a line along one axis, a chain);
// direction -1 runs the same pass on the mirrored list, so a chip's final
// chunk is the same whichever way the data flows.
#include <memory>
#include <vector>

#include "interconnect/schedule.h"

namespace interconnect {

using ChipList = std::shared_ptr<const std::vector<int>>;

enum class PassKind { reduce_scatter, all_gather };

// Ring and line passes name their physical axis in reports; kGroupRing
// marks a ring through a whole group (a snake over several axes).
constexpr int kGroupRing = -1;

// Ring over n chips (the last joined to the first), region cut into n
// chunks; n - 1 steps. Reduce-scatter: step k sends chunk p-k-1 and reduces
// chunk p-k-2 (p = position, in the direction of travel), ending with chunk
// p complete. All-gather: starts owning chunk p; step k forwards chunk p-k
// and receives chunk p-k-1.
class RingPass : public Pass {
 public:
  RingPass(PassKind kind, ChipList ring, int position, int dir, Region region, int axis);
  int steps() const override;
  void step(int k, Step& out) const override;
  std::string describe() const override;

 private:
  Transfer chunk(int peer, int virtual_chunk, int step) const;

  PassKind kind_;
  ChipList ring_;
  int n_, pos_, dir_, axis_;
  Region region_;
  std::uint64_t quotient_, remainder_;  // region_.count / n_, % n_ (divisions are slow on the hot path)
  int next_, prev_;                     // neighbours in the direction of travel
};

// Line over n chips with no link from the last to the first (a mesh axis).
// Direction +1 carries data towards higher positions, -1 the other way; the
// two passes of a phase together do the whole job. Reduce-scatter: the chip
// at p forwards partial sums (over chips 0..p) of the chunks q > p, farthest
// first, and receives its own chunk's partial from below; with the mirror
// pass, chunk p ends as the sum over all chips. All-gather: chip p forwards
// chunks p, p-1, ..., 0 upwards as they arrive.
class LinePass : public Pass {
 public:
  LinePass(PassKind kind, ChipList line, int position, int dir, Region region, int axis);
  int steps() const override;
  void step(int k, Step& out) const override;
  std::string describe() const override;

 private:
  int virtual_pos() const { return dir_ > 0 ? pos_ : n_ - 1 - pos_; }
  std::uint32_t actual_chunk(int c) const { return static_cast<std::uint32_t>(dir_ > 0 ? c : n_ - 1 - c); }
  PassKind kind_;
  ChipList line_;
  int n_, pos_, dir_, axis_;
  Region region_;
};

// Pipelined chain for broadcast: chain[0] (the root) sends the region in
// `chunks` pieces to chain[1], which forwards each piece as soon as it has
// it, and so on to the end of the chain.
class ChainPass : public Pass {
 public:
  ChainPass(ChipList chain, int position, Region region, int chunks);
  int steps() const override;
  void step(int k, Step& out) const override;
  std::string describe() const override;

 private:
  ChipList chain_;
  int n_, pos_;
  Region region_;
  int chunks_;
};

// Steps written out in full (all-to-all, permute).
class ListPass : public Pass {
 public:
  ListPass(std::vector<Step> steps, std::string label);
  int steps() const override { return static_cast<int>(steps_.size()); }
  void step(int k, Step& out) const override { out = steps_[k]; }
  std::string describe() const override { return label_; }

 private:
  std::vector<Step> steps_;
  std::string label_;
};

}  // namespace interconnect
