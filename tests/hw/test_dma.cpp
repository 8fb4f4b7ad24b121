#include <catch2/catch.hpp>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <systemc>
#include <vector>

#include "hw/completion.h"
#include "hw/dma.h"
#include "hw/hbm.h"
#include "sim/error.h"
#include "sim/kernel.h"
#include "test_hbm_streams.h"

namespace test_dma {

namespace {

// 1 byte/ps over 4 channels of 256-byte blocks, 1 ns latency: hand numbers.
hw::HbmConfig small_hbm() {
  hw::HbmConfig c;
  c.capacity_bytes = 1 << 20;
  c.channels = 4;
  c.bandwidth_bytes_per_s = 1e12;
  c.latency_s = 1e-9;
  c.interleave_bytes = 256;
  return c;
}

constexpr std::uint64_t kLatencyPs = 1000;

// A chip's memory side: one Hbm and several DMA engines bound to it, driven
// through the non-blocking start() as the chip does. Each job is started by
// a thread of its own at its time (standing in for the sequencer); its
// completion time lands in done_ps[slot].
struct Bench : hw::CompletionListener {
  std::unique_ptr<hw::Hbm> hbm;
  std::vector<std::unique_ptr<hw::DmaEngine>> dma;
  std::vector<std::uint64_t> done_ps;
  std::vector<int> calls;                   // per slot: completions heard (exactly one expected)
  std::vector<std::function<void()>> then;  // per slot: run on completion

  Bench(const hw::HbmConfig& config, std::size_t engines) {
    sim::reset_kernel();
    hbm = std::make_unique<hw::Hbm>("hbm", config);
    for (std::size_t i = 0; i < engines; ++i) {
      dma.push_back(std::make_unique<hw::DmaEngine>(("dma" + std::to_string(i)).c_str()));
      dma.back()->socket.bind(hbm->socket);
    }
  }
  // A completion for a new slot.
  hw::Completion slot(std::function<void()> on_done = {}) {
    done_ps.push_back(0);
    calls.push_back(0);
    then.push_back(std::move(on_done));
    return {this, done_ps.size() - 1};
  }
  // Starts a transfer on engine `e` at `at_ps`; returns its slot.
  std::size_t spawn(std::size_t e, std::uint64_t at_ps, std::uint64_t addr, std::uint64_t bytes, bool write) {
    const hw::Completion done = slot();
    sc_core::sc_spawn([this, e, at_ps, addr, bytes, write, done] {
      sc_core::wait(sc_core::sc_time::from_value(at_ps));
      dma[e]->start(addr, bytes, write, done);
    });
    return done.token;
  }
  void completed(std::uint64_t token) override {
    done_ps[token] = sc_core::sc_time_stamp().value();
    ++calls[token];
    if (then[token]) then[token]();
  }
  void failed(std::uint64_t, std::exception_ptr) override { FAIL("a DMA transfer reported a failure"); }
};

}  // namespace

TEST_CASE("dma: one transfer alone takes latency + bytes / bandwidth", "[dma]") {
  Bench b(small_hbm(), 1);
  b.spawn(0, 0, 0, 8192, false);
  sc_core::sc_start();
  CHECK(b.done_ps[0] == kLatencyPs + 8192);
  CHECK(b.calls[0] == 1);
  CHECK(b.dma[0]->transfers() == 1);
  CHECK(b.dma[0]->bytes_read() == 8192);
  CHECK(b.dma[0]->bytes_written() == 0);
  CHECK(b.dma[0]->busy() == sc_core::sc_time(kLatencyPs + 8192, sc_core::SC_PS));
  CHECK(b.hbm->bytes_read() == 8192);
}

TEST_CASE("dma: engines sharing one HBM split its bandwidth", "[dma]") {
  Bench b(small_hbm(), 3);
  // Three equal transfers at once: 3 x 8192 bytes through 1 byte/ps.
  for (std::size_t e = 0; e < 3; ++e) b.spawn(e, 0, e * 65536, 8192, e == 1);
  sc_core::sc_start();
  for (std::size_t e = 0; e < 3; ++e) {
    CHECK(b.done_ps[e] == kLatencyPs + 3 * 8192);
    CHECK(b.dma[e]->bytes() == 8192);
  }
  CHECK(b.hbm->bytes_written() == 8192);
  CHECK(b.hbm->bytes_read() == 2 * 8192);
}

TEST_CASE("dma: a single stream never beats the configured bandwidth", "[dma]") {
  std::mt19937_64 rng(9);
  hw::HbmConfig c = small_hbm();
  c.latency_s = 0.0;  // the bandwidth limit alone
  for (int round = 0; round < 40; ++round) {
    Bench b(c, 1);
    const std::uint64_t address = rng() % 500000;
    const std::uint64_t bytes = 1 + rng() % 100000;
    b.spawn(0, 0, address, bytes, (round & 1) != 0);
    sc_core::sc_start();
    // Every byte needs 1 ps at 1 byte/ps; whole-picosecond rounding only
    // ever rounds up.
    CHECK(b.done_ps[0] >= bytes);
  }
}

TEST_CASE("dma: transfers on one engine run one after the other", "[dma]") {
  Bench b(small_hbm(), 1);
  // The second starts when the first is done; starting it while the first
  // is in flight is refused.
  const hw::Completion second = b.slot();
  bool refused = false;
  const hw::Completion first = b.slot([&] { b.dma[0]->start(65536, 4096, true, second); });
  sc_core::sc_spawn([&] {
    b.dma[0]->start(0, 4096, false, first);
    try {
      b.dma[0]->start(65536, 4096, true, second);
    } catch (const std::logic_error&) {
      refused = true;
    }
  });
  sc_core::sc_start();
  CHECK(refused);
  const std::uint64_t one = kLatencyPs + 4096;  // alone, each takes this
  CHECK(std::min(b.done_ps[0], b.done_ps[1]) == one);
  CHECK(std::max(b.done_ps[0], b.done_ps[1]) == 2 * one);
  CHECK(b.calls == std::vector<int>{1, 1});
  CHECK(b.dma[0]->busy() == sc_core::sc_time(2 * one, sc_core::SC_PS));
  CHECK(b.dma[0]->transfers() == 2);
}

namespace {

// Bandwidth 2.8e12 B/s (docs/reference/tpu-specs.md#v5p.hbm_bw, SB) and
// 96 GiB; channels, interleave and latency are test values.
hw::HbmConfig v5p_like_hbm() {
  hw::HbmConfig c;
  c.capacity_bytes = 96ull << 30;
  c.channels = 16;
  c.bandwidth_bytes_per_s = 2.8e12;
  c.latency_s = 250e-9;
  c.interleave_bytes = 512;
  return c;
}

}  // namespace

TEST_CASE("dma: a transfer longer than one TLM payload costs one latency", "[dma]") {
  // 5 GiB: tlm_generic_payload lengths are 32-bit, so this travels as
  // several payloads.
  const hw::HbmConfig c = v5p_like_hbm();
  Bench b(c, 1);
  const std::uint64_t bytes = 5ull << 30;
  b.spawn(0, 0, 1ull << 30, bytes, true);
  sc_core::sc_start();
  const double expect_s = c.latency_s + static_cast<double>(bytes) / c.bandwidth_bytes_per_s;
  CHECK(static_cast<double>(b.done_ps[0]) * 1e-12 == Approx(expect_s).margin(2e-12));
  CHECK(b.calls[0] == 1);
  CHECK(b.dma[0]->transfers() == 1);
  CHECK(b.dma[0]->bytes_written() == bytes);
  CHECK(b.hbm->bytes_written() == bytes);
}

TEST_CASE("dma: a range outside HBM is a SimFailure from start, and the engine is free again", "[dma]") {
  Bench b(small_hbm(), 1);
  std::string error;
  const hw::Completion bad = b.slot();
  const hw::Completion ok = b.slot();
  sc_core::sc_spawn([&] {
    try {
      b.dma[0]->start(small_hbm().capacity_bytes - 10, 11, false, bad);
    } catch (const sim::SimFailure& e) {
      error = e.what();
    }
    b.dma[0]->start(0, 256, false, ok);  // the engine is free again afterwards
  });
  sc_core::sc_start();
  CHECK_THAT(error, Catch::Contains("dma0") && Catch::Contains("1048566"));
  CHECK(b.calls == std::vector<int>{0, 1});  // the rejected one never completes
  CHECK(b.dma[0]->transfers() == 1);
  CHECK(b.done_ps[1] == kLatencyPs + 1024);  // 256 bytes on one channel at 0.25 B/ps
}

TEST_CASE("dma: a long transfer rejected after its first chunk leaves no trace on the next one", "[dma]") {
  // The first 1 GiB chunk fits and is accepted; the second runs past the
  // end and is rejected. The accepted chunk still answers, much later than
  // the small transfer started right after: it must not complete that one.
  const hw::HbmConfig c = v5p_like_hbm();
  Bench b(c, 1);
  const hw::Completion bad = b.slot();
  const hw::Completion ok = b.slot();
  bool rejected = false;
  sc_core::sc_spawn([&] {
    try {
      b.dma[0]->start(c.capacity_bytes - (std::uint64_t{3} << 29), std::uint64_t{2} << 30, false, bad);
    } catch (const sim::SimFailure&) {
      rejected = true;
    }
    sc_core::wait(sc_core::sc_time(1, sc_core::SC_US));
    b.dma[0]->start(0, 1u << 20, false, ok);
  });
  sc_core::sc_start();
  CHECK(rejected);
  CHECK(b.calls == std::vector<int>{0, 1});
  // 1 MiB while the abandoned 1 GiB chunk still streams: each gets half the
  // bandwidth (both cover every channel evenly), then one latency.
  const double expect_s = 1e-6 + c.latency_s + 2.0 * double(1u << 20) / c.bandwidth_bytes_per_s;
  CHECK(static_cast<double>(b.done_ps[1]) * 1e-12 == Approx(expect_s).margin(2e-12));
  CHECK(b.dma[0]->transfers() == 1);
}

TEST_CASE("dma: staggered transfers finish when the HBM's blocking b_transport does", "[dma]") {
  // The DMA's AT path (nb_transport, responses from the Hbm's processes)
  // against the target's LT path (b_transport, waits in the caller's thread).
  const hw::HbmConfig hc = small_hbm();
  const std::vector<hbm_test::Stream> jobs = {
      {0, 100, 8192, false}, {2000, 70000, 3000, true}, {5000, 0, 20000, false}};
  std::vector<std::uint64_t> blocking;
  {
    sim::reset_kernel();
    hw::Hbm hbm("hbm", hc);
    hbm_test::Streams streams("streams", jobs, hbm);
    sc_core::sc_start();
    for (std::size_t i = 0; i < jobs.size(); ++i) blocking.push_back(streams.done_ps(i));
  }
  Bench b(hc, jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i)
    b.spawn(i, jobs[i].start_ps, jobs[i].address, jobs[i].bytes, jobs[i].write);
  sc_core::sc_start();
  CHECK(b.done_ps == blocking);
  for (std::size_t i = 0; i < jobs.size(); ++i) CHECK(b.dma[i]->bytes() == jobs[i].bytes);
  // They really shared: the first, alone for 2 ns (2000 B), then shares.
  CHECK(b.done_ps[0] > 8192 + kLatencyPs);
}

}  // namespace test_dma
