// The trace's ICI link utilization counters (PodRunResult::link_rates,
// Network::log_link_rates) against the network's own byte count and the
// ring formula: each link's rate integrated over the run is the bytes the
// network booked on it, with replayed collectives and one chip per orbit
// as with every chip and collective simulated (to the picoseconds transfers
// are rounded up to); a ring all-reduce on an
// idle ring holds each link it uses at its full bandwidth, for
// 2 (n-1)/n V bytes per chip (Patarasuk & Yuan 2009).
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "runtime/pod_run.h"
#include "runtime/ring_all_reduces.h"
#include "workloads/experiment.h"

namespace test_link_rates {

namespace {

// An n-chip ring with wraparound, at tile fidelity (so that reducing
// collectives may be replayed).
workloads::Experiment ring(int chips, bool every_chip) {
  workloads::Experiment exp = testing_runtime::ring_experiment(chips);
  exp.fidelity = hw::Fidelity::tile;
  if (every_chip) exp.replicas = workloads::Replicas::all;
  return exp;
}

// Every chip: a matmul, then `count` all-reduces of `bytes`, one after another.
runtime::PodProgram all_reduces(int chips, int count, std::uint64_t bytes) {
  return testing_runtime::replicated_all_reduces(static_cast<std::uint32_t>(chips),
                                                 std::vector<std::uint32_t>(static_cast<std::size_t>(count), 1), bytes);
}

// Bytes: the rate's integral over the run.
double integral(const runtime::PodRunResult::LinkRates& l) {
  double bytes = 0;
  for (std::size_t k = 0; k + 1 < l.rate.size(); ++k)
    bytes += l.rate[k].second * double(l.rate[k + 1].first - l.rate[k].first) * 1e-12;
  return bytes;
}

// What the integral may exceed the bytes by: a transfer lasts whole
// picoseconds, rounded up (Network::transfer_ps), so each rate change may
// come up to 1 ps late, one picosecond of the link's bandwidth.
double rounding(const runtime::PodRunResult::LinkRates& l) { return double(l.rate.size()) * l.bytes_per_s * 1e-12; }

std::uint64_t booked(const runtime::PodRunResult& r, int link) {
  for (const auto& l : r.links)
    if (l.link == link) return l.bytes;
  FAIL("link " << link << " not in the run's links");
  return 0;
}

}  // namespace

TEST_CASE("link rates: each link's rate integrates to its bytes, replayed and with one chip per orbit",
          "[runtime][trace]") {
  const runtime::PodProgram pp = all_reduces(8, 4, 8 * 4096 * 2);
  sim::TraceRequest all_chips(true);
  all_chips.chips = {0, 1, 2, 3, 4, 5, 6, 7};
  const runtime::PodRunResult fast = runtime::run_pod(workloads::pod_config(ring(8, false)), pp, all_chips);
  const runtime::PodRunResult full = runtime::run_pod(workloads::pod_config(ring(8, true)), pp, all_chips);
  CHECK(fast.collectives_replayed == 3);
  CHECK(!fast.symmetric_axes.empty());
  CHECK(full.collectives_replayed == 0);
  REQUIRE(fast.link_rates.size() == 16);  // 8 chips, x+ and x-
  REQUIRE(full.link_rates.size() == 16);
  double fast_total = 0;
  for (std::size_t i = 0; i < fast.link_rates.size(); ++i) {
    const auto &f = fast.link_rates[i], &a = full.link_rates[i];
    INFO("chip " << f.chip << " link " << f.name);
    CHECK(f.link == a.link);
    CHECK(std::abs(integral(f) - double(booked(fast, f.link))) <= rounding(f));
    CHECK(std::abs(integral(a) - double(booked(full, a.link))) <= rounding(a));
    CHECK(f.rate == a.rate);  // the same course, replayed or simulated
    fast_total += integral(f);
  }
  CHECK(fast_total > 0);
}

TEST_CASE("link rates: a ring all-reduce on an idle ring holds its links at full bandwidth", "[runtime][trace]") {
  const int n = 8;
  const double v = 64.0 * 1024 * 1024;
  const runtime::PodRunResult r =
      runtime::run_pod(workloads::pod_config(ring(n, false)), all_reduces(n, 1, std::uint64_t(v)), true);
  REQUIRE(r.link_rates.size() == 2);  // the simulated chip's x+ and x-
  double bytes = 0;
  for (const auto& l : r.link_rates) {
    INFO(l.name);
    for (const auto& [at, rate] : l.rate) CHECK((rate == 0 || rate == Approx(l.bytes_per_s).epsilon(1e-12)));
    // Time at full bandwidth, as bytes.
    for (std::size_t k = 0; k + 1 < l.rate.size(); ++k)
      if (l.rate[k].second > 0) bytes += l.bytes_per_s * double(l.rate[k + 1].first - l.rate[k].first) * 1e-12;
  }
  // Each chip sends 2 (n-1)/n V over its links, in one direction or split
  // over both (bidirectional ring).
  double slack = 0;
  for (const auto& l : r.link_rates) slack += rounding(l);
  CHECK(std::abs(bytes - 2.0 * (n - 1) / n * v) <= slack);
}

}  // namespace test_link_rates
