#pragma once
// A collective as a schedule per chip. Each chip runs independent streams;
// a stream is a sequence of phases; a phase runs its passes concurrently and
// ends when all of them have; a pass is a sequence of steps, generated on
// demand so a 1024-chip ring costs no memory per step. A step's sends and
// receives run concurrently and the next step starts when all are done
// (a send is done when its last byte left the chip, a receive when its data
// is in the buffer, reduced if the step reduces).
//
// Offsets and counts are in elements of the stream's logical buffer, which
// the stream's LayoutMap places in the chip's physical buffer (only
// functional runs look at positions; timing needs only counts).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace interconnect {

struct Transfer {
  int peer = 0;           // chip at the other end
  std::uint32_t tag = 0;  // equal on both ends; unique per peer pair within a pass
  std::uint64_t offset = 0;
  std::uint64_t count = 0;
};

struct Step {
  std::vector<Transfer> sends;
  std::vector<Transfer> recvs;
  bool reduce = false;  // receives add into the buffer (else they overwrite)
  void clear() {
    sends.clear();
    recvs.clear();
    reduce = false;
  }
};

class Pass {
 public:
  virtual ~Pass() = default;
  virtual int steps() const = 0;
  virtual void step(int k, Step& out) const = 0;  // out is cleared by the caller
  virtual std::string describe() const = 0;       // for deadlock reports
};

// A contiguous run of logical elements, cut into near-equal chunks: the
// first count % n chunks hold one element more.
struct Region {
  std::uint64_t offset = 0;
  std::uint64_t count = 0;
  Region chunk(std::uint64_t i, std::uint64_t n) const {
    const std::uint64_t q = count / n, r = count % n;
    return {offset + i * q + (i < r ? i : r), q + (i < r ? 1 : 0)};
  }
};

// Logical element i of a stream sits at base + i (block == 0), or in block
// i / block at blocks[i / block] + i % block.
struct LayoutMap {
  std::uint64_t base = 0;
  std::uint64_t block = 0;
  std::shared_ptr<const std::vector<std::uint64_t>> blocks;

  // Calls f(physical_offset, length) for the physical runs of a logical range.
  template <class F>
  void for_each_run(std::uint64_t offset, std::uint64_t count, F&& f) const {
    if (block == 0) {
      if (count) f(base + offset, count);
      return;
    }
    while (count > 0) {
      const std::uint64_t b = offset / block, within = offset % block;
      const std::uint64_t len = std::min(count, block - within);
      f((*blocks)[b] + within, len);
      offset += len;
      count -= len;
    }
  }
};

// Passes are immutable once planned, so copies of a plan share them.
struct Phase {
  std::vector<std::shared_ptr<const Pass>> passes;
};

struct Stream {
  LayoutMap layout;
  std::vector<Phase> phases;
};

struct ChipSchedule {
  std::vector<Stream> streams;

  // Steps over all streams, phases and passes, without generating them.
  std::uint64_t step_count() const {
    std::uint64_t n = 0;
    for (const Stream& s : streams)
      for (const Phase& ph : s.phases)
        for (const auto& pass : ph.passes) n += static_cast<std::uint64_t>(pass->steps());
    return n;
  }
  // Calls f(step) for each step of each pass, stream by stream, phase by
  // phase (the order a chip's streams list them, not the order they run).
  template <class F>
  void for_each_step(F&& f) const {
    Step step;
    for (const Stream& s : streams)
      for (const Phase& ph : s.phases)
        for (const auto& pass : ph.passes)
          for (int k = 0; k < pass->steps(); ++k) {
            step.clear();
            pass->step(k, step);
            f(static_cast<const Step&>(step));
          }
  }
};

}  // namespace interconnect
