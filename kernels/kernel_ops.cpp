#include "kernels/kernel_ops.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "sim/units.h"

namespace kernels {

namespace {

using sim::ceil_div;
using sim::kBf16Bytes;

// What one core's blocks add up to.
struct CoreSum {
  std::uint64_t blocks = 0;
  std::uint64_t read = 0, written = 0;
  std::uint64_t mxu_cycles = 0;
  double body_s = 0;  // least time of every block step
  std::uint64_t macs = 0;
};

// The least time of one block step of `step_bytes` loads and `mxu_cycles`
// of MXU work, as the blocked program runs it (docs/matmul.md): the MXUs,
// the loads at the core's share of HBM bandwidth, and `buffers` VMEM slots
// each cycling through an access latency, a load and the MXU work.
double step_time(const hw::ChipConfig& chip, std::uint32_t buffers, std::uint64_t step_bytes,
                 std::uint64_t mxu_cycles) {
  const double c = double(mxu_cycles) / chip.clock;
  const double l_bw = double(step_bytes) * chip.tensorcores / chip.hbm.bandwidth_bytes_per_s;
  return std::max({c, l_bw, (chip.hbm.latency_s + l_bw + c) / buffers});
}

// `count` blocks of rows x cols, each walking the k steps.
void add_blocks(CoreSum& s, const hw::ChipConfig& chip, const MatmulBlocking& b, std::uint64_t k, std::uint64_t rows,
                std::uint64_t cols, std::uint64_t count) {
  if (count == 0) return;
  const std::uint64_t kb = ceil_div(k, b.bk), k_tail = k - (kb - 1) * b.bk;
  const std::uint64_t c_full = kb > 1 ? block_step_cycles(chip, rows, b.bk, cols) : 0;
  const std::uint64_t c_tail = block_step_cycles(chip, rows, k_tail, cols);
  const double t_full = kb > 1 ? step_time(chip, b.buffers, kBf16Bytes * (rows + cols) * b.bk, c_full) : 0.0;
  const double t_tail = step_time(chip, b.buffers, kBf16Bytes * (rows + cols) * k_tail, c_tail);
  s.blocks += count;
  s.read += count * kBf16Bytes * (rows * k + k * cols);
  s.written += count * kBf16Bytes * rows * cols;
  s.mxu_cycles += count * ((kb - 1) * c_full + c_tail);
  s.body_s += double(count) * (double(kb - 1) * t_full + t_tail);
  s.macs += count * rows * cols * k;
}

std::uint64_t to_ps(double seconds) { return static_cast<std::uint64_t>(std::ceil(seconds * sim::kPsPerSecond)); }

}  // namespace

std::vector<CoreKernel> matmul_kernel_ops(const hw::ChipConfig& chip, std::uint64_t m, std::uint64_t k, std::uint64_t n,
                                          const MatmulBlocking& b) {
  const std::uint32_t cores = chip.tensorcores;
  const std::uint64_t mb = ceil_div(m, b.bm), nb = ceil_div(n, b.bn), kb = ceil_div(k, b.bk);
  const std::uint64_t m_tail = m - (mb - 1) * b.bm, n_tail = n - (nb - 1) * b.bn;
  const std::uint64_t blocks = mb * nb;
  auto rows_of = [&](std::uint64_t bi) { return bi + 1 < mb ? b.bm : m_tail; };
  auto cols_of = [&](std::uint64_t bj) { return bj + 1 < nb ? b.bn : n_tail; };
  std::vector<CoreKernel> out;
  for (std::uint32_t c = 0; c < cores && c < blocks; ++c) {
    // Block bi * nb + bj goes to core (bi * nb + bj) % cores (plan_matmul).
    // Per block row, count this core's full-width blocks and whether it
    // also has the ragged last column: O(block rows), not O(blocks).
    CoreSum s;
    for (std::uint64_t bi = 0; bi < mb; ++bi) {
      const std::uint64_t first = (c + cores - (bi * nb) % cores) % cores;  // its first bj in this row
      if (first >= nb) continue;
      const std::uint64_t mine = (nb - 1 - first) / cores + 1;
      const bool tail = (nb - 1 - first) % cores == 0;
      add_blocks(s, chip, b, k, rows_of(bi), b.bn, mine - (tail ? 1 : 0));
      if (tail) add_blocks(s, chip, b, k, rows_of(bi), n_tail, 1);
    }
    // The first block's first step loads before any MXU work; the last
    // block's store follows the last.
    const std::uint64_t first_rows = rows_of(c / nb), first_cols = cols_of(c % nb);
    const std::uint64_t depth = kb > 1 ? b.bk : k;
    const std::uint64_t last = c + (blocks - 1 - c) / cores * cores;
    CoreKernel ck;
    ck.core = c;
    hw::KernelOp& op = ck.op;
    op.read_bytes = s.read;
    op.written_bytes = s.written;
    op.fill_bytes = kBf16Bytes * (first_rows + first_cols) * depth;
    op.drain_bytes = kBf16Bytes * rows_of(last / nb) * cols_of(last % nb);
    op.body_bytes = s.read + s.written - op.fill_bytes - op.drain_bytes;
    op.min_body_ps = to_ps(s.body_s);
    op.engine_cycles = s.mxu_cycles;
    op.macs = s.macs;
    out.push_back(ck);
  }
  return out;
}

hw::Program matmul_program(const hw::ChipConfig& chip, hw::Fidelity fidelity, std::uint64_t m, std::uint64_t k,
                           std::uint64_t n, const MatmulBlocking& blocking, const MatmulData& data) {
  if (fidelity != hw::Fidelity::kernel) return plan_matmul(chip, m, k, n, blocking, data).program;
  if (data.a) throw std::logic_error("matmul_program: functional operands need tile or pe fidelity");
  hw::Program p;
  for (const CoreKernel& ck : matmul_kernel_ops(chip, m, k, n, blocking))
    p.add(hw::Op{"matmul core " + std::to_string(ck.core),
                 {hw::EngineKind::mxu, ck.core * chip.mxus_per_core},
                 ck.op,
                 {},
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
  const double share = chip.hbm.bandwidth_bytes_per_s / cores;
  const double lat = chip.hbm.latency_s;
  const double loads = load > 0 ? double(chunks - 1) * (lat + double(chunk_load) / share) : 0.0;
  const double stores = store > 0 ? double(chunks - 1) * (lat + double(chunk_store) / share) : 0.0;
  const double vector = double(chunks * chunk_cycles) / chip.clock;
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
    op.min_body_ps = to_ps(std::max({vector, loads, stores}));
    op.engine_cycles = chunks * chunk_cycles;
    op.vector_flops = double(elements) * w.flops_per_element;
    out.push_back(ck);
  }
  return out;
}

}  // namespace kernels
