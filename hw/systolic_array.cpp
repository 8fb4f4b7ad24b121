#include "hw/systolic_array.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <deque>
#include <stdexcept>

#include "hw/mxu_timing.h"
#include "hw/subnormal_flush.h"
#include "hw/systolic_array_os.h"
#include "sim/error.h"

#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

namespace hw {

namespace {

// Cycle-by-cycle hardware rules (docs/mxu.md, "Timing"):
//  - PE(r,c) takes a_in from its left neighbour (column 0: the feeder's row r)
//    and p_in from its upper neighbour (row 0: +0.0); at the end of the cycle
//    a_reg <- a_in and p_reg <- p_in + a_in * w[bank].
//  - The feeder injects one activation vector per cycle; element r enters
//    row r r cycles later (the skew), so the vector injected at cycle tau
//    passes PE(r,c) at cycle tau + r + c. Every PE on the anti-diagonal
//    r + c = age therefore holds the same vector, and the engine tracks
//    validity and bank selection per run of vectors ("segment"), not per PE.
//  - Loading tile j from cycle L: column c's staging chain shifts during
//    L+c .. L+c+R-1 and latches into the tile's bank at the end of the last.
//
// Activation registers of one row form a shift register, kept as a delay
// line: the row's registers are a window of C floats into a longer buffer,
// newest (column 0) first. Shifting the row by one PE is moving the window
// start one float down and writing the new column-0 input there.

#if defined(__SSE2__)
// out = up + a * w over one row segment (the MACs of consecutive PEs), under
// SubnormalFlush.
void mac_segment(float* __restrict out, const float* __restrict up, const float* __restrict a,
                 const float* __restrict w, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128 p0 = _mm_mul_ps(_mm_loadu_ps(a + i), _mm_loadu_ps(w + i));
    const __m128 p1 = _mm_mul_ps(_mm_loadu_ps(a + i + 4), _mm_loadu_ps(w + i + 4));
    _mm_storeu_ps(out + i, _mm_add_ps(_mm_loadu_ps(up + i), p0));
    _mm_storeu_ps(out + i + 4, _mm_add_ps(_mm_loadu_ps(up + i + 4), p1));
  }
  for (; i < n; ++i) out[i] = up[i] + a[i] * w[i];
}
#else
// Without SSE the rule is applied explicitly (slower, same results).
float flush(float x) { return (x != 0.0f && std::fabs(x) < FLT_MIN) ? std::copysign(0.0f, x) : x; }

void mac_segment(float* out, const float* up, const float* a, const float* w, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = flush(up[i] + flush(flush(a[i]) * flush(w[i])));
}
#endif

// Vectors of one tile injected at consecutive cycles start .. start+count-1.
struct InjectionRun {
  std::uint64_t tile, start, count;
};

// The PEs holding one injection run this cycle: ages age_lo .. age_hi
// (age = r + c = cycles since injection), newest vector at age_lo.
struct Segment {
  std::uint64_t age_lo, age_hi, tile, start;
};

// Where tile j sits in B: rows k0 .. k0+k_rows-1, columns n0 .. n0+n_cols-1.
struct TilePlace {
  std::size_t k0, k_rows, n0, n_cols;
  unsigned bank;
};

// Cycles without any state change after which the engine gives up: every
// injected vector reaches the bottom edge within R + C cycles, and a load in
// flight latches a column every cycle.
constexpr std::uint64_t kStallSlack = 2;

class Engine {
 public:
  Engine(const MxuConfig& config, const MxuShape& shape, const bf16* a, const bf16* b, std::vector<float>& psums,
         std::vector<float>& weights, std::vector<float>& activations)
      : R_(config.rows),
        C_(config.cols),
        m_(shape.m),
        k_(shape.k),
        n_(shape.n),
        double_buffer_(config.double_buffer),
        serial_(config.schedule == MxuSchedule::fold_serial),
        tiling_(mxu_tiling(config, shape)),
        a_(a),
        b_(b) {
    tiles_ = tiling_.count();
    total_outputs_ = m_ * n_ * tiling_.k_tiles;
    psums.assign(2 * (R_ + 1) * C_, 0.0f);
    p_cur_ = psums.data();
    p_nxt_ = psums.data() + (R_ + 1) * C_;
    weights.assign(2 * R_ * C_, 0.0f);
    w_ = weights.data();
    // Relocating a delay line costs R * C copies once per `history` cycles.
    history_ = std::max<std::size_t>(256, C_);
    stride_ = history_ + C_;
    activations.assign(R_ * stride_, 0.0f);
    act_ = activations.data();
    pos_ = history_;
    y_.assign(m_ * n_, 0.0f);
  }

  MxuPeResult run(const MxuObserver& observer) {
    SubnormalFlush flush_mode;
    for (std::uint64_t t = 0;; ++t) {
      feed(t);
      start_load(t);
      find_segments(t);
      shift_activations(t);
      compute();
      collect(t);
      if (observer) {
        flush_mode.disable();
        notify(observer, t);
        flush_mode.enable();
      }
      latch(t);
      std::swap(p_cur_, p_nxt_);
      if (collected_ == total_outputs_ && (!serial_ || array_empty_after(t))) return MxuPeResult{t + 1, std::move(y_)};
      if (t - last_progress_ > R_ + C_ + kStallSlack) {
        throw std::logic_error("systolic array: no progress for R + C cycles");
      }
    }
  }

 private:
  TilePlace place(std::uint64_t j) const {
    const std::uint64_t nt = j / tiling_.k_tiles, kt = j % tiling_.k_tiles;
    TilePlace p;
    p.k0 = kt * R_;
    p.k_rows = std::min<std::size_t>(R_, k_ - p.k0);
    p.n0 = nt * C_;
    p.n_cols = std::min<std::size_t>(C_, n_ - p.n0);
    p.bank = bank_of(j);
    return p;
  }

  unsigned bank_of(std::uint64_t tile) const { return double_buffer_ ? static_cast<unsigned>(tile % 2) : 0u; }

  // Feeder: continues the current tile, or starts the next one once its
  // weights are latched in column 0.
  void feed(std::uint64_t t) {
    injected_tile_ = -1;
    if (feed_tile_ >= tiles_) return;
    if (fed_ == 0) {
      if (feed_tile_ >= col0_latched_) return;
      runs_.push_back({feed_tile_, t, 0});
    }
    injected_tile_ = static_cast<std::int64_t>(feed_tile_);
    injected_vector_ = fed_;
    ++runs_.back().count;
    last_progress_ = t;
    if (++fed_ == m_) {
      ++feed_tile_;  // now counts the tiles whose last vector is injected
      fed_ = 0;
    }
  }

  // Loader: starts tile j once column 0 has finished shifting tile j-1 and
  // the feeder has injected the last vector of the tile that used j's bank.
  // Fold-serial: tile j starts loading only once tile j-1 is injected and
  // has left the array entirely (array_empty_after the cycle before).
  void start_load(std::uint64_t t) {
    if (next_load_ >= tiles_) return;
    if (serial_ && next_load_ > 0 && (feed_tile_ < next_load_ || !array_empty_after(t - 1))) return;
    if (next_load_ > 0 && t < last_load_start_ + R_) return;
    const std::uint64_t reuse = double_buffer_ ? 2 : 1;
    if (next_load_ >= reuse && next_load_ - reuse >= feed_tile_) return;
    loads_.push_back({next_load_, t, bank_of(next_load_)});
    last_load_start_ = t;
    ++next_load_;
    last_progress_ = t;
  }

  // Whether, by the end of cycle t, every injected vector's psums have left
  // row R-1 in every column, padded ones included: the newest injection is
  // R + C - 2 cycles old.
  bool array_empty_after(std::uint64_t t) const {
    return runs_.empty() || runs_.back().start + runs_.back().count - 1 + (R_ + C_ - 2) <= t;
  }

  void find_segments(std::uint64_t t) {
    const std::uint64_t max_age = R_ + C_ - 2;
    while (!runs_.empty() && t - (runs_.front().start + runs_.front().count - 1) > max_age) {
      runs_.pop_front();
    }
    segments_.clear();
    for (auto it = runs_.rbegin(); it != runs_.rend(); ++it) {
      const std::uint64_t newest = t - (it->start + it->count - 1);
      segments_.push_back({newest, std::min(t - it->start, max_age), it->tile, it->start});
    }
  }

  void shift_activations(std::uint64_t t) {
    if (pos_ == 0) {
      for (std::size_t r = 0; r < R_; ++r) {
        float* line = act_ + r * stride_;
        std::memmove(line + history_, line, (C_ - 1) * sizeof(float));
      }
      pos_ = history_;
    }
    --pos_;
    // Row r's new column-0 input is element r of the vector injected r
    // cycles ago (age r); bubbles and padded rows carry zeros.
    for (std::size_t r = 0; r < R_; ++r) act_[r * stride_ + pos_] = 0.0f;
    for (const Segment& s : segments_) {
      if (s.age_lo >= R_) break;
      const TilePlace p = place(s.tile);
      const std::uint64_t last = std::min<std::uint64_t>(s.age_hi, p.k_rows - 1);
      for (std::uint64_t r = s.age_lo; r <= last; ++r) {
        const std::uint64_t i = t - r - s.start;
        act_[r * stride_ + pos_] = a_[i * k_ + p.k0 + r].to_float();
      }
    }
  }

  // Two-phase step: every psum of the next state from the current state.
  void compute() {
    for (std::size_t r = 0; r < R_; ++r) {
      const float* up = p_cur_ + r * C_;  // row r of the buffer = PE row r-1 (or the top edge)
      float* out = p_nxt_ + (r + 1) * C_;
      const float* a = act_ + r * stride_ + pos_;
      std::size_t c = 0;
      for (const Segment& s : segments_) {
        if (s.age_lo > r + C_ - 1) break;
        if (s.age_hi < r) continue;
        const std::size_t lo = std::max<std::uint64_t>(s.age_lo, r) - r;
        const std::size_t hi = std::min<std::uint64_t>(s.age_hi, r + C_ - 1) - r;
        std::fill(out + c, out + lo, 0.0f);
        const float* w = w_ + bank_of(s.tile) * R_ * C_ + r * C_;
        mac_segment(out + lo, up + lo, a + lo, w + lo, hi - lo + 1);
        c = hi + 1;
      }
      std::fill(out + c, out + C_, 0.0f);
    }
  }

  // Collector: psums leaving row R-1 this cycle, accumulated into Y in tile
  // (= kt) order; padded columns are dropped.
  void collect(std::uint64_t t) {
    const float* bottom = p_nxt_ + R_ * C_;
    const std::uint64_t first_age = R_ - 1;
    for (const Segment& s : segments_) {
      if (s.age_hi < first_age) continue;
      const TilePlace p = place(s.tile);
      const std::uint64_t c_lo = std::max(s.age_lo, first_age) - first_age;
      const std::uint64_t c_hi = std::min<std::uint64_t>(s.age_hi - first_age, p.n_cols - 1);
      for (std::uint64_t c = c_lo; c <= c_hi; ++c) {
        const std::uint64_t i = t - (first_age + c) - s.start;
        float& y = y_[i * n_ + p.n0 + c];
        y = mxu_add(y, bottom[c]);
        ++collected_;
        last_progress_ = t;
      }
    }
  }

  // End of cycle t: columns whose staging chain has shifted R rows latch
  // them into the tile's bank (padding as zeros).
  void latch(std::uint64_t t) {
    for (const MxuWeightLoad& load : loads_) {
      if (t + 1 < load.start_cycle + R_) continue;
      const std::uint64_t col = t + 1 - (load.start_cycle + R_);
      const TilePlace p = place(load.tile);
      float* w = w_ + p.bank * R_ * C_ + col;
      for (std::size_t r = 0; r < R_; ++r) {
        const bool real = r < p.k_rows && col < p.n_cols;
        w[r * C_] = real ? b_[(p.k0 + r) * n_ + p.n0 + col].to_float() : 0.0f;
      }
      if (col == 0) ++col0_latched_;
      last_progress_ = t;
    }
    while (!loads_.empty() && t + 2 >= loads_.front().start_cycle + R_ + C_) loads_.pop_front();
  }

  void notify(const MxuObserver& observer, std::uint64_t t) {
    slots_.assign(R_ + C_ - 1, MxuVectorSlot{});
    for (const Segment& s : segments_) {
      for (std::uint64_t age = s.age_lo; age <= s.age_hi; ++age) {
        slots_[age] = MxuVectorSlot{static_cast<std::int64_t>(s.tile), t - age - s.start};
      }
    }
    load_list_.assign(loads_.begin(), loads_.end());
    ArrayStateView v;
    v.cycle = t;
    v.rows = static_cast<std::uint32_t>(R_);
    v.cols = static_cast<std::uint32_t>(C_);
    v.double_buffer = double_buffer_;
    v.activations = act_ + pos_;
    v.activation_stride = stride_;
    v.psums = p_nxt_ + C_;
    v.weights[0] = w_;
    v.weights[1] = w_ + R_ * C_;
    v.slots_by_age = slots_.data();
    v.injected_tile = injected_tile_;
    v.injected_vector = injected_vector_;
    v.loads = load_list_.data();
    v.load_count = load_list_.size();
    observer(v);
  }

  const std::size_t R_, C_;
  const std::uint64_t m_, k_, n_;
  const bool double_buffer_;
  const bool serial_;  // MxuSchedule::fold_serial
  const MxuTiling tiling_;
  const bf16* const a_;
  const bf16* const b_;
  std::uint64_t tiles_ = 0, total_outputs_ = 0;

  float* p_cur_ = nullptr;
  float* p_nxt_ = nullptr;
  float* w_ = nullptr;
  float* act_ = nullptr;
  std::size_t history_ = 0, stride_ = 0, pos_ = 0;

  std::uint64_t feed_tile_ = 0, fed_ = 0;  // feeder: tile being injected, vectors done
  std::int64_t injected_tile_ = -1;
  std::uint64_t injected_vector_ = 0;
  std::uint64_t col0_latched_ = 0;  // tiles whose column-0 weights are latched
  std::uint64_t next_load_ = 0, last_load_start_ = 0;
  std::deque<MxuWeightLoad> loads_;  // loads whose chains are still shifting
  std::deque<InjectionRun> runs_;    // injections still inside the array
  std::vector<Segment> segments_;    // this cycle's runs, newest first

  std::vector<float> y_;
  std::uint64_t collected_ = 0, last_progress_ = 0;

  std::vector<MxuVectorSlot> slots_;  // observer only
  std::vector<MxuWeightLoad> load_list_;
};

}  // namespace

MxuPeResult SystolicArray::run(const MxuConfig& config, const MxuShape& shape, const bf16* a, const bf16* b,
                               const MxuObserver& observer) {
  if (a == nullptr || b == nullptr) {
    throw std::invalid_argument("SystolicArray::run: operands A and B are required");
  }
  if (config.dataflow == MxuDataflow::os) {
    if (observer) {
      throw sim::ConfigError({}, "mxu.dataflow",
                             "os: the cycle-by-cycle view (walk-through, VCD) is drawn for ws and is arrays only");
    }
    MxuPeResult r;
    r.cycles = run_output_stationary(config, shape, a, b, r.y);
    return r;
  }
  if (config.dataflow == MxuDataflow::ws) {
    Engine engine(config, shape, a, b, psums_, weights_, activations_);
    return engine.run(observer);
  }
  // Input-stationary: the same array computes Y^T = B^T A^T with tiles of
  // A^T in the weight registers and B's columns streaming (mxu_array_shape).
  const MxuShape t = mxu_array_shape(config, shape);
  validate(t);
  std::vector<bf16> streamed(t.m * t.k), stationary(t.k * t.n);  // B^T (n x k), A^T (k x m)
  for (std::size_t q = 0; q < shape.k; ++q) {
    for (std::size_t j = 0; j < shape.n; ++j) streamed[j * t.k + q] = b[q * shape.n + j];
    for (std::size_t i = 0; i < shape.m; ++i) stationary[q * t.n + i] = a[i * shape.k + q];
  }
  MxuConfig ws = config;
  ws.dataflow = MxuDataflow::ws;
  Engine engine(ws, t, streamed.data(), stationary.data(), psums_, weights_, activations_);
  MxuPeResult r = engine.run(observer);
  std::vector<float> y(shape.m * shape.n);
  for (std::size_t j = 0; j < shape.n; ++j)
    for (std::size_t i = 0; i < shape.m; ++i) y[i * shape.n + j] = r.y[j * shape.m + i];
  r.y = std::move(y);
  return r;
}

}  // namespace hw
