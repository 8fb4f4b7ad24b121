#include <catch2/catch.hpp>
#include <random>

#include "hw/hbm.h"
#include "sim/error.h"
#include "sim/kernel.h"
#include "test_hbm_streams.h"

namespace test_hbm {

using hbm_test::Stream;
using hbm_test::Streams;

namespace {

// 1 byte/ps in total, 0.25 byte/ps per channel: every time below is a whole
// number of picoseconds and can be worked out by hand.
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

// A v5p-sized device: hbm_bw 2.8e12 B/s (docs/reference/tpu-specs.md#v5p.hbm_bw, SB) and
// 96 GB (v5p.hbm_capacity); channels, interleave and latency are test values.
hw::HbmConfig v5p_like_hbm() {
  hw::HbmConfig c;
  c.capacity_bytes = 96ull << 30;
  c.channels = 32;
  c.bandwidth_bytes_per_s = 2.8e12;
  c.latency_s = 250e-9;
  c.interleave_bytes = 256;
  return c;
}

// Runs the streams on a fresh kernel and returns the initiator (owning the
// results) together with the HBM (owning the counters).
struct Run {
  std::unique_ptr<hw::Hbm> hbm;
  std::unique_ptr<Streams> streams;
  Run(const hw::HbmConfig& config, std::vector<Stream> spec) {
    sim::reset_kernel();
    hbm = std::make_unique<hw::Hbm>("hbm", config);
    streams = std::make_unique<Streams>("streams", std::move(spec), *hbm);
    sc_core::sc_start();
  }
};

}  // namespace

TEST_CASE("hbm: per-channel split matches walking the range block by block", "[hbm]") {
  std::mt19937_64 rng(3);
  for (int round = 0; round < 500; ++round) {
    hw::HbmConfig c = small_hbm();
    c.channels = 1 + rng() % 7;
    c.interleave_bytes = 1 + rng() % 300;
    const std::uint64_t address = rng() % 20000;
    const std::uint64_t length = rng() % 20000;
    std::vector<std::uint64_t> expect(c.channels, 0);
    for (std::uint64_t b = address; b < address + length; ++b) ++expect[(b / c.interleave_bytes) % c.channels];
    CHECK(hw::bytes_per_channel(c, address, length) == expect);
  }
}

TEST_CASE("hbm: one stream over all channels takes latency + bytes / bandwidth", "[hbm]") {
  SECTION("small device, hand numbers") {
    // 4096 bytes = 1024 per channel at 0.25 B/ps.
    Run r(small_hbm(), {{0, 0, 4096}});
    CHECK(r.streams->status[0] == tlm::TLM_OK_RESPONSE);
    CHECK(r.streams->done_ps(0) == kLatencyPs + 4096);
  }
  SECTION("1 GiB on a v5p-sized device") {
    const hw::HbmConfig c = v5p_like_hbm();
    const std::uint64_t bytes = 1ull << 30;
    Run r(c, {{0, 4096, bytes}});  // 4096 = 16 blocks: starts on channel 16, still even
    const double expect_s = c.latency_s + static_cast<double>(bytes) / c.bandwidth_bytes_per_s;
    CHECK(r.streams->done[0].to_seconds() == Approx(expect_s).margin(1e-12));
  }
}

TEST_CASE("hbm: two equal concurrent streams finish together at latency + 2 bytes / bandwidth", "[hbm]") {
  Run r(small_hbm(), {{0, 0, 8192}, {0, 65536, 8192, true}});
  CHECK(r.streams->done_ps(0) == kLatencyPs + 2 * 8192);
  CHECK(r.streams->done_ps(1) == kLatencyPs + 2 * 8192);
  CHECK(r.hbm->bytes_read() == 8192);
  CHECK(r.hbm->bytes_written() == 8192);
  CHECK(r.hbm->transfers() == 2);
}

TEST_CASE("hbm: a stream inside one interleave block gets bandwidth / channels", "[hbm]") {
  // Blocks of 256: [522, 722) lies in block 2 (channel 2), [778, 978) in
  // block 3 (channel 3). 200 bytes at 0.25 B/ps = 800 ps.
  SECTION("alone") {
    Run r(small_hbm(), {{0, 522, 200}});
    CHECK(r.streams->done_ps(0) == kLatencyPs + 800);
    CHECK(r.hbm->channel_bytes(2) == 200);
    CHECK(r.hbm->channel_busy(2) == sc_core::sc_time(800, sc_core::SC_PS));
    CHECK(r.hbm->channel_busy(0) == sc_core::SC_ZERO_TIME);
  }
  SECTION("next to a stream on another channel: no interference") {
    Run r(small_hbm(), {{0, 522, 200}, {0, 778, 200}});
    CHECK(r.streams->done_ps(0) == kLatencyPs + 800);
    CHECK(r.streams->done_ps(1) == kLatencyPs + 800);
  }
  SECTION("with a second stream on the same channel: half each") {
    // Block 6 = channel 2 as well.
    Run r(small_hbm(), {{0, 522, 200}, {0, 6 * 256, 200}});
    CHECK(r.streams->done_ps(0) == kLatencyPs + 1600);
    CHECK(r.streams->done_ps(1) == kLatencyPs + 1600);
  }
}

TEST_CASE("hbm: staggered streams follow a hand-computed processor-sharing timeline", "[hbm]") {
  // Every stream covers the 4 channels evenly, so each channel (0.25 B/ps)
  // runs the same timeline with a quarter of each stream:
  //   A: t=0,    4096 B -> 1024 per channel
  //   B: t=1024, 2048 B ->  512 per channel
  //   C: t=2048, 1024 B ->  256 per channel
  //   0..1024     A alone, 0.25 B/ps    -> A 768 left
  //   1024..2048  A,B at 1/8 B/ps       -> A 640, B 384
  //   2048..5120  A,B,C at 1/12 B/ps    -> C done (256*12 = 3072 ps); A 384, B 128
  //   5120..6144  A,B at 1/8 B/ps       -> B done (128*8); A 256
  //   6144..7168  A alone               -> A done (256*4); 7168 B at 1 B/ps in all
  Run r(small_hbm(), {{0, 0, 4096}, {1024, 65536, 2048}, {2048, 8192, 1024}});
  CHECK(r.streams->done_ps(0) == kLatencyPs + 7168);
  CHECK(r.streams->done_ps(1) == kLatencyPs + 6144);
  CHECK(r.streams->done_ps(2) == kLatencyPs + 5120);
  for (std::uint32_t c = 0; c < 4; ++c) {
    CHECK(r.hbm->channel_bytes(c) == 1792);
    CHECK(r.hbm->channel_busy(c) == sc_core::sc_time(7168, sc_core::SC_PS));
  }
}

TEST_CASE("hbm: the incoming annotated delay is waited for and consumed", "[hbm]") {
  Stream s{0, 0, 4096};
  s.annotated_delay = sc_core::sc_time(500, sc_core::SC_PS);
  Run r(small_hbm(), {s});
  CHECK(r.streams->done_ps(0) == 500 + kLatencyPs + 4096);
  CHECK(r.streams->delay_after[0] == sc_core::SC_ZERO_TIME);
}

TEST_CASE("hbm: addresses beyond capacity get an address error and take no bandwidth", "[hbm]") {
  const std::uint64_t cap = small_hbm().capacity_bytes;
  Run r(small_hbm(), {{0, cap, 1}, {0, cap - 100, 101}, {0, cap - 100, 100}});
  CHECK(r.streams->status[0] == tlm::TLM_ADDRESS_ERROR_RESPONSE);
  CHECK(r.streams->status[1] == tlm::TLM_ADDRESS_ERROR_RESPONSE);
  CHECK(r.streams->status[2] == tlm::TLM_OK_RESPONSE);
  CHECK(r.streams->done_ps(0) == 0);
  CHECK(r.hbm->transfers() == 1);
  CHECK(r.hbm->bytes_read() == 100);
}

TEST_CASE("hbm: kernel events do not grow with transfer size", "[hbm]") {
  auto events_for = [](std::uint64_t bytes) {
    Run r(v5p_like_hbm(), {{0, 0, bytes}, {100, 1ull << 32, bytes}});
    return sim::kernel_events();
  };
  const std::uint64_t small = events_for(1ull << 20);
  const std::uint64_t large = events_for(1ull << 30);
  CHECK(large == small);
  // Two arrivals, their completions and latencies: a handful of kernel
  // cycles, where a burst-level model of 1 GiB would need millions.
  CHECK(large <= 16);
}

TEST_CASE("hbm: invalid configuration is a ConfigError naming the field", "[hbm]") {
  sim::reset_kernel();
  hw::HbmConfig c = small_hbm();
  c.channels = 0;
  CHECK_THROWS_WITH(hw::Hbm("hbm", c), Catch::Contains("hbm.channels"));
  c = small_hbm();
  c.bandwidth_bytes_per_s = -1;
  CHECK_THROWS_AS(hw::Hbm("hbm2", c), sim::ConfigError);
}

}  // namespace test_hbm
