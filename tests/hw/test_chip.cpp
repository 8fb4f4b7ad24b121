// hw::Chip under hw::Sequencer: every op takes its unit's closed-form time
// (MXU tile cycles, vector cycles, an uncontended DMA's latency + bytes /
// bandwidth), ops on one unit run back to back, an op of no time completes
// in the delta cycle it started in; a functional matmul adds its product
// when it completes; an MXU op watched cycle by cycle runs in a thread of
// its own at the same times; errors at start and later reach
// Sequencer::rethrow_failure.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <systemc>
#include <vector>

#include "hw/chip.h"
#include "hw/mxu_timing.h"
#include "hw/program.h"
#include "hw/sequencer.h"
#include "sim/error.h"
#include "sim/kernel.h"

namespace test_chip {

namespace {

using hw::EngineKind;

constexpr std::uint64_t kPeriodPs = 1000;   // 1 GHz
constexpr std::uint64_t kLatencyPs = 1000;  // HBM access latency

// A small chip: 1 GHz, 2 MXUs of 8x8, one vector unit of 16 FLOPs/cycle,
// 2 DMA engines on a 1 byte/ps, 4-channel HBM with 1 ns latency.
hw::ChipConfig small_chip() {
  hw::ChipConfig c;
  c.name = "test";
  c.clock = 1e9;
  c.tensorcores = 1;
  c.mxus_per_core = 2;
  c.mxu.rows = 8;
  c.mxu.cols = 8;
  c.vector_flops_per_cycle = 16;
  c.vmem = 1 << 20;
  c.hbm.capacity_bytes = std::uint64_t{4} << 30;
  c.hbm.channels = 4;
  c.hbm.bandwidth_bytes_per_s = 1e12;
  c.hbm.latency_s = 1e-9;
  c.hbm.interleave_bytes = 256;
  c.dma_engines = 2;
  return c;
}

hw::Op engine_op(const std::string& name, hw::EngineRef engine, hw::OpPayload payload,
                 std::vector<std::uint32_t> deps) {
  hw::Op o;
  o.name = name;
  o.engine = engine;
  o.payload = std::move(payload);
  o.deps = std::move(deps);
  return o;
}

std::uint64_t tile_ps(std::uint64_t m, std::uint64_t k, std::uint64_t n) {
  return hw::mxu_tile_cycles(small_chip().mxu, {m, k, n}) * kPeriodPs;
}

// Sees every cycle of MXU 0's ops, and when each drained.
struct CycleLog : hw::MxuCycleHook {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> cycles;  // (cycle, ps)
  std::vector<std::uint64_t> idle_ps;
  std::uint64_t throw_at = ~std::uint64_t{0};
  void on_cycle(const hw::ArrayStateView& view) override {
    if (view.cycle == throw_at) throw std::runtime_error("hook failed");
    cycles.emplace_back(view.cycle, sc_core::sc_time_stamp().value());
  }
  void on_idle() override { idle_ps.push_back(sc_core::sc_time_stamp().value()); }
};

}  // namespace

TEST_CASE("chip: each op takes its unit's closed-form time, one op per unit at a time", "[chip]") {
  hw::Program p;
  // 4096 bytes from 0: 1024 on each channel at 0.25 B/ps, then the latency.
  const std::uint64_t dma_ps = 4096 * 4 / 4 + kLatencyPs;
  const auto ld = p.add(engine_op("ld", {EngineKind::dma, 0}, hw::DmaOp{0, 4096, false}, {}));
  const auto mm = p.add(engine_op("mm", {EngineKind::mxu, 0}, hw::MatmulOp{16, 24, 8}, {ld}));
  const auto mm1 = p.add(engine_op("mm1", {EngineKind::mxu, 1}, hw::MatmulOp{8, 8, 8}, {}));
  const auto mm1b = p.add(engine_op("mm1b", {EngineKind::mxu, 1}, hw::MatmulOp{40, 8, 16}, {}));
  const auto v = p.add(engine_op("v", {EngineKind::vector, 0}, hw::VectorOp{4 * 16, 1.0}, {mm}));
  const auto v2 = p.add(engine_op("v2", {EngineKind::vector, 0}, hw::VectorOp{3 * 16, 2.0}, {}));
  const auto z = p.add(engine_op("z", {EngineKind::vector, 0}, hw::VectorOp{0, 1.0}, {v2}));
  const auto st = p.add(engine_op("st", {EngineKind::dma, 1}, hw::DmaOp{65536, 4096, true}, {z}));

  sim::reset_kernel();
  hw::Chip chip("chip", small_chip(), hw::Fidelity::tile);
  hw::Sequencer seq("seq", p, chip);
  sc_core::sc_start();
  seq.rethrow_failure();
  REQUIRE(seq.finished());

  std::vector<std::pair<std::uint64_t, std::uint64_t>> want(p.ops.size());
  want[ld] = {0, dma_ps};
  want[mm] = {dma_ps, dma_ps + tile_ps(16, 24, 8)};
  want[mm1] = {0, tile_ps(8, 8, 8)};
  want[mm1b] = {want[mm1].second, want[mm1].second + tile_ps(40, 8, 16)};  // back to back on MXU 1
  want[v] = {want[mm].second, want[mm].second + 4 * kPeriodPs};
  want[v2] = {want[v].second, want[v].second + 6 * kPeriodPs};  // waits for the unit, not for v
  want[z] = {want[v2].second, want[v2].second};                 // no time
  want[st] = {want[z].second, want[z].second + dma_ps};
  const auto& t = seq.timings();
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    INFO("op " << p.ops[i].name);
    CHECK(t[i].start_ps == want[i].first);
    CHECK(t[i].end_ps == want[i].second);
  }
  CHECK(seq.end_ps() == std::max(want[st].second, want[mm1b].second));

  CHECK(chip.mxus()[0]->stats().ops == 1);
  CHECK(chip.mxus()[1]->stats().ops == 2);
  CHECK(chip.mxus()[1]->stats().busy_cycles * kPeriodPs == tile_ps(8, 8, 8) + tile_ps(40, 8, 16));
  CHECK(chip.mxus()[1]->stats().macs == 8 * 8 * 8 + 40 * 8 * 16);
  CHECK(chip.vector_units()[0]->operations() == 3);
  CHECK(chip.vector_units()[0]->busy_cycles() == 10);
  CHECK(chip.hbm().bytes_read() == 4096);
  CHECK(chip.hbm().bytes_written() == 4096);
  CHECK(chip.dma_busy_s() == Approx(2 * dma_ps * 1e-12).epsilon(1e-12));
}

TEST_CASE("chip: an op of no time completes in the delta cycle it started in", "[chip]") {
  // z takes no cycles: it completes inside its start, so v3 (same unit)
  // starts in that delta cycle too, and st (another engine, woken by z) in
  // the next one.
  hw::Program p;
  const auto v = p.add(engine_op("v", {EngineKind::vector, 0}, hw::VectorOp{16, 1.0}, {}));
  const auto z = p.add(engine_op("z", {EngineKind::vector, 0}, hw::VectorOp{0, 1.0}, {v}));
  const auto v3 = p.add(engine_op("v3", {EngineKind::vector, 0}, hw::VectorOp{16, 1.0}, {}));
  const auto st = p.add(engine_op("st", {EngineKind::dma, 0}, hw::DmaOp{0, 256, true}, {z}));
  sim::reset_kernel();
  hw::Chip chip("chip", small_chip(), hw::Fidelity::tile);
  hw::Sequencer seq("seq", p, chip);
  // At v's end (the first delta cycle of that time, after the chip's timer
  // method) st has not started; one delta cycle later it has.
  std::uint64_t at_end = 9, one_later = 9;
  sc_core::sc_spawn([&] {
    sc_core::wait(sc_core::sc_time::from_value(kPeriodPs));
    at_end = chip.hbm().transfers();
    sc_core::wait(sc_core::SC_ZERO_TIME);
    one_later = chip.hbm().transfers();
  });
  sc_core::sc_start();
  REQUIRE(seq.finished());
  const auto& t = seq.timings();
  CHECK(t[z].start_ps == kPeriodPs);
  CHECK(t[z].end_ps == kPeriodPs);
  CHECK(t[v3].start_ps == kPeriodPs);
  CHECK(t[v3].end_ps == 2 * kPeriodPs);
  CHECK(t[st].start_ps == kPeriodPs);
  CHECK(at_end == 0);
  CHECK(one_later == 1);
}

TEST_CASE("chip: a functional matmul adds its product into the accumulators when it completes", "[chip]") {
  // Y (4 x 8) += A (4 x 16) x B (16 x 8), split along k over the two MXUs,
  // both adding into the same Y. Small integers: every sum is exact.
  constexpr std::uint64_t m = 4, k = 16, n = 8;
  std::vector<hw::bf16> a(m * k), b(k * n);
  for (std::uint64_t i = 0; i < a.size(); ++i) a[i] = hw::bf16::from_float(float(int(i % 7) - 3));
  for (std::uint64_t i = 0; i < b.size(); ++i) b[i] = hw::bf16::from_float(float(int(i % 5) - 2));
  std::vector<float> y(m * n, 0.0f);
  hw::Program p;
  p.add(engine_op("lo", {EngineKind::mxu, 0}, hw::MatmulOp{m, k / 2, n, a.data(), k, b.data(), n, y.data(), n}, {}));
  p.add(engine_op("hi", {EngineKind::mxu, 1},
                  hw::MatmulOp{m, k / 2, n, a.data() + k / 2, k, b.data() + k / 2 * n, n, y.data(), n}, {}));
  sim::reset_kernel();
  hw::Chip chip("chip", small_chip(), hw::Fidelity::tile);
  hw::Sequencer seq("seq", p, chip);
  sc_core::sc_start(sc_core::sc_time::from_value(1));
  CHECK(std::all_of(y.begin(), y.end(), [](float v) { return v == 0.0f; }));  // started, not done
  sc_core::sc_start();
  seq.rethrow_failure();
  REQUIRE(seq.finished());
  for (std::uint64_t i = 0; i < m; ++i)
    for (std::uint64_t j = 0; j < n; ++j) {
      double want = 0;
      for (std::uint64_t x = 0; x < k; ++x) want += double(a[i * k + x].to_float()) * double(b[x * n + j].to_float());
      INFO("y[" << i << "][" << j << "]");
      CHECK(double(y[i * n + j]) == want);
    }
}

TEST_CASE("chip: an MXU op watched cycle by cycle runs in a thread of its own, at the same times", "[chip]") {
  hw::Program p;
  const auto a = p.add(engine_op("a", {EngineKind::mxu, 0}, hw::MatmulOp{12, 8, 8}, {}));
  const auto b = p.add(engine_op("b", {EngineKind::mxu, 0}, hw::MatmulOp{4, 16, 8}, {}));
  const auto c = p.add(engine_op("c", {EngineKind::mxu, 1}, hw::MatmulOp{12, 8, 8}, {}));  // no hook
  const auto d = p.add(engine_op("d", {EngineKind::vector, 0}, hw::VectorOp{16, 1.0}, {a}));
  sim::reset_kernel();
  hw::Chip chip("chip", small_chip(), hw::Fidelity::pe);
  CycleLog log;
  chip.mxus()[0]->set_cycle_hook(&log);
  hw::Sequencer seq("seq", p, chip);
  sc_core::sc_start();
  seq.rethrow_failure();
  REQUIRE(seq.finished());
  const auto& t = seq.timings();
  const std::uint64_t ta = tile_ps(12, 8, 8), tb = tile_ps(4, 16, 8);
  CHECK(t[a].start_ps == 0);
  CHECK(t[a].end_ps == ta);
  CHECK(t[b].start_ps == ta);
  CHECK(t[b].end_ps == ta + tb);
  CHECK(t[c].end_ps == ta);  // the same op without a hook: begin(), same cycles
  CHECK(t[d].start_ps == ta);
  // Cycle j of an op at its start + j periods; idle when it has drained.
  REQUIRE(log.cycles.size() == (ta + tb) / kPeriodPs);
  for (std::size_t i = 0; i < log.cycles.size(); ++i) {
    const std::uint64_t op_start = i < ta / kPeriodPs ? 0 : ta;
    CHECK(log.cycles[i].second == op_start + log.cycles[i].first * kPeriodPs);
  }
  CHECK(log.idle_ps == std::vector<std::uint64_t>{ta, ta + tb});
  CHECK(chip.mxus()[0]->stats().ops == 2);
}

TEST_CASE("chip: a failure in an MXU op's own thread reaches the sequencer", "[chip]") {
  hw::Program p;
  p.add(engine_op("a", {EngineKind::mxu, 0}, hw::MatmulOp{12, 8, 8}, {}));
  p.add(engine_op("b", {EngineKind::vector, 0}, hw::VectorOp{16, 1.0}, {0}));
  sim::reset_kernel();
  hw::Chip chip("chip", small_chip(), hw::Fidelity::pe);
  CycleLog log;
  log.throw_at = 3;
  chip.mxus()[0]->set_cycle_hook(&log);
  hw::Sequencer seq("seq", p, chip);
  sc_core::sc_start();
  CHECK_THROWS_WITH(seq.rethrow_failure(), "hook failed");
  CHECK(seq.pending_ops() == std::vector<std::uint32_t>{0, 1});
  CHECK(sc_core::sc_time_stamp().value() == 3 * kPeriodPs);
}

TEST_CASE("chip: a DMA outside HBM fails at start with a SimFailure, which the sequencer rethrows", "[chip][dma]") {
  hw::Program p;
  const auto ok = p.add(engine_op("ok", {EngineKind::dma, 0}, hw::DmaOp{0, 4096, false}, {}));
  p.add(engine_op("bad", {EngineKind::dma, 0}, hw::DmaOp{(std::uint64_t{4} << 30) - 10, 4096, false}, {}));
  p.add(engine_op("after", {EngineKind::vector, 0}, hw::VectorOp{16, 1.0}, {ok + 1}));
  sim::reset_kernel();
  hw::Chip chip("chip", small_chip(), hw::Fidelity::tile);
  hw::Sequencer seq("seq", p, chip);
  sc_core::sc_start();
  CHECK_THROWS_AS(seq.rethrow_failure(), sim::SimFailure);
  CHECK(seq.pending_ops() == std::vector<std::uint32_t>{1, 2});
  CHECK(seq.timings()[ok].end_ps == 4096 + kLatencyPs);
  CHECK(sc_core::sc_time_stamp().value() == 4096 + kLatencyPs);  // stopped when bad failed
  CHECK(chip.dma_engines()[0]->transfers() == 1);
}

TEST_CASE("chip: an ICI op needs the pod's network", "[chip]") {
  hw::Program p;
  p.add(engine_op("allreduce", {EngineKind::ici, 0}, hw::CommOp{0}, {}));
  sim::reset_kernel();
  hw::Chip chip("chip", small_chip(), hw::Fidelity::tile);
  hw::Sequencer seq("seq", p, chip);
  sc_core::sc_start();
  CHECK_THROWS_AS(seq.rethrow_failure(), std::logic_error);
  CHECK_FALSE(seq.finished());
}

namespace {

// Double-buffered tiles: DMAs on two engines share HBM while the MXUs and
// the vector unit work, with cross-engine dependencies. Tile t loads and
// stores on engine t % 2, so the two engines' transfers overlap (a store on
// the other engine would queue every load behind a store that waits for the
// vector unit, and nothing would ever share HBM).
hw::Program contending_program() {
  hw::Program p;
  std::uint32_t prev_mm[2] = {UINT32_MAX, UINT32_MAX};
  for (std::uint64_t t = 0; t < 6; ++t) {
    const std::uint32_t dma = static_cast<std::uint32_t>(t % 2), mxu = dma;
    std::vector<std::uint32_t> ld_deps;
    if (prev_mm[mxu] != UINT32_MAX) ld_deps.push_back(prev_mm[mxu]);
    const auto ld = p.add(engine_op("ld" + std::to_string(t), {EngineKind::dma, dma},
                                    hw::DmaOp{t * 100000, 4096 + 512 * t, false}, ld_deps));
    const auto mm = p.add(engine_op("mm" + std::to_string(t), {EngineKind::mxu, mxu},
                                    hw::MatmulOp{16 + 8 * t, 24, 8 + 8 * (t % 3)}, {ld}));
    prev_mm[mxu] = mm;
    const auto v =
        p.add(engine_op("v" + std::to_string(t), {EngineKind::vector, 0}, hw::VectorOp{1000 * (t + 1), 2.0}, {mm}));
    p.add(engine_op("st" + std::to_string(t), {EngineKind::dma, dma}, hw::DmaOp{(t + 10) * 100000, 5000, true}, {v}));
  }
  return p;
}

std::vector<hw::OpTiming> run_on_small_chip(const hw::Program& p) {
  sim::reset_kernel();
  hw::Chip chip("chip", small_chip(), hw::Fidelity::tile);
  hw::Sequencer seq("seq", p, chip);
  sc_core::sc_start();
  seq.rethrow_failure();
  REQUIRE(seq.finished());
  return seq.timings();
}

}  // namespace

TEST_CASE("chip: DMAs that share HBM take longer than the same transfer alone", "[chip][dma]") {
  // A bound such as "this transfer takes more than its bytes / bandwidth"
  // holds with no contention at all, so each transfer is compared with an
  // actual run of it on a chip with no competing stream.
  const hw::Program p = contending_program();
  const std::vector<hw::OpTiming> mixed = run_on_small_chip(p);
  std::size_t dmas = 0, slowed = 0;
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    if (p.ops[i].engine.kind != EngineKind::dma) continue;
    hw::Program alone;
    hw::Op op = p.ops[i];
    op.deps.clear();
    alone.add(std::move(op));
    const hw::OpTiming t = run_on_small_chip(alone)[0];
    const std::uint64_t alone_ps = t.end_ps - t.start_ps, shared_ps = mixed[i].end_ps - mixed[i].start_ps;
    INFO(p.ops[i].name << ": " << shared_ps << " ps beside the others, " << alone_ps << " ps alone");
    CHECK(shared_ps >= alone_ps);  // sharing never speeds a transfer up
    ++dmas;
    if (shared_ps > alone_ps) ++slowed;
  }
  CHECK(dmas == 12);  // 6 loads and 6 stores
  CHECK(slowed > 0);
}

}  // namespace test_chip
