// Kernel fidelity (kernels/kernel_ops.h, hw::KernelOp) against the blocked
// program it stands for (tile fidelity: every block's DMAs on the
// per-channel HBM, every step's MXU ops), the way the tile engine is tested
// against the PE engine: the same matmul or stream, run twice on a simulated
// chip, once as the blocked program and once as kernel ops. Time within 3%
// alone and 5% under contention (a concurrent stream, or concurrent DMA
// copies, on the same chip); HBM bytes and FLOPs exact. The copies stand in
// for an all-reduce: at tile fidelity a collective's reductions stay on the
// calendar model, apart from the chip's HBM, so the blocked program has no
// all-reduce to contend with; at kernel fidelity a reduction's share of HBM
// beside a kernel is checked against max-min formulas in
// tests/runtime/test_chip_reduction.cpp.
//
// TPUSIM_KERNEL_TABLE=1 prints every case's times (the table of the
// kernel-accuracy report).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <systemc>
#include <vector>

#include "hw/chip.h"
#include "hw/chip_config.h"
#include "hw/program.h"
#include "hw/sequencer.h"
#include "kernels/kernel_ops.h"
#include "kernels/matmul_kernel.h"
#include "kernels/train_kernels.h"
#include "nominal_chip.h"
#include "sim/kernel.h"
#include "sim/units.h"
#include "sim/yaml_node.h"

namespace test_kernel_ops {

namespace {

hw::ChipConfig chip_file(const std::string& name) {
  hw::ChipConfig c =
      hw::load_chip(sim::YamlNode::load_file(std::string(TPUSIM_SOURCE_DIR) + "/configs/chips/" + name + ".yaml"));
  if (name != "tpu-v5e") c.compute_efficiency = 1;  // nominal_chip.h: the fitted constants set aside
  return c;
}

bool print_table() { return std::getenv("TPUSIM_KERNEL_TABLE") != nullptr; }

// What a run on one chip measured.
struct Measured {
  std::uint64_t end_ps = 0;
  std::uint64_t read = 0, written = 0;
  std::uint64_t macs = 0;         // the MXUs' multiply-accumulates
  double vector_flops = 0;        // the vector units' FLOPs
  std::vector<hw::OpTiming> ops;  // when each op ran
};

Measured run_chip(const hw::ChipConfig& config, hw::Fidelity fidelity, const hw::Program& program) {
  sim::reset_kernel();
  hw::Chip chip("chip", config, fidelity);
  hw::Sequencer seq("seq", program, chip);
  sc_core::sc_start();
  seq.rethrow_failure();
  REQUIRE(seq.finished());
  Measured m;
  m.end_ps = seq.end_ps();
  m.read = chip.hbm_bytes_read();
  m.written = chip.hbm_bytes_written();
  for (const auto& mxu : chip.mxus()) m.macs += mxu->stats().macs;
  for (const auto& v : chip.vector_units()) m.vector_flops += v->flops();
  m.ops = seq.timings();
  return m;
}

double rel_error(double kernel, double tile) { return (kernel - tile) / tile; }

struct Worst {
  double err = 0;
  std::string what;
  void see(double e, const std::string& w) {
    if (std::abs(e) > std::abs(err)) {
      err = e;
      what = w;
    }
  }
  ~Worst() {
    if (print_table() && !what.empty()) std::printf("worst: %+.2f%% %s\n", 100 * err, what.c_str());
  }
};

struct MatmulShape {
  const char* chip;
  std::uint64_t m, k, n;
  hw::NumberFormat format = hw::NumberFormat::bf16;  // of A, B and C
};

const MatmulShape kAloneShapes[] = {
    // square
    {"tpu-v4", 128, 128, 128},
    {"tpu-v4", 256, 256, 256},
    {"tpu-v4", 512, 512, 512},
    {"tpu-v4", 1024, 1024, 1024},
    {"tpu-v4", 2048, 2048, 2048},
    {"tpu-v4", 4096, 4096, 4096},
    {"tpu-v4", 8192, 8192, 8192},
    {"tpu-v5e", 256, 256, 256},
    {"tpu-v5e", 1024, 1024, 1024},
    {"tpu-v5e", 2048, 2048, 2048},
    {"tpu-v5e", 4096, 4096, 4096},
    {"tpu-v5e", 8192, 8192, 8192},
    // skinny m
    {"tpu-v4", 8, 1024, 1024},
    {"tpu-v4", 8, 8192, 8192},
    {"tpu-v4", 16, 8192, 8192},
    {"tpu-v4", 32, 4096, 8192},
    {"tpu-v4", 64, 8192, 4096},
    {"tpu-v4", 128, 8192, 8192},
    {"tpu-v4", 256, 8192, 8192},
    {"tpu-v5e", 1, 8192, 28672},  // a decode step's MLP matmul (docs/serving.md)
    {"tpu-v5e", 8, 8192, 8192},
    {"tpu-v5e", 16, 4096, 4096},
    {"tpu-v5e", 64, 8192, 8192},
    {"tpu-v5e", 128, 8192, 8192},
    {"tpu-v5e", 256, 8192, 8192},
    // ragged in every dimension
    {"tpu-v4", 1000, 1000, 1000},
    {"tpu-v4", 129, 257, 385},
    {"tpu-v4", 4095, 4097, 1023},
    {"tpu-v4", 777, 3333, 129},
    {"tpu-v4", 333, 777, 1111},
    {"tpu-v5e", 333, 777, 1111},
    {"tpu-v5e", 1000, 3000, 500},
    {"tpu-v5e", 2049, 1023, 4097},
    {"tpu-v5e", 100, 10000, 300},
    // large k
    {"tpu-v4", 256, 65536, 256},
    {"tpu-v4", 1024, 32768, 1024},
    {"tpu-v4", 128, 131072, 128},
    {"tpu-v4", 2048, 65536, 2048},
    {"tpu-v5e", 512, 65536, 512},
    {"tpu-v5e", 128, 262144, 128},
    // wide n, tall m
    {"tpu-v4", 128, 128, 65536},
    {"tpu-v4", 65536, 128, 128},
    {"tpu-v4", 65536, 2048, 2048},
    {"tpu-v5e", 256, 512, 32768},
    {"tpu-v5e", 32768, 256, 512},
    // tiny
    {"tpu-v4", 1, 1, 1},
    {"tpu-v4", 7, 5, 3},
    {"tpu-v4", 8, 128, 128},
    {"tpu-v4", 1, 8192, 1},
    {"tpu-v4", 200, 8, 200},
    {"tpu-v5e", 1, 1, 1},
    {"tpu-v5e", 3, 300, 30},
    {"tpu-v5e", 128, 128, 128},
};

std::string describe(const MatmulShape& s, const kernels::MatmulBlocking& b) {
  return std::string(s.chip) + (s.format == hw::NumberFormat::bf16 ? "" : std::string(" ") + hw::to_string(s.format)) +
         " " + std::to_string(s.m) + "x" + std::to_string(s.k) + "x" + std::to_string(s.n) + " block " +
         std::to_string(b.bm) + "x" + std::to_string(b.bk) + "x" + std::to_string(b.bn) + " buf " +
         std::to_string(b.buffers) + " acc " + std::to_string(b.accumulators);
}

// Runs each shape alone at both fidelities: bytes and FLOPs exact, and
// (check_time) time within 3%.
template <typename Shapes>
void check_alone(const Shapes& shapes, bool check_time) {
  Worst worst;
  if (print_table()) std::printf("%-60s %12s %12s %8s\n", "matmul alone", "tile us", "kernel us", "error");
  for (const MatmulShape& s : shapes) {
    // The chip as the matmul's format sees it (its MXU rate), A, B and C in
    // the format, as kind: matmul runs it.
    const hw::ChipConfig chip = chip_file(s.chip).for_format(s.format);
    const std::uint64_t e = hw::element_bytes(s.format);
    const kernels::MatmulBlocking b = kernels::choose_blocking(chip, s.m, s.k, s.n, {}, {e, e, e});
    const std::string what = describe(s, b);
    INFO(what);
    const Measured tile =
        run_chip(chip, hw::Fidelity::tile, kernels::matmul_program(chip, hw::Fidelity::tile, s.m, s.k, s.n, b));
    const Measured kern =
        run_chip(chip, hw::Fidelity::kernel, kernels::matmul_program(chip, hw::Fidelity::kernel, s.m, s.k, s.n, b));
    const double err = rel_error(double(kern.end_ps), double(tile.end_ps));
    if (print_table())
      std::printf("%-60s %12.3f %12.3f %+7.2f%%\n", what.c_str(), tile.end_ps * 1e-6, kern.end_ps * 1e-6, 100 * err);
    worst.see(err, what);
    INFO("tile " << tile.end_ps << " ps, kernel " << kern.end_ps << " ps");
    if (check_time) CHECK(std::abs(err) <= 0.03);
    const kernels::MatmulTraffic traffic = kernels::matmul_traffic(s.m, s.k, s.n, b);
    CHECK(tile.read == traffic.hbm_read);
    CHECK(tile.written == traffic.hbm_written);
    CHECK(kern.read == tile.read);
    CHECK(kern.written == tile.written);
    CHECK(tile.macs == s.m * s.k * s.n);
    CHECK(kern.macs == tile.macs);
  }
}

}  // namespace

TEST_CASE("kernel ops: a matmul alone on a chip, within 3% of the blocked program, bytes and FLOPs exact",
          "[kernels][kernel-accuracy]") {
  check_alone(kAloneShapes, true);
}

namespace {

// 8-bit matmuls (one byte per element, the format's MAC rate): square,
// skinny, ragged and large-k shapes on every chip with the format
// (docs/calibration.md#number-formats).
constexpr auto kInt8 = hw::NumberFormat::int8;
constexpr auto kFp8 = hw::NumberFormat::fp8;
const MatmulShape kEightBitShapes[] = {
    {"tpu-v5e", 1024, 1024, 1024, kInt8}, {"tpu-v5e", 8192, 8192, 8192, kInt8}, {"tpu-v5e", 8, 8192, 8192, kInt8},
    {"tpu-v5e", 333, 777, 1111, kInt8},   {"tpu-v5e", 128, 262144, 128, kInt8}, {"tpu-v4", 4096, 4096, 4096, kInt8},
    {"tpu-v4", 64, 8192, 4096, kInt8},    {"tpu-v5p", 2048, 2048, 2048, kInt8}, {"tpu-v5p", 2048, 2048, 2048, kFp8},
    {"tpu-v5p", 16, 8192, 8192, kFp8},    {"tpu-v6e", 4096, 4096, 4096, kInt8}, {"tpu-v6e", 256, 8192, 8192, kInt8},
    {"tpu-7x", 4096, 4096, 4096, kFp8},   {"tpu-7x", 1000, 3000, 500, kFp8},
};

}  // namespace

TEST_CASE("kernel ops: an 8-bit matmul alone, within 3% of the blocked program, bytes and FLOPs exact",
          "[kernels][kernel-accuracy][formats]") {
  check_alone(kEightBitShapes, true);
}

namespace {

// Appends `from`'s ops to `to`, their dependencies still on one another.
void append(hw::Program& to, const hw::Program& from) {
  const auto offset = static_cast<std::uint32_t>(to.ops.size());
  for (hw::Op op : from.ops) {
    for (std::uint32_t& d : op.deps) d += offset;
    to.add(std::move(op));
  }
}

// The end of ops [from, to) of a run.
std::uint64_t end_of(const Measured& run, std::size_t from, std::size_t to) {
  std::uint64_t end = 0;
  for (std::size_t i = from; i < to; ++i) end = std::max(end, run.ops[i].end_ps);
  return end;
}

// Shapes for the runs under contention: compute-bound, memory-bound,
// ragged, large k, on both chips.
const MatmulShape kContendedShapes[] = {
    {"tpu-v4", 4096, 4096, 4096},  {"tpu-v4", 8, 8192, 8192},     {"tpu-v4", 1000, 1000, 1000},
    {"tpu-v4", 129, 257, 385},     {"tpu-v4", 256, 65536, 256},   {"tpu-v4", 8, 128, 128},
    {"tpu-v5e", 2048, 2048, 2048}, {"tpu-v5e", 64, 8192, 8192},   {"tpu-v5e", 1000, 3000, 500},
    {"tpu-v5e", 333, 777, 1111},   {"tpu-v5e", 128, 262144, 128}, {"tpu-v4", 333, 777, 1111},
};

// What a contended case compares: the matmul's end, the other flow's end.
struct Contended {
  std::uint64_t matmul_ps = 0, other_ps = 0;
  std::uint64_t read = 0, written = 0;
};

// The matmul of `s` and, beside it on the same chip, the ops `other` adds
// (after the matmul's ops, depending on none of them), at `fidelity`.
template <typename Other>
Contended run_contended(const hw::ChipConfig& chip, hw::Fidelity fidelity, const MatmulShape& s,
                        const kernels::MatmulBlocking& b, Other other) {
  hw::Program p = kernels::matmul_program(chip, fidelity, s.m, s.k, s.n, b);
  const std::size_t matmul_ops = p.ops.size();
  other(p, fidelity);
  const Measured run = run_chip(chip, fidelity, p);
  return {end_of(run, 0, matmul_ops), end_of(run, matmul_ops, p.ops.size()), run.read, run.written};
}

// `extra_dma_per_core`: DMA engines per core the chip gets beyond its own
// for the other flow's blocked program.
template <typename Other>
void check_contended(const char* title, Other make_other, std::uint32_t extra_dma_per_core = 0,
                     const std::vector<MatmulShape>& shapes = {std::begin(kContendedShapes),
                                                               std::end(kContendedShapes)},
                     bool check_time = true) {
  Worst worst;
  if (print_table())
    std::printf("%-50s %12s %12s %8s %12s %12s %8s\n", title, "tile mm us", "kernel mm", "error", "tile other",
                "kernel other", "error");
  for (const MatmulShape& s : shapes) {
    hw::ChipConfig chip = chip_file(s.chip);
    chip.dma_engines += extra_dma_per_core * chip.tensorcores;
    const kernels::MatmulBlocking b = kernels::choose_blocking(chip, s.m, s.k, s.n);
    const std::string what = describe(s, b);
    INFO(what);
    // The other flow is sized to the matmul alone (blocked program): its
    // bytes would take half the matmul's time at the whole HBM bandwidth.
    const Measured alone =
        run_chip(chip, hw::Fidelity::tile, kernels::matmul_program(chip, hw::Fidelity::tile, s.m, s.k, s.n, b));
    const auto bytes =
        static_cast<std::uint64_t>(0.5 * double(alone.end_ps) / sim::kPsPerSecond * chip.hbm.bandwidth_bytes_per_s);
    const auto other = make_other(chip, bytes);
    const Contended tile = run_contended(chip, hw::Fidelity::tile, s, b, other);
    const Contended kern = run_contended(chip, hw::Fidelity::kernel, s, b, other);
    const double mm_err = rel_error(double(kern.matmul_ps), double(tile.matmul_ps));
    const double other_err = rel_error(double(kern.other_ps), double(tile.other_ps));
    if (print_table())
      std::printf("%-50s %12.3f %12.3f %+7.2f%% %12.3f %12.3f %+7.2f%%\n", what.c_str(), tile.matmul_ps * 1e-6,
                  kern.matmul_ps * 1e-6, 100 * mm_err, tile.other_ps * 1e-6, kern.other_ps * 1e-6, 100 * other_err);
    worst.see(mm_err, what + " (matmul)");
    worst.see(other_err, what + " (other)");
    INFO("matmul: tile " << tile.matmul_ps << " ps, kernel " << kern.matmul_ps << " ps; other: tile " << tile.other_ps
                         << " ps, kernel " << kern.other_ps << " ps");
    if (check_time) {
      CHECK(std::abs(mm_err) <= 0.05);
      CHECK(std::abs(other_err) <= 0.05);
    }
    CHECK(kern.read == tile.read);
    CHECK(kern.written == tile.written);
  }
}

}  // namespace

namespace {

// The other flow of a contended case, `bytes` of HBM traffic: adds its ops
// to a program at a fidelity.
using OtherFlow = std::function<void(hw::Program&, hw::Fidelity)>;

// An elementwise layer beside the matmul: reads two BF16 tensors, writes
// one. Its blocked program runs on DMA engines of its own (the stream's
// engine indices moved past the matmul kernel's three per core: run with
// kExtraDma more per core), as its kernel op runs beside the matmul's.
constexpr std::uint32_t kExtraDma = 3;
OtherFlow stream_beside(const hw::ChipConfig& chip, std::uint64_t bytes) {
  const kernels::StreamWork w{bytes / 3 * 2, bytes / 3, bytes / 3 / 2, 4.0};
  return [&chip, w](hw::Program& p, hw::Fidelity fidelity) {
    hw::Program stream;
    kernels::append_stream(stream, chip, fidelity, w, {}, "stream");
    for (hw::Op& op : stream.ops)
      if (op.engine.kind == hw::EngineKind::dma) op.engine.index += kExtraDma;
    append(p, stream);
  };
}

// Copies in and out of HBM (as a collective's or an offload's would be) on
// each core's DMA engine the matmul kernel leaves free, 4 transfers per core.
OtherFlow copies_beside(const hw::ChipConfig& chip, std::uint64_t bytes) {
  const std::uint32_t per_core = chip.dma_engines / chip.tensorcores;
  REQUIRE(per_core > 3);
  const std::uint64_t piece = bytes / chip.tensorcores / 4;
  return [per_core, piece, cores = chip.tensorcores](hw::Program& p, hw::Fidelity) {
    for (std::uint32_t c = 0; c < cores; ++c)
      for (std::uint32_t i = 0; i < 4; ++i)
        p.add({"copy",
               {hw::EngineKind::dma, c * per_core + 3},
               hw::DmaOp{piece * (2 * c + i % 2), piece, i % 2 == 1},
               {},
               0});
  };
}

}  // namespace

TEST_CASE("kernel ops: a matmul beside a stream on the same chip, within 5% of the blocked program",
          "[kernels][kernel-accuracy]") {
  check_contended("matmul + stream", stream_beside, kExtraDma);
}

TEST_CASE("kernel ops: a matmul beside DMA copies on the same chip, within 5% of the blocked program",
          "[kernels][kernel-accuracy]") {
  check_contended("matmul + DMA copies", copies_beside);
}

// Open (issue 13): shapes where the kernel op is not yet within tolerance of
// the blocked program; their bytes and FLOPs are exact. With
// TPUSIM_KERNEL_TABLE=1 the table shows how far off they are. Measured at
// this commit, alone: 3000x200x5000 -3.2%,
// 8191x1025x8193 +13.6% (its two cores fall out of step after a ragged
// block, so their stores stop contending; the kernel op assumes them in
// step). Beside a stream / beside copies (the matmul's end, or the other
// flow's end where that is the worse): 1024x32768x1024 -6.5% / -5.7%
// (buffers: 2: a step's loads start only when the MXU frees the slot of two
// steps back, so once contention stretches the 4 MB A load to 25 us a step
// takes (MXU + loads) / 2 = 20.4 us against the MXU's 16.0 us, the loads
// idle while the MXU runs; a flow capped at the body's pace lets them move
// then: a cap that follows the share); 3000x200x5000 other +6.6% / +12.5%;
// 4095x4097x1023 (one accumulator) other -9.0% / -7.3%; 777x3333x129
// (ragged narrow n, two block rows: the MXU falls more than a step behind
// the loads, more than the pipeline's tail) -9.4% / -7.1%; v5e
// 2049x1023x4097 +8.7% / +9.6%; v5e 256x512x32768 (wide n, small k) +8.1%
// / other -7.8%. The mechanisms of the last two are not yet traced.
TEST_CASE("kernel ops: open gaps, bytes and FLOPs exact", "[kernels][kernel-accuracy]") {
  const MatmulShape alone[] = {{"tpu-v4", 3000, 200, 5000}, {"tpu-v4", 8191, 1025, 8193}};
  check_alone(alone, false);
  const std::vector<MatmulShape> contended = {{"tpu-v4", 1024, 32768, 1024}, {"tpu-v4", 3000, 200, 5000},
                                              {"tpu-v4", 4095, 4097, 1023},  {"tpu-v4", 777, 3333, 129},
                                              {"tpu-v5e", 2049, 1023, 4097}, {"tpu-v5e", 256, 512, 32768}};
  check_contended("matmul + stream (open)", stream_beside, kExtraDma, contended, false);
  check_contended("matmul + DMA copies (open)", copies_beside, 0, contended, false);
}

TEST_CASE("kernel ops: a stream alone on a chip, within 3% of the blocked program, bytes and FLOPs exact",
          "[kernels][kernel-accuracy]") {
  struct Case {
    const char* chip;
    kernels::StreamWork work;
  };
  constexpr std::uint64_t MiB = 1 << 20;
  const Case cases[] = {
      // memory-bound elementwise layers (2 reads, 1 write), small to large
      {"tpu-v4", {2 * MiB, 1 * MiB, MiB / 2, 1}},
      {"tpu-v4", {128 * MiB, 64 * MiB, 32 * MiB, 2}},
      {"tpu-v4", {2048 * MiB, 1024 * MiB, 512 * MiB, 2}},
      {"tpu-v5e", {64 * MiB, 32 * MiB, 16 * MiB, 2}},
      {"tpu-v5e", {1024 * MiB, 512 * MiB, 256 * MiB, 4}},
      // an optimizer update (Adam: parameter, gradient and two moments in and out)
      {"tpu-v4", {896 * MiB, 768 * MiB, 64 * MiB, 16}},
      // vector-bound
      {"tpu-v4", {64 * MiB, 32 * MiB, 32 * MiB, 200}},
      {"tpu-v5e", {16 * MiB, 16 * MiB, 8 * MiB, 300}},
      // ragged: bytes and elements not a multiple of the cores or chunks
      {"tpu-v4", {100000001, 33333333, 7777777, 3}},
      {"tpu-v5e", {77777777, 1, 123457, 5}},
      // loads only (a reduction), stores only (a fill)
      {"tpu-v4", {512 * MiB, 0, 256 * MiB, 1}},
      {"tpu-v5e", {0, 256 * MiB, 0, 0}},
  };
  Worst worst;
  if (print_table()) std::printf("%-60s %12s %12s %8s\n", "stream alone", "tile us", "kernel us", "error");
  for (const Case& c : cases) {
    const hw::ChipConfig chip = chip_file(c.chip);
    const std::string what = std::string(c.chip) + " load " + std::to_string(c.work.load_bytes) + " store " +
                             std::to_string(c.work.store_bytes) + " elements " + std::to_string(c.work.elements) +
                             " x " + std::to_string(c.work.flops_per_element);
    INFO(what);
    auto program = [&](hw::Fidelity f) {
      hw::Program p;
      kernels::append_stream(p, chip, f, c.work, {}, "stream");
      return p;
    };
    const Measured tile = run_chip(chip, hw::Fidelity::tile, program(hw::Fidelity::tile));
    const Measured kern = run_chip(chip, hw::Fidelity::kernel, program(hw::Fidelity::kernel));
    const double err = rel_error(double(kern.end_ps), double(tile.end_ps));
    if (print_table())
      std::printf("%-60s %12.3f %12.3f %+7.2f%%\n", what.c_str(), tile.end_ps * 1e-6, kern.end_ps * 1e-6, 100 * err);
    worst.see(err, what);
    INFO("tile " << tile.end_ps << " ps, kernel " << kern.end_ps << " ps");
    CHECK(std::abs(err) <= 0.03);
    CHECK(kern.read == tile.read);
    CHECK(kern.written == tile.written);
    CHECK(kern.vector_flops == tile.vector_flops);
  }
}

}  // namespace test_kernel_ops
