#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <catch2/catch.hpp>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <systemc>
#include <vector>

#include "hw/dma.h"
#include "hw/hbm.h"
#include "sim/error.h"
#include "sim/kernel.h"

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

// A chip's memory side: one Hbm, several DMA engines bound to it, and a
// thread per job standing in for the sequencer.
struct Bench {
  std::unique_ptr<hw::Hbm> hbm;
  std::vector<std::unique_ptr<hw::DmaEngine>> dma;
  std::vector<std::uint64_t> done_ps;

  Bench(const hw::HbmConfig& config, std::size_t engines) {
    sim::reset_kernel();
    hbm = std::make_unique<hw::Hbm>("hbm", config);
    for (std::size_t i = 0; i < engines; ++i) {
      dma.push_back(std::make_unique<hw::DmaEngine>(("dma" + std::to_string(i)).c_str()));
      dma.back()->socket.bind(hbm->socket);
    }
  }
  // Starts `job` in its own thread; its end time lands in done_ps[slot].
  std::size_t spawn(std::function<void()> job) {
    const std::size_t slot = done_ps.size();
    done_ps.push_back(0);
    sc_core::sc_spawn([this, slot, job] {
      job();
      done_ps[slot] = sc_core::sc_time_stamp().value();
    });
    return slot;
  }
};

}  // namespace

TEST_CASE("dma: one transfer alone takes latency + bytes / bandwidth", "[dma]") {
  Bench b(small_hbm(), 1);
  b.spawn([&] { b.dma[0]->transfer(0, 8192, false); });
  sc_core::sc_start();
  CHECK(b.done_ps[0] == kLatencyPs + 8192);
  CHECK(b.dma[0]->transfers() == 1);
  CHECK(b.dma[0]->bytes_read() == 8192);
  CHECK(b.dma[0]->bytes_written() == 0);
  CHECK(b.dma[0]->busy() == sc_core::sc_time(kLatencyPs + 8192, sc_core::SC_PS));
  CHECK(b.hbm->bytes_read() == 8192);
}

TEST_CASE("dma: engines sharing one HBM split its bandwidth", "[dma]") {
  Bench b(small_hbm(), 3);
  // Three equal transfers at once: 3 x 8192 bytes through 1 byte/ps.
  for (std::size_t e = 0; e < 3; ++e) b.spawn([&b, e] { b.dma[e]->transfer(e * 65536, 8192, e == 1); });
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
    b.spawn([&] { b.dma[0]->transfer(address, bytes, (round & 1) != 0); });
    sc_core::sc_start();
    // Every byte needs 1 ps at 1 byte/ps; whole-picosecond rounding only
    // ever rounds up.
    CHECK(b.done_ps[0] >= bytes);
  }
}

TEST_CASE("dma: transfers on one engine run one after the other", "[dma]") {
  Bench b(small_hbm(), 1);
  b.spawn([&] { b.dma[0]->transfer(0, 4096, false); });
  b.spawn([&] { b.dma[0]->transfer(65536, 4096, true); });
  sc_core::sc_start();
  const std::uint64_t one = kLatencyPs + 4096;  // alone, each takes this
  CHECK(std::min(b.done_ps[0], b.done_ps[1]) == one);
  CHECK(std::max(b.done_ps[0], b.done_ps[1]) == 2 * one);
  CHECK(b.dma[0]->busy() == sc_core::sc_time(2 * one, sc_core::SC_PS));
  CHECK(b.dma[0]->transfers() == 2);
}

TEST_CASE("dma: a transfer longer than one TLM payload costs one latency", "[dma]") {
  // 5 GiB: tlm_generic_payload lengths are 32-bit, so this travels as
  // several payloads. Bandwidth 2.8e12 B/s (docs/reference/tpu-specs.md#v5p.hbm_bw, SB).
  hw::HbmConfig c;
  c.capacity_bytes = 96ull << 30;
  c.channels = 16;
  c.bandwidth_bytes_per_s = 2.8e12;
  c.latency_s = 250e-9;
  c.interleave_bytes = 512;
  Bench b(c, 1);
  const std::uint64_t bytes = 5ull << 30;
  b.spawn([&] { b.dma[0]->transfer(1ull << 30, bytes, true); });
  sc_core::sc_start();
  const double expect_s = c.latency_s + static_cast<double>(bytes) / c.bandwidth_bytes_per_s;
  CHECK(static_cast<double>(b.done_ps[0]) * 1e-12 == Approx(expect_s).margin(2e-12));
  CHECK(b.dma[0]->transfers() == 1);
  CHECK(b.dma[0]->bytes_written() == bytes);
  CHECK(b.hbm->bytes_written() == bytes);
}

TEST_CASE("dma: a range outside HBM is a SimFailure in the calling thread", "[dma]") {
  Bench b(small_hbm(), 1);
  std::string error;
  b.spawn([&] {
    try {
      b.dma[0]->transfer(small_hbm().capacity_bytes - 10, 11, false);
    } catch (const sim::SimFailure& e) {
      error = e.what();
    }
    b.dma[0]->transfer(0, 256, false);  // the engine is free again afterwards
  });
  sc_core::sc_start();
  CHECK_THAT(error, Catch::Contains("dma0") && Catch::Contains("1048566"));
  CHECK(b.dma[0]->transfers() == 1);
  CHECK(b.done_ps[0] == kLatencyPs + 1024);  // 256 bytes on one channel at 0.25 B/ps
}
