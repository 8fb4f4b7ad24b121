#include "kernels/matmul_kernel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "hw/mxu_timing.h"
#include "kernels/kernel_launch.h"
#include "sim/error.h"
#include "sim/output.h"
#include "sim/units.h"

namespace kernels {

namespace {

using sim::ceil_div;

// Block edge candidates: the whole dimension, and array-aligned powers of two below it.
std::vector<std::uint64_t> edge_candidates(std::uint64_t dim, std::uint64_t align) {
  std::vector<std::uint64_t> c{dim};
  for (std::uint64_t e = align; e < dim && e <= 16384; e *= 2) c.push_back(e);
  return c;
}

// How a block's columns (or, for narrow blocks, rows) are split over a core's MXUs.
struct MxuSplit {
  bool by_columns = true;
  std::uint64_t chunk = 0;  // columns or rows per MXU
};

MxuSplit split_block(const hw::ChipConfig& chip, std::uint64_t bm, std::uint64_t bn) {
  const std::uint64_t units = chip.mxus_per_core, cols = chip.mxu.cols;
  if (bn >= units * cols || bm < units) {
    return {true, std::max<std::uint64_t>(1, ceil_div(ceil_div(bn, units), cols) * cols)};
  }
  return {false, ceil_div(bm, units)};
}

// Block steps of the busiest core, blocks dealt round-robin over `cores`
// (with causal masking, in the mean: the blocks differ in depth).
std::uint64_t steps_per_core(std::uint64_t m, std::uint64_t k, std::uint64_t n, const MatmulBlocking& b,
                             const MatmulFusion& f, std::uint32_t cores) {
  const std::uint64_t mb = ceil_div(m, b.bm);
  if (f.causal == models::Causal::none) return ceil_div(mb * ceil_div(n, b.bn), cores) * ceil_div(k, b.bk);
  std::uint64_t steps = 0;
  for (std::uint64_t bi = 0; bi < mb; ++bi) {
    const BlockRow r = block_row(m, k, n, b, f, bi);
    steps += r.blocks * ceil_div(r.depth, b.bk);
  }
  return ceil_div(steps, cores);
}

}  // namespace

// Cycles of one block step on the busiest MXU of a core.
std::uint64_t block_step_cycles(const hw::ChipConfig& chip, std::uint64_t bm, std::uint64_t bk, std::uint64_t bn) {
  MxuSplit s = split_block(chip, bm, bn);
  hw::MxuShape shape =
      s.by_columns ? hw::MxuShape{bm, bk, std::min(bn, s.chunk)} : hw::MxuShape{std::min(bm, s.chunk), bk, bn};
  return hw::mxu_tile_cycles(chip.mxu, shape);
}

double load_latency_idle(std::uint32_t load_engines, double latency, double la, double lb) {
  if (load_engines < 2) return 2 * latency;
  return (latency + std::max(0.0, latency - std::abs(la - lb))) / 2;
}

CoreDmaEngines core_dma_engines(const hw::ChipConfig& chip, std::uint32_t core) {
  const std::uint32_t per_core = std::max<std::uint32_t>(1, chip.dma_engines / chip.tensorcores);
  CoreDmaEngines d;
  d.first = core * per_core;
  d.loads = std::min<std::uint32_t>(2, per_core);
  d.engines = chip.dma_engines;
  d.store = (d.first + std::min<std::uint32_t>(2, per_core - 1)) % chip.dma_engines;
  return d;
}

bool MatmulFusion::operator<(const MatmulFusion& o) const {
  return std::tie(a_on_chip, out_on_chip, causal, seq, window) <
         std::tie(o.a_on_chip, o.out_on_chip, o.causal, o.seq, o.window);
}

BlockRow block_row(std::uint64_t m, std::uint64_t k, std::uint64_t n, const MatmulBlocking& b, const MatmulFusion& f,
                   std::uint64_t bi) {
  const std::uint64_t nb = ceil_div(n, b.bn);
  const std::uint64_t r0 = bi * b.bm, rows = std::min(b.bm, m - r0);
  BlockRow r{rows, nb, n - (nb - 1) * b.bn, k};
  if (f.causal == models::Causal::none) return r;
  if (f.seq == 0) throw std::logic_error("block_row: a causal kernel needs its sequence length");
  // The sequence positions of the block's rows in their instance; a block
  // that straddles two instances needs what both need.
  const std::uint64_t t = f.seq, p0 = r0 % t, p1 = (r0 + rows - 1) % t;
  const bool straddles = rows > t || p1 < p0;
  const std::uint64_t first = straddles ? 0 : p0, last = straddles ? t - 1 : p1;
  // A window of w keys: query q sees keys q - w + 1 .. q, key j is seen by
  // queries j .. j + w - 1.
  const std::uint64_t w = f.window == 0 || f.window > t ? t : f.window;
  const std::uint64_t lowest_key = first + 1 >= w ? first + 1 - w : 0;
  const std::uint64_t last_query = std::min(t - 1, last + w - 1);
  switch (f.causal) {
    case models::Causal::out_lower: {  // C is queries x keys: keys lowest_key .. last
      const std::uint64_t from = lowest_key / b.bn;
      r.blocks = ceil_div(last + 1, b.bn) - from;
      r.last_cols = std::min(b.bn, n - (from + r.blocks - 1) * b.bn);
      break;
    }
    case models::Causal::depth_upto_row:  // the contraction runs over keys lowest_key .. last
      r.depth = std::min(k, ceil_div(last + 1, b.bk) * b.bk) - lowest_key / b.bk * b.bk;
      break;
    case models::Causal::depth_from_row:  // rows are keys, the contraction queries first .. last_query
      r.depth = std::min(k, ceil_div(last_query + 1, b.bk) * b.bk) - first / b.bk * b.bk;
      break;
    case models::Causal::none: break;
  }
  return r;
}

MatmulTraffic matmul_traffic(std::uint64_t m, std::uint64_t k, std::uint64_t n, const MatmulBlocking& b,
                             const MatmulFusion& f) {
  MatmulTraffic t;
  const std::uint64_t mb = ceil_div(m, b.bm), nb = ceil_div(n, b.bn);
  if (f.causal == models::Causal::none) {
    // Every output block (i, j) reads the i-th row of A blocks and the j-th column of B blocks.
    t.hbm_read = b.element_bytes * (f.a_on_chip ? 0 : m * k * nb) + b.b_element_bytes * k * n * mb;
    t.hbm_written = f.out_on_chip ? 0 : b.out_element_bytes * m * n;
    return t;
  }
  for (std::uint64_t bi = 0; bi < mb; ++bi) {
    const BlockRow r = block_row(m, k, n, b, f, bi);
    const std::uint64_t cols = (r.blocks - 1) * b.bn + r.last_cols;
    t.hbm_read +=
        b.element_bytes * (f.a_on_chip ? 0 : r.rows * r.depth * r.blocks) + b.b_element_bytes * r.depth * cols;
    if (!f.out_on_chip) t.hbm_written += b.out_element_bytes * r.rows * cols;
  }
  return t;
}

MatmulBlocking choose_blocking(const hw::ChipConfig& chip, std::uint64_t m, std::uint64_t k, std::uint64_t n,
                               const MatmulFusion& fusion, ElementBytes bytes) {
  MatmulBlocking best;
  double best_time = std::numeric_limits<double>::infinity();
  const double cycle = 1.0 / chip.sustained_clock();
  const double bw = chip.hbm.sustained_bytes_per_s();
  const std::uint32_t load_engines = core_dma_engines(chip, 0).loads;
  bool fits_vmem = false;
  for (std::uint64_t bm : edge_candidates(m, 8))
    for (std::uint64_t bk : edge_candidates(k, chip.mxu.rows))
      for (std::uint64_t bn : edge_candidates(n, chip.mxu.cols))
        for (std::uint32_t buffers : {3u, 2u})
          for (std::uint32_t accs : {2u, 1u}) {
            MatmulBlocking b{bm, bk, bn, buffers, accs, bytes.a, bytes.out, bytes.b};
            if (b.vmem_bytes() > chip.vmem) continue;
            fits_vmem = true;
            const std::uint64_t steps = steps_per_core(m, k, n, b, fusion, chip.tensorcores);
            // Per step: MXU time C, load time L (latency + the core's share of
            // bandwidth), and the HBM time the load engines leave idle on
            // their latencies, I. With `buffers` slots a slot cycles through
            // load then compute, so a step takes max(C, L_bw + I, (L + C) /
            // buffers). (Three slots let the engines drift apart and hide
            // some of I behind C, kernel_ops' closed form; left out here.)
            const double c_step = double(block_step_cycles(chip, bm, bk, bn)) * cycle;
            const double la = double(b.element_bytes * (fusion.a_on_chip ? 0 : bm * bk)) * chip.tensorcores / bw;
            const double lb = double(b.b_element_bytes * bk * bn) * chip.tensorcores / bw;
            const double l_bw = la + lb;
            const double l_step = chip.hbm.latency_s + l_bw;
            const double idle = load_latency_idle(load_engines, chip.hbm.latency_s, la, lb);
            const double period = std::max({c_step, l_bw + idle, (l_step + c_step) / b.buffers});
            const double traffic = double(matmul_traffic(m, k, n, b, fusion).total()) / bw;
            // The first step's loads and the last block's store are not overlapped.
            const double store =
                fusion.out_on_chip ? 0.0 : double(b.out_element_bytes * bm * bn) / bw + chip.hbm.latency_s;
            const double fill = l_step + store;
            const double est =
                std::max(double(steps) * period, traffic) + fill + (accs == 1 ? 0.01 * double(steps) * c_step : 0.0);
            if (est < best_time * (1 - 1e-9)) {
              best_time = est;
              best = b;
            }
          }
  // Blockings that fit but whose every estimate overflows: a chip too slow
  // to finish (an HBM bandwidth or clock near zero), not a VMEM problem.
  if (fits_vmem && !(best_time < std::numeric_limits<double>::infinity()))
    throw sim::SimFailure("no blocking of a " + std::to_string(m) + " x " + std::to_string(k) + " x " +
                          std::to_string(n) + " matmul has a finite time on this chip (HBM " + sim::g3(bw, "B/s") +
                          " sustained, clock " + sim::g3(chip.sustained_clock(), "Hz") +
                          "): every blocking that fits VMEM would take longer than a double can count");
  if (best_time == std::numeric_limits<double>::infinity())
    throw sim::SimFailure(
        "no blocking of a " + std::to_string(m) + " x " + std::to_string(k) + " x " + std::to_string(n) +
        " matmul fits VMEM (" + std::to_string(chip.vmem) + " B per TensorCore): the smallest needs " +
        std::to_string(MatmulBlocking{std::min<std::uint64_t>(m, 8), std::min<std::uint64_t>(k, chip.mxu.rows),
                                      std::min<std::uint64_t>(n, chip.mxu.cols), 2, 1, bytes.a, bytes.out, bytes.b}
                           .vmem_bytes()) +
        " B");
  return best;
}

MatmulPlan plan_matmul(const hw::ChipConfig& chip, std::uint64_t m, std::uint64_t k, std::uint64_t n,
                       const MatmulBlocking& bl, const MatmulData& data) {
  MatmulPlan plan;
  plan.blocking = bl;
  plan.traffic = matmul_traffic(m, k, n, bl);
  plan.flops = 2.0 * double(m) * double(k) * double(n);
  const std::uint64_t a_base = 0, b_base = a_base + bl.element_bytes * m * k,
                      c_base = b_base + bl.b_element_bytes * k * n;
  plan.hbm_footprint = c_base + bl.out_element_bytes * m * n;

  const std::uint64_t mb = ceil_div(m, bl.bm), nb = ceil_div(n, bl.bn), kb = ceil_div(k, bl.bk);
  const std::uint32_t cores = chip.tensorcores;
  auto load_engine = [&](std::uint32_t core, std::size_t step) { return core_dma_engines(chip, core).load(step); };
  auto store_engine = [&](std::uint32_t core) { return core_dma_engines(chip, core).store; };

  struct CoreState {
    std::vector<std::vector<std::uint32_t>> step_ops;  // MXU ops of each step, by step index
    std::vector<std::uint32_t> stores;                 // store op of each block
  };
  std::vector<CoreState> cores_state(cores);
  hw::Program& prog = plan.program;

  for (std::uint64_t blk = 0; blk < mb * nb; ++blk) {
    const std::uint32_t core = static_cast<std::uint32_t>(blk % cores);
    CoreState& cs = cores_state[core];
    const std::uint64_t bi = blk / nb, bj = blk % nb;
    const std::uint64_t r0 = bi * bl.bm, rows = std::min(bl.bm, m - r0);
    const std::uint64_t c0 = bj * bl.bn, cols = std::min(bl.bn, n - c0);
    const std::size_t block_index = cs.stores.size();
    std::vector<std::uint32_t> last_step;
    for (std::uint64_t kk = 0; kk < kb; ++kk) {
      const std::uint64_t k0 = kk * bl.bk, depth = std::min(bl.bk, k - k0);
      const std::size_t step = cs.step_ops.size();
      // The slot this step loads into is free once the MXU ops that read it finished.
      std::vector<std::uint32_t> slot_free;
      if (step >= bl.buffers) slot_free = cs.step_ops[step - bl.buffers];
      const std::string tag = "blk(" + std::to_string(bi) + "," + std::to_string(bj) + ") k" + std::to_string(kk);
      hw::Op la{"load A " + tag,
                {hw::EngineKind::dma, load_engine(core, step)},
                hw::DmaOp{a_base + bl.element_bytes * (r0 * k + k0 * rows), bl.element_bytes * rows * depth, false},
                slot_free,
                0};
      std::uint32_t ia = prog.add(la);
      hw::Op lb{
          "load B " + tag,
          {hw::EngineKind::dma, load_engine(core, step + 1)},
          hw::DmaOp{b_base + bl.b_element_bytes * (k0 * n + c0 * depth), bl.b_element_bytes * depth * cols, false},
          slot_free,
          0};
      std::uint32_t ib = prog.add(lb);
      std::vector<std::uint32_t> deps{ia, ib};
      // With one accumulator, the first step of a block waits until the previous block is stored.
      if (kk == 0 && bl.accumulators == 1 && block_index > 0) deps.push_back(cs.stores.back());
      if (kk == 0 && bl.accumulators == 2 && block_index > 1) deps.push_back(cs.stores[block_index - 2]);

      MxuSplit s = split_block(chip, rows, cols);
      std::vector<std::uint32_t> ops;
      for (std::uint32_t u = 0; u < chip.mxus_per_core; ++u) {
        std::uint64_t lo = u * s.chunk, extent = s.by_columns ? cols : rows;
        if (lo >= extent) break;
        std::uint64_t len = std::min(s.chunk, extent - lo);
        hw::MatmulOp mm;
        mm.m = s.by_columns ? rows : len;
        mm.k = depth;
        mm.n = s.by_columns ? len : cols;
        const std::uint64_t row0 = r0 + (s.by_columns ? 0 : lo), col0 = c0 + (s.by_columns ? lo : 0);
        if (data.a) {
          mm.lda = data.lda ? data.lda : k;
          mm.ldb = data.ldb ? data.ldb : n;
          mm.ldy = data.ldy ? data.ldy : n;
          mm.a = data.a + row0 * mm.lda + k0;
          mm.b = data.b + k0 * mm.ldb + col0;
          mm.y = data.y + row0 * mm.ldy + col0;
        }
        hw::Op op{"matmul " + tag,
                  {hw::EngineKind::mxu, core * chip.mxus_per_core + u},
                  mm,
                  deps,
                  2.0 * double(mm.m) * double(mm.k) * double(mm.n)};
        ops.push_back(prog.add(op));
      }
      cs.step_ops.push_back(ops);
      last_step = ops;
    }
    hw::Op st{"store C blk(" + std::to_string(bi) + "," + std::to_string(bj) + ")",
              {hw::EngineKind::dma, store_engine(core)},
              hw::DmaOp{c_base + bl.out_element_bytes * (r0 * n + c0 * rows), bl.out_element_bytes * rows * cols, true},
              last_step,
              0};
    cs.stores.push_back(prog.add(st));
  }
  plan.program = launched(plan.program, chip);
  return plan;
}

}  // namespace kernels
