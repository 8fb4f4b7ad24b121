#include "kernels/train_kernels.h"

#include <algorithm>

#include "hw/mxu_timing.h"
#include "hw/number_format.h"
#include "kernels/kernel_launch.h"
#include "kernels/kernel_ops.h"
#include "kernels/matmul_kernel.h"
#include "kernels/program_append.h"
#include "sim/units.h"

namespace kernels {

namespace {

using sim::ceil_div;

// Divisors g of the block rows, largest first, for which g block rows fit
// VMEM together (the kernel moves g blocks per DMA) and every core keeps at
// least kMinStepsPerCore block steps.
std::vector<std::uint64_t> row_folds(const hw::ChipConfig& chip, const MatmulBlocking& b, std::uint64_t block_rows,
                                     std::uint64_t steps_per_block_row) {
  std::vector<std::uint64_t> out;
  const std::uint64_t cores = chip.tensorcores;
  for (std::uint64_t g = block_rows; g > 1; --g) {
    if (block_rows % g != 0 || g * b.vmem_bytes() > chip.vmem) continue;
    const std::uint64_t rows = block_rows / g;
    if (rows * steps_per_block_row >= kMinStepsPerCore * cores && rows >= cores) out.push_back(g);
  }
  return out;
}

// Rows for one MXU op that stands for g copies of `op`: g times its rows,
// plus enough rows to take the cycles the copies would spend reloading
// weights and draining the array between them (on a weight-stationary array
// hw::mxu_tile_cycles is linear in the rows, one cycle per weight tile per
// row, so the folded op's cycles match g ops' to within one row).
std::uint64_t folded_rows(const hw::ChipConfig& chip, const hw::MatmulOp& op, std::uint64_t g) {
  const auto cycles = [&](std::uint64_t rows) { return hw::mxu_tile_cycles(chip.mxu, {rows, op.k, op.n}); };
  const std::uint64_t apart = g * cycles(op.m);
  const std::uint64_t rows = g * op.m;
  const std::uint64_t folded = cycles(rows);
  if (folded >= apart) return rows;
  const std::uint64_t per_row = cycles(rows + 1) - folded;
  if (per_row > 0) return rows + (apart - folded) / per_row;
  // Output- and input-stationary arrays take whole tiles of rows: a row that
  // joins a tile already in the array can add no cycle. The most rows whose
  // op still fits the copies' cycles (cycles never fall as rows grow).
  std::uint64_t lo = rows, hi = rows + (apart - folded);
  while (lo < hi) {
    const std::uint64_t mid = lo + (hi - lo + 1) / 2;
    if (cycles(mid) <= apart) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

// Scales every op by g: DMA bytes, FLOPs, MXU time (folded_rows). False when
// a transfer would not fit HBM.
bool scale_program(hw::Program& p, std::uint64_t g, const hw::ChipConfig& chip) {
  for (auto& op : p.ops) {
    if (auto* mm = std::get_if<hw::MatmulOp>(&op.payload)) {
      mm->m = folded_rows(chip, *mm, g);
    } else if (auto* dma = std::get_if<hw::DmaOp>(&op.payload)) {
      dma->bytes *= g;
      if (dma->bytes > chip.hbm.capacity_bytes / 2) return false;
      dma->hbm_addr = std::min(dma->hbm_addr, chip.hbm.capacity_bytes - dma->bytes);
    }
    op.flops *= double(g);
  }
  return true;
}

// Moves the MXU ops of a program planned for `from` MXUs per core onto the
// first `from` of each core's `to` MXUs.
void spread_mxus(hw::Program& p, std::uint32_t from, std::uint32_t to) {
  if (from == to) return;
  for (auto& op : p.ops)
    if (op.engine.kind == hw::EngineKind::mxu) op.engine.index = op.engine.index / from * to + op.engine.index % from;
}

// Dynamic quantization of the two bf16 operands ahead of an 8-bit matmul,
// as AQT runs it in training (github.com/google/aqt, aqt/jax/v2; MaxText's
// int8 and fp8 training, layers/quantizations.py): a calibration pass
// reads the operand for its per-channel absolute maximum (abs, max: 2
// FLOPs per element), a quantization pass reads it again, scales, rounds
// and clips it and writes the 8-bit copy (4 FLOPs) that the matmul reads.
// Both operands are activations or freshly gathered weights, quantized at
// every use; the int32 product's rescale rides the matmul's output.
hw::Program after_quantizing(const hw::Program& matmul, const hw::ChipConfig& chip, hw::Fidelity fidelity,
                             std::uint64_t format_bytes, std::uint64_t a_elements, std::uint64_t b_elements) {
  hw::Program p;
  std::vector<std::uint32_t> ready;
  for (const auto& [operand, elements] : {std::pair{"A", a_elements}, std::pair{"B", b_elements}}) {
    const StreamWork quantize{2 * hw::kBf16Bytes * elements, format_bytes * elements, elements, 6};
    const auto done = append_stream(p, chip, fidelity, quantize, {}, std::string("quantize ") + operand);
    ready.insert(ready.end(), done.begin(), done.end());
  }
  append_program(p, matmul, ready, "");
  return p;
}

}  // namespace

const hw::Program& MatmulPrograms::get(std::uint64_t count, std::uint64_t m, std::uint64_t k, std::uint64_t n,
                                       const MatmulFusion& fusion, bool quantized) {
  const MatmulFusion f = fidelity_ == hw::Fidelity::kernel ? fusion : MatmulFusion{};
  quantized = quantized && format_ != hw::NumberFormat::bf16;
  const auto key = std::make_pair(std::array<std::uint64_t, 5>{count, m, k, n, quantized ? 1u : 0u}, f);
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  // A quantized matmul is planned on the chip as its format sees it, a bf16
  // one (and a weight-only one, whose MXU work is bf16) on the chip itself
  // and then moved onto the simulated chip's arrays.
  const bool weight_only = quantized && operands_ == OperandQuantization::weight_only;
  const hw::ChipConfig chip = quantized && !weight_only ? simulated_chip() : chip_;
  const std::uint64_t stored = quantized ? hw::element_bytes(format_) : hw::kBf16Bytes;
  const ElementBytes bytes{weight_only ? hw::kBf16Bytes : stored, stored, hw::kBf16Bytes};
  const MatmulBlocking b = choose_blocking(chip, m, k, n, f, bytes);
  const std::uint64_t rows = count * m;
  hw::Program prog;
  if (fidelity_ == hw::Fidelity::kernel) {
    prog = matmul_program(chip, fidelity_, rows, k, n, b, {}, f);
  } else {
    bool folded = false;
    if (rows % b.bm == 0) {
      for (std::uint64_t g : row_folds(chip, b, rows / b.bm, ceil_div(n, b.bn) * ceil_div(k, b.bk))) {
        prog = plan_matmul(chip, rows / g, k, n, b).program;
        if ((folded = scale_program(prog, g, chip))) break;
      }
    }
    if (!folded) prog = plan_matmul(chip, rows, k, n, b).program;
  }
  spread_mxus(prog, chip.mxus_per_core, simulated_chip().mxus_per_core);
  if (quantized && operands_ == OperandQuantization::at_use)
    prog = after_quantizing(prog, chip, fidelity_, bytes.a, count * m * k, count * k * n);
  return cache_.emplace(key, std::move(prog)).first->second;
}

std::vector<std::uint32_t> append_stream(hw::Program& prog, const hw::ChipConfig& chip, hw::Fidelity fidelity,
                                         const StreamWork& work, const std::vector<std::uint32_t>& deps,
                                         const std::string& name) {
  if (fidelity == hw::Fidelity::kernel) {
    if (work.load_bytes == 0 && work.store_bytes == 0 && (work.elements == 0 || work.flops_per_element == 0))
      return deps;
    const std::vector<std::uint32_t> start = append_launch(prog, chip, deps, name);
    std::vector<std::uint32_t> sinks;
    for (const CoreKernel& ck :
         stream_kernel_ops(chip, {work.load_bytes, work.store_bytes, work.elements, work.flops_per_element}))
      sinks.push_back(prog.add({name, {hw::EngineKind::vector, ck.core}, ck.op, start, ck.op.vector_flops}));
    return sinks;
  }
  const std::uint32_t cores = chip.tensorcores;
  const std::uint64_t load = ceil_div(work.load_bytes, cores), store = ceil_div(work.store_bytes, cores);
  const std::uint64_t elements = ceil_div(work.elements, cores);
  const std::uint64_t chunks = stream_chunks(chip, load, store);
  const bool compute = elements > 0 && work.flops_per_element > 0;
  if (load == 0 && store == 0 && !compute) return deps;
  const std::vector<std::uint32_t> start = append_launch(prog, chip, deps, name);
  std::vector<std::uint32_t> sinks;
  for (std::uint32_t c = 0; c < cores; ++c) {
    // The matmul kernel's engines: its first load engine, its store engine.
    const CoreDmaEngines dma = core_dma_engines(chip, c);
    for (std::uint64_t i = 0; i < chunks; ++i) {
      std::vector<std::uint32_t> after = start;
      if (load > 0)
        after = {prog.add({name + " load",
                           {hw::EngineKind::dma, dma.load(0)},
                           hw::DmaOp{0, ceil_div(load, chunks), false},
                           after,
                           0})};
      if (compute) {
        const std::uint64_t e = ceil_div(elements, chunks);
        after = {prog.add({name,
                           {hw::EngineKind::vector, c},
                           hw::VectorOp{e, work.flops_per_element},
                           after,
                           double(e) * work.flops_per_element})};
      }
      if (store > 0)
        after = {prog.add({name + " store",
                           {hw::EngineKind::dma, dma.store},
                           hw::DmaOp{0, ceil_div(store, chunks), true},
                           after,
                           0})};
      sinks.insert(sinks.end(), after.begin(), after.end());
    }
  }
  return sinks;
}

}  // namespace kernels
