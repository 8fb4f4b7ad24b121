#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <algorithm>
#include <catch2/catch.hpp>
#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "broadcast_sequencer.h"
#include "hw/chip.h"
#include "hw/dma.h"
#include "hw/hbm.h"
#include "hw/program.h"
#include "sim/error.h"
#include "sim/kernel.h"

namespace {

// The non-blocking paths of hw::Chip (start) and hw::DmaEngine/hw::Hbm
// (TLM-2.0 AT) against their blocking counterparts on the same scenarios.

constexpr std::uint64_t kNs = 1000;  // ps

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

// Double-buffered tiles: DMAs on two engines contend for HBM while the MXUs
// and the vector unit work, with cross-engine dependencies. Tile t loads and
// stores on engine t % 2, so the two engines' transfers overlap (a store on
// the other engine would queue every load behind a store that waits for the
// vector unit, and nothing would ever share HBM).
hw::Program mixed_program() {
  using hw::EngineKind;
  hw::Program p;
  std::vector<std::uint32_t> prev_mm(2, UINT32_MAX);
  for (std::uint32_t t = 0; t < 6; ++t) {
    const std::uint32_t dma = t % 2, mxu = t % 2;
    std::vector<std::uint32_t> ld_deps;
    if (prev_mm[mxu] != UINT32_MAX) ld_deps.push_back(prev_mm[mxu]);
    const auto ld = p.add(engine_op("ld" + std::to_string(t), {EngineKind::dma, dma},
                                    hw::DmaOp{t * 100000 + 37, 3000 + 1000 * t, false}, ld_deps));
    const auto mm = p.add(engine_op("mm" + std::to_string(t), {EngineKind::mxu, mxu},
                                    hw::MatmulOp{16 + 8 * t, 24, 8 + 8 * (t % 3)}, {ld}));
    prev_mm[mxu] = mm;
    const auto v =
        p.add(engine_op("v" + std::to_string(t), {EngineKind::vector, 0}, hw::VectorOp{1000 * (t + 1), 2.0}, {mm}));
    p.add(engine_op("st" + std::to_string(t), {EngineKind::dma, dma}, hw::DmaOp{(t + 10) * 100000, 5000, true}, {v}));
  }
  // One DMA longer than a TLM payload (split into chunks) at the end.
  p.add(engine_op("big", {EngineKind::dma, 0}, hw::DmaOp{0, (std::uint64_t{1} << 30) + 4096, false},
                  {static_cast<std::uint32_t>(p.ops.size() - 1)}));
  return p;
}

// The sequencer before it was event-driven: one thread per engine instance
// running its ops in program order through the blocking Chip::execute.
std::vector<hw::OpTiming> run_with_threads(const hw::Program& p, hw::Chip& chip) {
  return testing_hw::run_broadcast_sequencer(p, [&chip](const hw::Op& op) { chip.execute(op); }).timings;
}

// An event-driven runner over Chip::start: an op starts when it heads its
// engine's queue, the engine is idle and its dependencies are done; starts
// happen inside completion callbacks, with no thread anywhere.
struct AsyncRunner {
  const hw::Program& p;
  hw::Chip& chip;
  std::vector<hw::OpTiming> t;
  std::vector<char> done;
  testing_hw::EngineQueues queues;
  std::vector<std::size_t> head;
  std::vector<char> busy;
  std::size_t completed = 0;

  AsyncRunner(const hw::Program& prog, hw::Chip& c)
      : p(prog), chip(c), t(prog.ops.size()), done(prog.ops.size(), 0), queues(testing_hw::engine_queues(prog)) {
    head.assign(queues.size(), 0);
    busy.assign(queues.size(), 0);
  }
  void pump() {
    for (std::size_t e = 0; e < queues.size(); ++e) {
      if (busy[e] || head[e] == queues[e].second.size()) continue;
      const std::uint32_t i = queues[e].second[head[e]];
      if (!std::all_of(p.ops[i].deps.begin(), p.ops[i].deps.end(), [&](std::uint32_t d) { return done[d] != 0; }))
        continue;
      busy[e] = 1;
      t[i].start_ps = sc_core::sc_time_stamp().value();
      chip.start(p.ops[i], [this, e, i] {
        t[i].end_ps = sc_core::sc_time_stamp().value();
        done[i] = 1;
        busy[e] = 0;
        ++head[e];
        ++completed;
        pump();
      });
    }
  }
};

}  // namespace

TEST_CASE("chip: start() gives the timings of threads calling execute()", "[chip][dma]") {
  const hw::Program p = mixed_program();
  std::vector<hw::OpTiming> blocking, event_driven;
  hw::MxuStats blocking_mxu;
  std::uint64_t blocking_hbm = 0;
  double blocking_dma_busy = 0;
  {
    sim::reset_kernel();
    hw::Chip chip("chip", small_chip(), hw::Fidelity::tile);
    blocking = run_with_threads(p, chip);
    blocking_mxu = chip.mxus()[0]->stats();
    blocking_hbm = chip.hbm().bytes_read() + chip.hbm().bytes_written();
    blocking_dma_busy = chip.dma_busy_s();
  }
  sim::reset_kernel();
  hw::Chip chip("chip", small_chip(), hw::Fidelity::tile);
  AsyncRunner runner(p, chip);
  // From a process at time 0: the sockets are complete only after elaboration.
  sc_core::sc_spawn([&runner] { runner.pump(); });
  sc_core::sc_start();
  REQUIRE(runner.completed == p.ops.size());
  event_driven = runner.t;
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    INFO("op " << p.ops[i].name);
    CHECK(event_driven[i].start_ps == blocking[i].start_ps);
    CHECK(event_driven[i].end_ps == blocking[i].end_ps);
  }
  CHECK(chip.mxus()[0]->stats().ops == blocking_mxu.ops);
  CHECK(chip.mxus()[0]->stats().busy_cycles == blocking_mxu.busy_cycles);
  CHECK(chip.hbm().bytes_read() + chip.hbm().bytes_written() == blocking_hbm);
  CHECK(chip.dma_busy_s() == blocking_dma_busy);
}

TEST_CASE("chip: the mixed program's DMAs contend: some take longer than the same transfer alone", "[chip][dma]") {
  // The scenario above is meant to make transfers share HBM. A bound such
  // as "the 1 GiB transfer takes more than 2^30 ps" holds with no contention
  // at all, so each transfer is compared with an actual run of it on a
  // chip with no competing stream.
  const hw::Program p = mixed_program();
  std::vector<hw::OpTiming> mixed;
  {
    sim::reset_kernel();
    hw::Chip chip("chip", small_chip(), hw::Fidelity::tile);
    mixed = run_with_threads(p, chip);
  }
  std::size_t dmas = 0, slowed = 0;
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    if (p.ops[i].engine.kind != hw::EngineKind::dma) continue;
    hw::Program alone;
    hw::Op op = p.ops[i];
    op.deps.clear();
    alone.add(std::move(op));
    std::uint64_t alone_ps = 0;
    {
      sim::reset_kernel();
      hw::Chip chip("chip", small_chip(), hw::Fidelity::tile);
      const std::vector<hw::OpTiming> t = run_with_threads(alone, chip);
      alone_ps = t[0].end_ps - t[0].start_ps;
    }
    const std::uint64_t shared_ps = mixed[i].end_ps - mixed[i].start_ps;
    INFO(p.ops[i].name << ": " << shared_ps << " ps in the mixed program, " << alone_ps << " ps alone");
    CHECK(shared_ps >= alone_ps);  // sharing never speeds a transfer up
    ++dmas;
    if (shared_ps > alone_ps) ++slowed;
  }
  CHECK(dmas == 13);  // 6 loads, 6 stores and the large transfer
  CHECK(slowed > 0);
}

TEST_CASE("dma: the non-blocking (AT) path finishes when the blocking one does", "[dma]") {
  hw::HbmConfig hc = small_chip().hbm;
  // Staggered transfers on three engines, one of them split in chunks.
  struct Job {
    std::uint64_t at_ns, addr, bytes;
    bool write;
  };
  const std::vector<Job> jobs = {{0, 100, 8192, false}, {2, 70000, 3000, true}, {5, 0, (1u << 30) + 512, false}};
  auto run = [&](bool nb) {
    sim::reset_kernel();
    hw::Hbm hbm("hbm", hc);
    std::vector<std::unique_ptr<hw::DmaEngine>> dma;
    std::vector<std::uint64_t> end(jobs.size(), 0);
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      dma.push_back(std::make_unique<hw::DmaEngine>(("dma" + std::to_string(i)).c_str()));
      dma.back()->socket.bind(hbm.socket);
    }
    for (std::size_t i = 0; i < jobs.size(); ++i)
      sc_core::sc_spawn([&, i] {
        const Job& j = jobs[i];
        sc_core::wait(sc_core::sc_time::from_value(j.at_ns * kNs));
        if (!nb) {
          dma[i]->transfer(j.addr, j.bytes, j.write);
          end[i] = sc_core::sc_time_stamp().value();
          return;
        }
        dma[i]->start(j.addr, j.bytes, j.write, [&end, i] { end[i] = sc_core::sc_time_stamp().value(); });
      });
    sc_core::sc_start();
    for (std::size_t i = 0; i < jobs.size(); ++i) CHECK(dma[i]->bytes() == jobs[i].bytes);
    return end;
  };
  const auto blocking = run(false);
  const auto nb = run(true);
  CHECK(nb == blocking);
  // Hand check of the first: alone for 2 ns (2000 B), then shares.
  CHECK(blocking[0] > 8192 + 1000);
}

TEST_CASE("dma: a non-blocking transfer outside HBM fails at start with a SimFailure", "[dma]") {
  sim::reset_kernel();
  hw::Chip chip("chip", small_chip(), hw::Fidelity::tile);
  bool called = false;
  sc_core::sc_spawn([&] {
    chip.start(engine_op("ok", {hw::EngineKind::dma, 0}, hw::DmaOp{0, 4096, false}, {}), [&] {
      CHECK_THROWS_AS(chip.start(engine_op("bad", {hw::EngineKind::dma, 0},
                                           hw::DmaOp{(std::uint64_t{4} << 30) - 10, 4096, false}, {}),
                                 [&] { called = true; }),
                      sim::SimFailure);
    });
  });
  sc_core::sc_start();
  CHECK_FALSE(called);
  CHECK(chip.dma_engines()[0]->transfers() == 1);
}
