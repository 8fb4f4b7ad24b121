#include "kernels/kernel_ops.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "kernels/kernel_launch.h"
#include "sim/output.h"
#include "sim/sim_time.h"
#include "sim/units.h"

namespace kernels {

namespace {

using sim::ceil_div;

// The blocked program's timing on one TensorCore (docs/matmul.md): its
// engines, its buffering, and the share of HBM bandwidth its transfers get.
struct CoreTiming {
  const hw::ChipConfig& chip;
  const MatmulBlocking& b;
  double share = 0;  // HBM bytes/s this core's transfers get
  double latency = 0;
  std::uint32_t load_engines = 2;  // kernels::core_dma_engines

  double seconds(std::uint64_t bytes) const { return double(bytes) / share; }
  // A transfer spans the channels its interleave blocks fall on: one that
  // covers fewer than all of them is served at their part of the share.
  double spread(double service) const {
    const double bytes = service * share, channels = double(chip.hbm.channels);
    return std::min(1.0, std::ceil(bytes / double(chip.hbm.interleave_bytes)) / channels);
  }

  // One block step in the steady state: its MXU time, the HBM service of
  // its A and B loads (la, lb) at the core's share, the time per step HBM
  // is left idle by the load engines' latencies, and its slot cycle.
  struct Step {
    double mxu = 0, loads = 0, idle = 0, slot = 0;
  };
  Step step(double la, double lb, double c) const {
    const double lat = latency;
    const double y = std::min(la, lb);
    Step s;
    s.mxu = c;
    s.loads = la + lb;
    s.idle = load_latency_idle(load_engines, lat, la, lb);
    if (load_engines >= 2 && b.buffers >= 3) {
      // With three slots the large load of step s + 3 (on the other engine
      // than step s + 2's) waits for the MXU work of step s, which starts
      // when step s's large load ends: the engines' large loads drift apart
      // by c less the small load's transfer (latency and service at half
      // the share, beside the large one), so their latencies overlap less.
      const double small_transfer = lat + 2 * (y > 0 ? y / spread(y) : 0.0);
      s.idle = std::max(0.0, s.idle - std::max(0.0, c - 2 * small_transfer) / 2);
    }
    // A slot is loaded (latency and both loads sharing the core's share),
    // then consumed by the MXU, `buffers` steps apart.
    s.slot = (lat + la + lb + c) / b.buffers;
    return s;
  }
};

// MXU seconds of a step, at the clock the chip sustains under load.
double mxu_seconds(const hw::ChipConfig& chip, std::uint64_t rows, std::uint64_t depth, std::uint64_t cols) {
  return double(block_step_cycles(chip, rows, depth, cols)) / chip.sustained_clock();
}

// One kind of output block, rows x cols walking the contraction, at the
// core's share of HBM.
struct BlockKind {
  double mxu = 0, c_first = 0, c_last = 0;  // MXU: all its steps, the first, the last
  double loads = 0, first_loads = 0;        // HBM service of its steps' loads, of the first step's
  double first_a = 0, first_b = 0;          // of the first step's A and B loads
  double last_loads = 0, last_idle = 0;     // of the last step's loads, and its idle
  double idle = 0, slot = 0;                // HBM idle of its steps, their slot cycles
  double store = 0;                         // HBM service of its store
};

// A fused kernel's A in VMEM moves no bytes, nor its C kept there.
BlockKind block_kind(const CoreTiming& t, const MatmulFusion& f, std::uint64_t k, std::uint64_t rows,
                     std::uint64_t cols) {
  const MatmulBlocking& b = t.b;
  const std::uint64_t e = b.element_bytes, e_b = b.b_element_bytes, e_out = b.out_element_bytes;
  const std::uint64_t kb = ceil_div(k, b.bk), k_tail = k - (kb - 1) * b.bk;
  const std::uint64_t a_rows = f.a_on_chip ? 0 : rows;
  const double a_full = t.seconds(e * a_rows * b.bk), b_full = t.seconds(e_b * b.bk * cols);
  const double a_tail = t.seconds(e * a_rows * k_tail), b_tail = t.seconds(e_b * k_tail * cols);
  const double c_full = kb > 1 ? mxu_seconds(t.chip, rows, b.bk, cols) : 0.0;
  const double c_tail = mxu_seconds(t.chip, rows, k_tail, cols);
  const CoreTiming::Step full = t.step(a_full, b_full, c_full), tail = t.step(a_tail, b_tail, c_tail);
  const double n = double(kb - 1);
  BlockKind x;
  x.mxu = n * c_full + c_tail;
  x.c_first = kb > 1 ? c_full : c_tail;
  x.c_last = c_tail;
  x.loads = n * full.loads + tail.loads;
  x.first_a = kb > 1 ? a_full : a_tail;
  x.first_b = kb > 1 ? b_full : b_tail;
  x.first_loads = x.first_a + x.first_b;
  x.last_loads = tail.loads;
  x.last_idle = tail.idle;
  x.idle = n * full.idle + tail.idle;
  x.slot = n * full.slot + tail.slot;
  x.store = f.out_on_chip ? 0.0 : t.seconds(e_out * rows * cols);
  return x;
}

// HBM's part of a span that moves `h` seconds of service, with `g` seconds
// of the load engines' idle time, while a store with `w` of it runs: the
// store is in service a fraction w / P of the span P; falling where it may
// in the load engines' cycle, it fills that fraction of their idle time,
// so P = h + g (1 - w / P), the larger root of P^2 - (h + g) P + g w = 0.
double hbm_span(double h, double g, double w) {
  return 0.5 * ((h + g) + std::sqrt(std::max(0.0, (h + g) * (h + g) - 4 * g * w)));
}

// The time from the first MXU step of a block of kind x to the next
// block's, the blocks before and after it being of kinds prev and next
// (null: none). The blocked program is software-pipelined: while a block's
// MXU steps run, the loads of its later steps and of the next block's first
// step move, and so does the previous block's store (the first block's first
// loads are the fill). The core's last block (next null) ends with its last
// MXU step: its store is the drain.
double block_period(const CoreTiming& t, const BlockKind& x, const BlockKind* prev, const BlockKind* next) {
  const double w = prev ? prev->store : 0.0;
  const double h = x.loads - x.first_loads + (next ? next->first_loads : 0.0) + w;
  const double mem = hbm_span(h, x.idle, w);
  if (!next) {
    // Its last MXU step follows its last loads, so every load after the
    // first step's comes before it (the previous block's store need not);
    // no load follows them, so one step's latency gap fewer leaves HBM idle.
    const double last_mem = hbm_span(h, x.idle - x.last_idle, w);
    const double loads = hbm_span(x.loads - x.first_loads, x.idle - x.last_idle, 0.0);
    return std::max({x.mxu, x.slot, last_mem - x.last_loads, loads + x.c_last});
  }
  const double steps = std::max({x.mxu, x.slot, mem});
  // Its store moves during the next block. The store engine runs one store
  // at a time, its service and then its latency. A block's first MXU step
  // waits for the store of the block that last used its accumulator (the
  // previous block with one accumulator, the one before with two), and the
  // end of this block's last MXU step frees the slot a later step's loads
  // wait for: they start with the store (one accumulator), or, when stores
  // follow one another, an MXU step into it, and share HBM with what is
  // left of its service.
  const MatmulBlocking& b = t.b;
  const double left = std::max(0.0, x.store - (b.accumulators == 1 ? 0.0 : next->c_first));
  // (A block kept on chip has no store, and its accumulator is free at once.)
  const double store =
      x.store > 0 ? t.latency + x.store + std::min(left, next->first_a) + std::min(left, next->first_b) : 0.0;
  const double accumulator = (x.mxu + store) / b.accumulators;
  return std::max({steps, store, accumulator});
}

// What one core's blocks add up to.
struct CoreSum {
  std::uint64_t blocks = 0;
  std::uint64_t read = 0, written = 0;
  std::uint64_t mxu_cycles = 0;
  std::uint64_t macs = 0;
  double vmem_bytes = 0;  // hw::mxu_vmem_bytes of each step
  double body_s = 0;
};

// `what`: the kernel, for the message when its time is beyond simulated time.
std::uint64_t to_ps(double seconds, const char* what, std::uint32_t core, const hw::ChipConfig& chip) {
  return sim::checked_ps(std::ceil(seconds * sim::kPsPerSecond), [&] {
    return std::string("the body of the ") + what + " kernel on TensorCore " + std::to_string(core) + " (" +
           sim::g3(chip.hbm.bandwidth_bytes_per_s, "B/s") + " HBM)";
  });
}

// The blocks of core c (the kernel's blocks in row-major order, block i to
// core i % cores, as plan_matmul deals them), visited per block row:
// f(rows, cols, depth, count) for its full-width blocks and its ragged (or,
// causal, last) column, in order, O(block rows).
template <typename F>
void for_core_blocks(std::uint32_t c, std::uint32_t cores, std::uint64_t m, std::uint64_t k, std::uint64_t n,
                     const MatmulBlocking& b, const MatmulFusion& fusion, F f) {
  const std::uint64_t mb = ceil_div(m, b.bm);
  std::uint64_t index = 0;  // of the row's first block
  for (std::uint64_t bi = 0; bi < mb; ++bi) {
    const BlockRow r = block_row(m, k, n, b, fusion, bi);
    const std::uint64_t first = (c + cores - index % cores) % cores;  // its first bj in this row
    index += r.blocks;
    if (first >= r.blocks) continue;
    const std::uint64_t mine = (r.blocks - 1 - first) / cores + 1;
    const bool tail = (r.blocks - 1 - first) % cores == 0;
    if (mine > (tail ? 1u : 0u)) f(r.rows, b.bn, r.depth, mine - (tail ? 1 : 0));
    if (tail) f(r.rows, r.last_cols, r.depth, 1);
  }
}

}  // namespace

std::vector<CoreKernel> matmul_kernel_ops(const hw::ChipConfig& chip, std::uint64_t m, std::uint64_t k, std::uint64_t n,
                                          const MatmulBlocking& b, const MatmulFusion& fusion) {
  const std::uint32_t cores = chip.tensorcores;
  std::uint64_t blocks = 0;
  for (std::uint64_t bi = 0; bi < ceil_div(m, b.bm); ++bi) blocks += block_row(m, k, n, b, fusion, bi).blocks;
  const std::uint32_t active = static_cast<std::uint32_t>(std::min<std::uint64_t>(cores, blocks));
  const double bw = chip.hbm.sustained_bytes_per_s(), lat = chip.hbm.latency_s;
  const std::uint64_t e = b.element_bytes, e_b = b.b_element_bytes, e_out = b.out_element_bytes;  // the formats
  const std::uint32_t load_engines = core_dma_engines(chip, 0).loads;
  auto timing = [&](double share) { return CoreTiming{chip, b, share, lat, load_engines}; };

  struct Core {
    CoreSum sum;
    std::uint64_t steps = 0;  // block steps (contraction steps over its blocks)
    std::uint64_t fill_bytes = 0, drain_bytes = 0;
    std::uint64_t early_bytes = 0;  // of the second step's loads, moved in the fill
    double fill_s = 0;
    // The pipeline's tail: the MXU time of its last step, and the bytes
    // that move beside it (what is left of the previous block's store).
    double tail_s = 0;
    std::uint64_t tail_bytes = 0;
  };
  std::vector<Core> cs(active);
  // The blocks' shapes (rows, cols, depth): a few, more with causal masking
  // (one depth per block row).
  std::vector<std::array<std::uint64_t, 3>> shapes;
  auto shape_index = [&](std::uint64_t rows, std::uint64_t cols, std::uint64_t depth) {
    const std::array<std::uint64_t, 3> key{rows, cols, depth};
    const auto it = std::find(shapes.begin(), shapes.end(), key);
    if (it != shapes.end()) return static_cast<std::uint32_t>(it - shapes.begin());
    shapes.push_back(key);
    return static_cast<std::uint32_t>(shapes.size() - 1);
  };
  // Core c's blocks in order: runs of one shape (an index into shapes).
  std::vector<std::vector<std::pair<std::uint32_t, std::uint64_t>>> runs(active);
  for (std::uint32_t c = 0; c < active; ++c)
    for_core_blocks(c, cores, m, k, n, b, fusion,
                    [&](std::uint64_t rows, std::uint64_t cols, std::uint64_t depth, std::uint64_t count) {
                      const std::uint32_t kind = shape_index(rows, cols, depth);
                      if (!runs[c].empty() && runs[c].back().first == kind) {
                        runs[c].back().second += count;
                      } else {
                        runs[c].push_back({kind, count});
                      }
                    });
  // Core c's body (first MXU step to the end of the last) when its
  // transfers get `share` of HBM: O(block rows).
  auto body_s = [&](std::uint32_t c, double share) {
    const CoreTiming t = timing(share);
    std::vector<BlockKind> kinds;
    for (const auto& sh : shapes) kinds.push_back(block_kind(t, fusion, sh[2], sh[0], sh[1]));
    const auto& r = runs[c];
    double body = 0;
    for (std::size_t i = 0; i < r.size(); ++i) {
      const BlockKind& x = kinds[r[i].first];
      const BlockKind* before = i > 0 ? &kinds[r[i - 1].first] : nullptr;
      const BlockKind* after = i + 1 < r.size() ? &kinds[r[i + 1].first] : nullptr;
      const std::uint64_t count = r[i].second;
      // The run's first block follows the previous run's last, its last
      // block precedes the next run's first; those between see their own kind.
      if (count == 1) {
        body += block_period(t, x, before, after);
        continue;
      }
      body += block_period(t, x, before, &x) + double(count - 2) * block_period(t, x, &x, &x) +
              block_period(t, x, &x, after);
    }
    // The loads moved in the fill are not the body's to move; its MXU work is.
    return std::max(double(cs[c].sum.mxu_cycles) / chip.sustained_clock(), body - t.seconds(cs[c].early_bytes));
  };
  for (std::uint32_t c = 0; c < active; ++c) {
    Core& core = cs[c];
    std::array<std::uint64_t, 3> first{}, last{}, before_last{};  // shapes of its first, last and second-last blocks
    for_core_blocks(c, cores, m, k, n, b, fusion,
                    [&](std::uint64_t rows, std::uint64_t cols, std::uint64_t depth, std::uint64_t count) {
                      if (core.sum.blocks == 0) first = {rows, cols, depth};
                      before_last = count > 1 ? std::array<std::uint64_t, 3>{rows, cols, depth} : last;
                      last = {rows, cols, depth};
                      CoreSum& s = core.sum;
                      s.blocks += count;
                      s.read += count * (e * (fusion.a_on_chip ? 0 : rows * depth) + e_b * depth * cols);
                      if (!fusion.out_on_chip) s.written += count * e_out * rows * cols;
                      const std::uint64_t kb = ceil_div(depth, b.bk), k_tail = depth - (kb - 1) * b.bk;
                      core.steps += count * kb;
                      s.mxu_cycles += count * ((kb - 1) * (kb > 1 ? block_step_cycles(chip, rows, b.bk, cols) : 0) +
                                               block_step_cycles(chip, rows, k_tail, cols));
                      s.macs += count * rows * cols * depth;
                      s.vmem_bytes += double(count) * (double(kb - 1) * hw::mxu_vmem_bytes({rows, b.bk, cols}) +
                                                       hw::mxu_vmem_bytes({rows, k_tail, cols}));
                    });
    // The fill: the first step's loads, A and B on two engines, the cores
    // filling together. The engine whose load ends first starts the next
    // step's (larger) load, which takes half the bandwidth from the first
    // step's larger load until that ends: those bytes move before the first
    // MXU step too.
    const double share = bw / active;
    const std::uint64_t depth = std::min(b.bk, first[2]);
    const std::uint64_t a0 = fusion.a_on_chip ? 0 : e * first[0] * depth, b0 = e_b * depth * first[1];
    const double x = double(std::max(a0, b0)) / share, y = double(std::min(a0, b0)) / share;
    const double stolen = load_engines >= 2 ? std::max(0.0, x - y - lat) : 0.0;
    core.early_bytes = std::min<std::uint64_t>(core.sum.read - a0 - b0, static_cast<std::uint64_t>(stolen * share));
    core.fill_bytes = a0 + b0 + core.early_bytes;
    core.fill_s = double(core.fill_bytes) / share + lat;
    core.drain_bytes = fusion.out_on_chip ? 0 : e_out * last[0] * last[1];
    // The tail: the last step's MXU work waits for the last step's loads,
    // so it follows every load the core makes. Beside it moves only the
    // previous block's store when the last block is one step and has an
    // accumulator of its own (two accumulators): that store starts as the
    // previous block's MXU work ends, when the last step's starts.
    const std::uint64_t last_steps = ceil_div(last[2], b.bk);
    core.tail_s = mxu_seconds(chip, last[0], last[2] - (last_steps - 1) * b.bk, last[1]);
    if (last_steps == 1 && b.accumulators == 2 && core.sum.blocks > 1 && !fusion.out_on_chip)
      core.tail_bytes = e_out * before_last[0] * before_last[1];
  }

  // The cores' bodies run side by side, their transfers sharing HBM: the
  // cores do the same steps on blocks of different sizes (the ragged ones),
  // so their transfers are in service together, an equal share each, until
  // the lighter cores' are done and the heavier ones' go on with the rest
  // (processor sharing of aligned transfers): a core's share is its bytes
  // over the time its last byte ends. Cores whose bodies end first leave
  // their share to the rest (blocks go round-robin: some cores get one
  // block more): every phase between two body ends is a part of each
  // running core's body, capped at its pace in that phase.
  std::vector<std::vector<double>> fraction(active), seconds(active);
  {
    std::vector<double> done(active, 0.0);
    double now = 0;
    for (;;) {
      std::vector<std::pair<double, std::uint32_t>> load;  // bytes of each running core, ascending
      for (std::uint32_t c = 0; c < active; ++c)
        if (done[c] < 1) load.push_back({double(cs[c].sum.read + cs[c].sum.written), c});
      if (load.empty()) break;
      std::sort(load.begin(), load.end());
      std::vector<double> pace(active, 0.0);
      double t = 0, below = 0;  // when the lighter cores' bytes ended; their bytes
      for (std::size_t i = 0; i < load.size(); ++i) {
        t += double(load.size() - i) * (load[i].first - below) / bw;
        below = load[i].first;
        pace[load[i].second] = body_s(load[i].second, t > 0 ? load[i].first / t : bw);
      }
      double next = std::numeric_limits<double>::infinity();
      for (const auto& l : load)
        next = std::min(next, std::max(now, cs[l.second].fill_s) + (1 - done[l.second]) * pace[l.second]);
      for (const auto& l : load) {
        const std::uint32_t c = l.second;
        const double from = std::max(now, cs[c].fill_s);
        double f = pace[c] > 0 ? std::max(0.0, next - from) / pace[c] : 1.0;
        if (f >= (1 - done[c]) * (1 - 1e-9)) f = 1 - done[c];
        if (f <= 0) continue;
        fraction[c].push_back(f);
        seconds[c].push_back(f * pace[c]);
        done[c] = f == 1 - done[c] ? 1.0 : done[c] + f;
      }
      now = next;
    }
  }

  std::vector<CoreKernel> out;
  for (std::uint32_t c = 0; c < active; ++c) {
    const Core& core = cs[c];
    CoreKernel ck;
    ck.core = c;
    hw::KernelOp& op = ck.op;
    op.read_bytes = core.sum.read;
    op.written_bytes = core.sum.written;
    op.fill_bytes = core.fill_bytes;
    op.drain_bytes = core.drain_bytes;
    op.body_bytes = core.sum.read + core.sum.written - op.fill_bytes - op.drain_bytes;
    std::uint64_t bytes_left = op.body_bytes;
    for (std::size_t i = 0; i < fraction[c].size(); ++i) {
      const bool last = i + 1 == fraction[c].size();
      const std::uint64_t bytes =
          last ? bytes_left : std::min(bytes_left, static_cast<std::uint64_t>(fraction[c][i] * double(op.body_bytes)));
      bytes_left -= bytes;
      op.body_parts.push_back({bytes, to_ps(seconds[c][i], "matmul", c, chip)});
      op.min_body_ps += op.body_parts.back().min_ps;
    }
    // The tail is the body's last part. Alone the body's closed form
    // already ends with it (block_period: the last loads, then the last
    // MXU step), so alone it costs nothing; as a part of its own it keeps
    // its MXU time after the loads when contention stretches them, which
    // one flow capped at the body's average pace does not (issue 13: alone
    // v4 333x777x1111 -4.0% -> -0.1%; beside a stream -6.1% -> -4.3%).
    if (op.body_parts.empty()) op.body_parts.push_back({op.body_bytes, op.min_body_ps});
    hw::KernelOp::Part& before = op.body_parts.back();
    const hw::KernelOp::Part tail{std::min(before.bytes, core.tail_bytes),
                                  std::min(before.min_ps, to_ps(core.tail_s, "matmul", c, chip))};
    before.bytes -= tail.bytes;
    before.min_ps -= tail.min_ps;
    if (before.bytes == 0 && before.min_ps == 0) op.body_parts.pop_back();
    if (tail.bytes > 0 || tail.min_ps > 0) op.body_parts.push_back(tail);
    if (op.body_parts.size() <= 1) op.body_parts.clear();
    // The fill's A and B loads are in service together, one per load
    // engine. In the body each load engine moves its loads back to back
    // when HBM is what the kernel waits for (the only time its share
    // matters), idle for an access latency after each: its duty is s / (s +
    // latency), s a load's mean service at an equal share among the loads of
    // every active core's engines.
    op.fill_transfers = load_engines;
    const double loads = (fusion.a_on_chip ? 1.0 : 2.0) * double(core.steps);
    const double s = double(core.sum.read) / loads / (bw / (active * load_engines));
    op.body_transfers = load_engines * s / (s + lat);
    op.engine_cycles = core.sum.mxu_cycles;
    op.macs = core.sum.macs;
    op.vmem_bytes = core.sum.vmem_bytes;
    out.push_back(std::move(ck));
  }
  return out;
}

hw::Program matmul_program(const hw::ChipConfig& chip, hw::Fidelity fidelity, std::uint64_t m, std::uint64_t k,
                           std::uint64_t n, const MatmulBlocking& blocking, const MatmulData& data,
                           const MatmulFusion& fusion) {
  if (fidelity != hw::Fidelity::kernel) {
    if (fusion.fused()) throw std::logic_error("matmul_program: fused kernels are modelled at kernel fidelity only");
    return plan_matmul(chip, m, k, n, blocking, data).program;
  }
  if (data.a) throw std::logic_error("matmul_program: functional operands need tile or pe fidelity");
  hw::Program p;
  const std::vector<std::uint32_t> launch = append_launch(p, chip, {}, "matmul");
  for (const CoreKernel& ck : matmul_kernel_ops(chip, m, k, n, blocking, fusion))
    p.add(hw::Op{"matmul core " + std::to_string(ck.core),
                 {hw::EngineKind::mxu, ck.core * chip.mxus_per_core},
                 ck.op,
                 launch,
                 2.0 * double(ck.op.macs)});
  return p;
}

std::uint64_t stream_chunks(const hw::ChipConfig& chip, std::uint64_t load_bytes, std::uint64_t store_bytes) {
  // A chunk's input and output, double-buffered, fit a quarter of VMEM each;
  // more than 8 chunks would add ops, not accuracy: the pipeline's fill is
  // one chunk.
  constexpr std::uint64_t kMaxChunks = 8;
  return std::clamp<std::uint64_t>(ceil_div(load_bytes + store_bytes, std::max<std::uint64_t>(1, chip.vmem / 4)), 1,
                                   kMaxChunks);
}

std::vector<CoreKernel> stream_kernel_ops(const hw::ChipConfig& chip, const StreamShape& w) {
  const std::uint32_t cores = chip.tensorcores;
  const std::uint64_t load = ceil_div(w.load_bytes, cores), store = ceil_div(w.store_bytes, cores);
  const std::uint64_t elements = ceil_div(w.elements, cores);
  const std::uint64_t chunks = stream_chunks(chip, load, store);
  const std::uint64_t chunk_load = ceil_div(load, chunks), chunk_store = ceil_div(store, chunks);
  const std::uint64_t chunk_cycles =
      elements > 0 && w.flops_per_element > 0
          ? static_cast<std::uint64_t>(
                std::ceil(double(ceil_div(elements, chunks)) * w.flops_per_element / chip.vector_flops_per_cycle))
          : 0;
  // The chunks' loads follow one another on one DMA engine, their stores on
  // another, each paying an access latency; the vector unit takes the
  // chunks in turn. Alone, the body (every chunk's vector work, the loads
  // after the first and the stores before the last) lasts the longest of
  // the three streams.
  const double share = chip.hbm.sustained_bytes_per_s() / cores;
  const double lat = chip.hbm.latency_s;
  const double loads = load > 0 ? double(chunks - 1) * (lat + double(chunk_load) / share) : 0.0;
  const double stores = store > 0 ? double(chunks - 1) * (lat + double(chunk_store) / share) : 0.0;
  const double vector = double(chunks * chunk_cycles) / chip.sustained_clock();
  const double engines = (load > 0 ? 1.0 : 0.0) + (store > 0 ? 1.0 : 0.0);
  const double per_transfer = chip.hbm.sustained_bytes_per_s() / (cores * std::max(1.0, engines));
  const double s_load = double(chunk_load) / per_transfer, s_store = double(chunk_store) / per_transfer;
  const double in_service = double(chunks - 1) * ((load > 0 ? s_load : 0.0) + (store > 0 ? s_store : 0.0));
  const double body_s = std::max({vector, load > 0 ? double(chunks - 1) * (lat + s_load) : 0.0,
                                  store > 0 ? double(chunks - 1) * (lat + s_store) : 0.0});
  const double body_transfers = in_service > 0 && body_s > 0 ? in_service / body_s : 1.0;
  std::vector<CoreKernel> out;
  for (std::uint32_t c = 0; c < cores; ++c) {
    CoreKernel ck;
    ck.core = c;
    hw::KernelOp& op = ck.op;
    op.read_bytes = load > 0 ? chunks * chunk_load : 0;
    op.written_bytes = store > 0 ? chunks * chunk_store : 0;
    op.fill_bytes = load > 0 ? chunk_load : 0;
    op.drain_bytes = store > 0 ? chunk_store : 0;
    op.body_bytes = op.read_bytes + op.written_bytes - op.fill_bytes - op.drain_bytes;
    op.min_body_ps = to_ps(std::max({vector, loads, stores}), "elementwise", c, chip);
    // Its fill is one load. In the body its load and store engines keep
    // transfers in service for their share of the body (each transfer at an
    // equal share among the cores' load and store transfers).
    op.fill_transfers = 1;
    op.body_transfers = body_transfers;
    op.engine_cycles = chunks * chunk_cycles;
    // Every chunk's vector op takes ceil(elements / chunks) of them.
    op.vector_flops = chunk_cycles > 0 ? double(chunks * ceil_div(elements, chunks)) * w.flops_per_element : 0.0;
    out.push_back(ck);
  }
  return out;
}

}  // namespace kernels
