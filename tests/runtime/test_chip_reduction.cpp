// Collective reductions on the chip's own HBM (kernel fidelity,
// runtime/chip_reduction.h) against hand formulas: an all-reduce and an
// HBM-bound stream kernel on the same chips share HBM max-min fairly, so
// both slow down, and the reduction's bytes add up in the chip's hbm_bytes.
#include <catch2/catch.hpp>

#include <string>

#include "runtime/pod_run.h"
#include "workloads/experiment.h"

namespace test_chip_reduction {

namespace {

const std::string kSrc = TPUSIM_SOURCE_DIR;

constexpr std::uint64_t kS = 8u << 20;    // all-reduce bytes
constexpr std::uint64_t kB = 256u << 20;  // the stream kernel's HBM bytes

// Two v5e chips in a line, ring all-reduce of kS (f32), and/or a kernel of
// kB HBM bytes on the vector unit; both start at 0.
runtime::PodRunResult run(bool all_reduce, bool stream, hw::Fidelity fidelity, runtime::PodConfig* out = nullptr) {
  const workloads::Experiment exp =
      workloads::load_experiment(kSrc + "/configs/experiments/allgather-ring-v5e-16.yaml",
                                 {"pod={topology: ring, shape: [2], wraparound: false}", "mesh={x: 2}"});
  runtime::PodConfig cfg = workloads::pod_config(exp);
  cfg.fidelity = fidelity;
  cfg.simulate_every_chip = true;
  runtime::PodProgram pp;
  hw::Program prog;
  if (all_reduce) {
    interconnect::CollectiveSpec c;
    c.op = interconnect::CollectiveOp::all_reduce;
    c.algorithm = interconnect::Algorithm::ring;
    c.bytes = kS;
    c.element_bytes = 4;
    pp.collectives.push_back(c);
    prog.add({"all-reduce", {hw::EngineKind::ici, 0}, hw::CommOp{0}, {}, 0});
  }
  if (stream) {
    hw::KernelOp k;
    k.body_bytes = kB;
    k.read_bytes = kB;
    prog.add({"stream", {hw::EngineKind::vector, 0}, k, {}, 0});
  }
  pp.add_replicas(std::move(prog), 2);
  if (out) *out = cfg;
  return runtime::run_pod(cfg, pp, false);
}

double hbm_bytes(const runtime::PodRunResult& r, int chip) {
  return r.chip_stats(static_cast<std::uint32_t>(chip)).value("hbm_bytes");
}

double op_end(const runtime::PodRunResult& r, int chip, std::size_t op) {
  return static_cast<double>((*r.timings[chip])[op].end_ps) * 1e-12;
}

}  // namespace

TEST_CASE("chip reductions: an all-reduce and an HBM-bound kernel share HBM max-min", "[runtime][reduction]") {
  runtime::PodConfig cfg;
  const runtime::PodRunResult alone = run(true, false, hw::Fidelity::kernel, &cfg);
  const double W = cfg.network.link.bandwidth, L = cfg.network.link.latency;
  const double BW = cfg.chip.hbm.bandwidth_bytes_per_s;
  const double S = double(kS), B = double(kB), h = cfg.network.reduction.hbm_bytes_per_reduced_byte;
  const double P = double(cfg.network.link.packet_bytes);
  const double ps = 1e-12 * 8;  // rounding: a few picoseconds per step
  // Ring of 2: one reduce-scatter step (S/2 over a link, reduced as it
  // lands) and one all-gather step. The reduction streams behind the data:
  // all but the last packet at the link's rate W (h W of HBM, far below
  // BW), then the last packet once it is in, at the HBM bound BW / h. The
  // vector units (8 KiB per cycle) are far from the bound.
  const double t1 = L + S / 2 / W;  // the reduce-scatter message is in
  // Each chip joins once its launch cost is paid (docs/calibration.md#collective-launch).
  const double launch = cfg.chip.ici.collective_launch;
  INFO("W " << W << " L " << L << " BW " << BW << " P " << P << " launch " << launch);
  REQUIRE((S / 2 - P) / W < t1);  // the streamed part keeps up with the data
  CHECK(alone.step_time_s == Approx(launch + 2 * t1 + h * P / BW).margin(ps));
  for (int c = 0; c < 2; ++c) CHECK(hbm_bytes(alone, c) == h * S / 2);

  const runtime::PodRunResult kernel = run(false, true, hw::Fidelity::kernel);
  CHECK(kernel.step_time_s == Approx(B / BW).margin(ps));

  // Together: the streamed part keeps its rate W (its h W of HBM is below
  // an equal share), the kernel takes the rest. The last packet then
  // shares HBM with the kernel at equal rates r: r + h r = BW, so it takes
  // P / (BW / (1 + h)). HBM never idles while the kernel runs, so the
  // kernel ends when all bytes are through.
  const runtime::PodRunResult both = run(true, true, hw::Fidelity::kernel);
  REQUIRE(h * W < BW / 2);
  const double tail = P / (BW / (1 + h));
  REQUIRE(B / BW > launch + t1 + tail);  // the kernel outlasts the reduction
  for (int c = 0; c < 2; ++c) {
    CHECK(op_end(both, c, 0) == Approx(launch + 2 * t1 + tail).margin(ps));
    CHECK(op_end(both, c, 1) == Approx((B + h * S / 2) / BW).margin(ps));
    CHECK(op_end(both, c, 0) > op_end(alone, c, 0));
    CHECK(hbm_bytes(both, c) == B + h * S / 2);
  }
  CHECK(both.reduce_hbm_bytes[0] == h * S / 2);
}

TEST_CASE("chip reductions: tile fidelity keeps the calendar model, apart from the chip", "[runtime][reduction]") {
  // The same pair at tile fidelity: the kernel op does not exist there, so
  // the all-reduce alone; its HBM bytes are the collective's, not the chip's.
  runtime::PodConfig cfg;
  const runtime::PodRunResult r = run(true, false, hw::Fidelity::tile, &cfg);
  const double h = cfg.network.reduction.hbm_bytes_per_reduced_byte;
  CHECK(r.reduce_hbm_bytes[0] == h * double(kS) / 2);
  CHECK(hbm_bytes(r, 0) == 0);
}

TEST_CASE("chip reductions: at kernel fidelity one chip per group reduces on its HBM, the replicas on the calendar",
          "[runtime][reduction]") {
  // Two all-reduces on a ring of 4, each chip also streaming HBM-bound
  // work beside them (so the simulated chip's reductions contend): one chip
  // per group must give the step every chip gives, within the spread it
  // reports, or say it is not exact and simulate every chip. No replays:
  // a replay would skip the reductions' HBM flows.
  for (const bool stream : {false, true}) {
    INFO((stream ? "beside a stream" : "alone"));
    const workloads::Experiment exp =
        workloads::load_experiment(kSrc + "/configs/experiments/allgather-ring-v5e-16.yaml",
                                   {"pod={topology: ring, shape: [4], wraparound: true}", "mesh={x: 4}"});
    runtime::PodConfig cfg = workloads::pod_config(exp);
    cfg.fidelity = hw::Fidelity::kernel;
    runtime::PodProgram pp;
    hw::Program prog;
    interconnect::CollectiveSpec c;
    c.op = interconnect::CollectiveOp::all_reduce;
    c.bytes = 1 << 20;
    pp.collectives = {c, c};
    const std::uint32_t a = prog.add({"ar0", {hw::EngineKind::ici, 0}, hw::CommOp{0}, {}, 0});
    prog.add({"ar1", {hw::EngineKind::ici, 0}, hw::CommOp{1}, {a}, 0});
    if (stream) {
      hw::KernelOp k;
      k.body_bytes = 8u << 20;
      k.read_bytes = 8u << 20;
      prog.add({"stream", {hw::EngineKind::vector, 0}, k, {}, 0});
    }
    pp.add_replicas(std::move(prog), 4);
    const runtime::PodRunResult one = runtime::run_pod(cfg, pp, false);
    cfg.simulate_every_chip = true;
    const runtime::PodRunResult all = runtime::run_pod(cfg, pp, false);
    CHECK(one.collectives_replayed == 0);
    CHECK(all.chips_simulated == 4);
    if (one.replicas == "one per group") {
      CHECK(one.chips_simulated == 1);
      CHECK(std::abs(one.step_time_s - all.step_time_s) <= one.replica_spread_s + 1e-12);
    } else {
      CHECK_THAT(one.replicas, Catch::StartsWith("all (not exact"));
      CHECK(one.step_time_s == all.step_time_s);
    }
    // The simulated chip's reductions are on its HBM: 3 bytes per reduced
    // byte, n-1 steps of S/n each for the two all-reduces' reduce-scatters.
    CHECK(one.reduce_hbm_bytes[0] == Approx(2 * 3.0 * 3 * double(c.bytes) / 4));
  }
}

}  // namespace test_chip_reduction
