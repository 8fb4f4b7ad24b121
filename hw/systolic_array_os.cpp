#include "hw/systolic_array_os.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "hw/subnormal_flush.h"

namespace hw {

namespace {

// Cycle-by-cycle hardware rules (docs/mxu.md, "Output-stationary"):
//  - Output tile f covers Y rows i0 .. i0+R-1 and columns j0 .. j0+C-1,
//    tiles in the order `for nt: for mt:` (SCALE-Sim's fold order).
//  - The feeder injects one step (f, q), q = 0 .. k-1, per cycle: A[i0+r][q]
//    enters row r at the left edge r cycles later, B[q][j0+c] enters column c
//    at the top edge c cycles later. A values move one PE right per cycle, B
//    values one PE down, so step (f, q) meets in PE(r,c) at injection + r + c.
//  - PE(r,c), every cycle: a_reg <- a_in, b_reg <- b_in, and when a step is
//    there, acc <- (q == 0 ? +0.0 : acc) + a_in * b_in. After its q = k-1 MAC
//    the PE drives the sum onto its column's output bus, which the bottom
//    edge reads at the end of the cycle; the bus carries one sum per cycle.
//  - Overlapped: the feeder starts tile f at least R cycles after tile f-1
//    (and after its last step), so a column's R sums of tile f-1 have used
//    the bus before the first sum of tile f arrives; the engine checks every
//    bus cycle. Fold-serial: tile f starts once tile f-1 has left the
//    array, padded PEs included.
//
// A row's a registers form a delay line (a window of C floats moving one
// float down a longer buffer per cycle, as in systolic_array.cpp); the
// columns' b registers likewise form one delay line of rows, a window of R
// rows of C floats moving one row up per cycle.

// Cycles without any state change after which the engine gives up: every
// injected step reaches the far corner within R + C cycles.
constexpr std::uint64_t kStallSlack = 2;

struct Step {
  std::int64_t tile = -1;  // -1: bubble
  std::uint64_t q = 0;
};

// PEs on anti-diagonals lo .. hi (age = r + c) hold steps of one tile; the
// step at age lo is q_lo, at age lo + d it is q_lo - d.
struct Segment {
  std::uint64_t lo, hi;
  std::int64_t tile;
  std::uint64_t q_lo;
};

class OsEngine {
 public:
  OsEngine(const MxuConfig& config, const MxuShape& shape, const bf16* a, const bf16* b)
      : R_(config.rows),
        C_(config.cols),
        m_(shape.m),
        k_(shape.k),
        n_(shape.n),
        serial_(config.schedule == MxuSchedule::fold_serial),
        m_tiles_(mxu_tiling(config, shape).m_tiles),
        tiles_(m_tiles_ * mxu_tiling(config, shape).n_tiles),
        a_(a),
        b_(b) {
    history_ = std::max<std::size_t>(256, std::max(R_, C_));
    a_stride_ = history_ + C_;
    a_lines_.assign(R_ * a_stride_, 0.0f);
    a_pos_ = history_;
    b_lines_.assign((history_ + R_) * C_, 0.0f);
    b_pos_ = history_;
    acc_.assign(R_ * C_, 0.0f);
    injected_.assign(R_ + C_ - 1, Step{});
    by_age_.assign(R_ + C_ - 1, Step{});
    bus_cycle_.assign(C_, ~std::uint64_t{0});
    y_.assign(m_ * n_, 0.0f);
  }

  std::uint64_t run(std::vector<float>& y) {
    SubnormalFlush flush_mode;
    for (std::uint64_t t = 0;; ++t) {
      feed(t);
      find_ages(t);
      find_segments();
      shift();
      compute(t);
      if (collected_ == m_ * n_ && (!serial_ || array_empty_after(t))) {
        y = std::move(y_);
        return t + 1;
      }
      if (t - last_progress_ > R_ + C_ + kStallSlack) {
        throw std::logic_error("systolic array (os): no progress for R + C cycles");
      }
    }
  }

 private:
  // by_age_[age]: the step injected `age` cycles before cycle t, which
  // every PE with r + c = age holds (ages 0 .. R+C-2).
  void find_ages(std::uint64_t t) {
    const std::uint64_t w = injected_.size();
    for (std::uint64_t age = 0; age < w; ++age) by_age_[age] = age > t ? Step{} : injected_[(t - age) % w];
  }

  void feed(std::uint64_t t) {
    Step s;
    if (fed_ == 0 && feed_tile_ < tiles_) {
      const bool bus_free = feed_tile_ == 0 || t >= tile_start_ + R_;
      if (serial_ ? (feed_tile_ == 0 || array_empty_after(t - 1)) : bus_free) tile_start_ = t;
    }
    if (feed_tile_ < tiles_ && (fed_ > 0 || tile_start_ == t)) {
      s = Step{static_cast<std::int64_t>(feed_tile_), fed_};
      last_injection_ = t;
      last_progress_ = t;
      if (++fed_ == k_) {
        ++feed_tile_;
        fed_ = 0;
      }
    }
    injected_[t % injected_.size()] = s;
  }

  // Whether by the end of cycle t the newest step has passed PE(R-1, C-1).
  bool array_empty_after(std::uint64_t t) const { return last_injection_ + (R_ + C_ - 2) <= t; }

  std::size_t row0(std::uint64_t tile) const { return (tile % m_tiles_) * R_; }
  std::size_t col0(std::uint64_t tile) const { return (tile / m_tiles_) * C_; }

  // a_in, b_in of every PE: the left and top edges take the steps injected
  // r (row r) and c (column c) cycles ago; bubbles and padding carry zeros.
  void shift() {
    if (a_pos_ == 0) {
      for (std::size_t r = 0; r < R_; ++r) {
        float* line = a_lines_.data() + r * a_stride_;
        std::memmove(line + history_, line, (C_ - 1) * sizeof(float));
      }
      a_pos_ = history_;
    }
    if (b_pos_ == 0) {
      std::memmove(b_lines_.data() + history_ * C_, b_lines_.data(), (R_ - 1) * C_ * sizeof(float));
      b_pos_ = history_;
    }
    --a_pos_;
    --b_pos_;
    for (std::size_t r = 0; r < R_; ++r) {
      const Step& s = by_age_[r];
      const bool real = s.tile >= 0 && row0(s.tile) + r < m_;
      a_lines_[r * a_stride_ + a_pos_] = real ? a_[(row0(s.tile) + r) * k_ + s.q].to_float() : 0.0f;
    }
    float* top = b_lines_.data() + b_pos_ * C_;
    for (std::size_t c = 0; c < C_; ++c) {
      const Step& s = by_age_[c];
      const bool real = s.tile >= 0 && col0(s.tile) + c < n_;
      top[c] = real ? b_[s.q * n_ + col0(s.tile) + c].to_float() : 0.0f;
    }
  }

  // Runs of consecutive ages holding steps of one tile, newest first (a
  // tile's steps are injected on consecutive cycles): every PE of a run
  // accumulates, the one at step 0 restarts from +0.0, and the one at step
  // k-1 (the run's newest, when the tile is complete) outputs.
  void find_segments() {
    segments_.clear();
    for (std::uint64_t age = 0; age < by_age_.size(); ++age) {
      const Step& s = by_age_[age];
      if (s.tile < 0) continue;
      if (!segments_.empty() && segments_.back().tile == s.tile && segments_.back().hi + 1 == age) {
        segments_.back().hi = age;
      } else {
        segments_.push_back({age, age, s.tile, s.q});
      }
    }
  }

  void compute(std::uint64_t t) {
    for (std::size_t r = 0; r < R_; ++r) {
      const float* a = a_lines_.data() + r * a_stride_ + a_pos_;
      const float* b = b_lines_.data() + (b_pos_ + r) * C_;
      float* acc = acc_.data() + r * C_;
      for (const Segment& seg : segments_) {
        if (seg.lo > r + C_ - 1) break;
        if (seg.hi < r) continue;
        const std::size_t lo = std::max<std::uint64_t>(seg.lo, r) - r;
        const std::size_t hi = std::min<std::uint64_t>(seg.hi, r + C_ - 1) - r;
        accumulate(acc + lo, a + lo, b + lo, hi - lo + 1);
        const std::uint64_t first = seg.lo + seg.q_lo;  // the age at step 0
        if (first <= seg.hi && first >= r && first - r < C_) acc[first - r] = mac(0.0f, a[first - r], b[first - r]);
        if (seg.q_lo + 1 == k_ && seg.lo >= r) output(t, seg.tile, r, seg.lo - r, acc[seg.lo - r]);
      }
    }
  }

  static float mac(float base, float a, float b) {
    if constexpr (kFpuFlushesSubnormals) {
      return base + a * b;
    } else {
      return mxu_add(base, mxu_mul(bf16::from_float(a), bf16::from_float(b)));
    }
  }

  // acc[i] = acc[i] + a[i] * b[i] by the MXU's rule.
  static void accumulate(float* acc, const float* __restrict a, const float* __restrict b, std::size_t n) {
    if constexpr (kFpuFlushesSubnormals) {
      for (std::size_t i = 0; i < n; ++i) acc[i] = acc[i] + a[i] * b[i];
    } else {
      for (std::size_t i = 0; i < n; ++i) acc[i] = mac(acc[i], a[i], b[i]);
    }
  }

  // PE(r,c) drives its finished sum onto column c's bus; the bottom edge
  // keeps the sums of real (unpadded) outputs.
  void output(std::uint64_t t, std::int64_t tile, std::size_t r, std::size_t c, float sum) {
    if (bus_cycle_[c] == t) throw std::logic_error("systolic array (os): two sums on one column bus in one cycle");
    bus_cycle_[c] = t;
    const std::size_t i = row0(tile) + r, j = col0(tile) + c;
    if (i < m_ && j < n_) {
      y_[i * n_ + j] = sum;
      ++collected_;
    }
    last_progress_ = t;
  }

  const std::size_t R_, C_;
  const std::uint64_t m_, k_, n_;
  const bool serial_;  // MxuSchedule::fold_serial
  const std::uint64_t m_tiles_, tiles_;
  const bf16* const a_;
  const bf16* const b_;

  std::size_t history_ = 0, a_stride_ = 0, a_pos_ = 0, b_pos_ = 0;
  std::vector<float> a_lines_, b_lines_, acc_;
  std::vector<Step> injected_;            // ring of the last R + C - 1 cycles' injections
  std::vector<Step> by_age_;              // this cycle's steps by age = r + c
  std::vector<Segment> segments_;         // this cycle's runs of by_age_, newest first
  std::vector<std::uint64_t> bus_cycle_;  // per column: the last cycle its bus carried a sum

  std::uint64_t feed_tile_ = 0, fed_ = 0, tile_start_ = 0, last_injection_ = 0;
  std::vector<float> y_;
  std::uint64_t collected_ = 0, last_progress_ = 0;
};

}  // namespace

std::uint64_t run_output_stationary(const MxuConfig& config, const MxuShape& shape, const bf16* a, const bf16* b,
                                    std::vector<float>& y) {
  validate(config);
  validate(shape);
  OsEngine engine(config, shape, a, b);
  return engine.run(y);
}

}  // namespace hw
