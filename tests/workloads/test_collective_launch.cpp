// A collective's fixed launch cost (ici.collective_launch,
// docs/calibration.md#collective-launch) against size, 1 KiB to 1 GiB: the
// curve is latency-bound below its knee and bandwidth-bound above, and a
// two-parameter fit t = a + S / B of its bandwidth-bound end recovers the
// configured launch cost as the difference of intercepts with and without
// it. The v5p permute is also compared with the measured ppermute sweep
// (docs/reference/measured.md#ppermute-v5p-v6e) and with the point-to-point
// closed form of docs/reference/formulas.md §2 (hops x T_min + bytes / W).
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "workloads/experiment.h"
#include "workloads/experiment_fixture.h"

namespace test_collective_launch {

namespace {

struct Point {
  double bytes = 0, time_s = 0;
};

// One `kind: collective` run per size, 1 KiB x 4^i up to 1 GiB, with the
// chip's launch cost or with it set to `launch_s`.
std::vector<Point> curve(const std::string& yaml, const std::string& name, const double* launch_s = nullptr) {
  const std::string path = testing_workloads::write_yaml(name, yaml);
  std::vector<Point> points;
  for (std::uint64_t bytes = 1024; bytes <= (std::uint64_t{1} << 30); bytes *= 4) {
    auto exp = workloads::load_experiment(path, {"workload.bytes=" + std::to_string(bytes)});
    if (launch_s) exp.chip.ici.collective_launch = *launch_s;
    const auto r = exp.workload->run(exp, {}).report;
    points.push_back({double(bytes), r["result"]["step_time_s"].get<double>()});
  }
  return points;
}

// t = a + S / B through the two largest sizes (both bandwidth-bound).
struct Fit {
  double a = 0, bandwidth = 0;
  double knee() const { return a * bandwidth; }  // bytes where the two terms are equal
};
Fit fit_large_end(const std::vector<Point>& p) {
  const Point& lo = p[p.size() - 2];
  const Point& hi = p.back();
  Fit f;
  f.bandwidth = (hi.bytes - lo.bytes) / (hi.time_s - lo.time_s);
  f.a = lo.time_s - lo.bytes / f.bandwidth;
  return f;
}

// The curve's shape around its knee, and the launch cost recovered from it.
void check_curve(const std::string& yaml, const std::string& name) {
  const auto with = curve(yaml, name);
  const double zero = 0;
  const auto without = curve(yaml, name + "-nolaunch", &zero);
  auto exp = workloads::load_experiment(testing_workloads::write_yaml(name, yaml));
  const double launch = exp.chip.ici.collective_launch;
  REQUIRE(launch > 0);
  const Fit f = fit_large_end(with), f0 = fit_large_end(without);
  INFO(name << ": a = " << f.a << " s, B = " << f.bandwidth << " B/s, knee " << f.knee() << " B");
  // The fit recovers the configured launch cost, and the launch cost does
  // not change the bandwidth.
  CHECK(f.a - f0.a == Approx(launch).epsilon(0.05));
  CHECK(f.bandwidth == Approx(f0.bandwidth).epsilon(0.01));
  for (const Point& p : with) {
    INFO("bytes " << p.bytes << ": " << p.time_s << " s");
    // Never faster than the launch cost; the fixed cost is visible at the small end.
    CHECK(p.time_s >= launch);
    // Latency-bound well below the knee: the size adds under 15% to the fixed cost.
    if (p.bytes * 10 <= f.knee()) CHECK(p.time_s <= 1.15 * f.a);
    // Bandwidth-bound well above it: within 15% of bytes / B.
    if (p.bytes >= 10 * f.knee()) CHECK(p.time_s <= 1.15 * p.bytes / f.bandwidth);
  }
  CHECK(with.front().bytes * 10 <= f.knee());  // the sweep reaches both regimes
  CHECK(with.back().bytes >= 10 * f.knee());
}

const char* const kV5pPermute = R"(
chip: tpu-v5p
pod: {topology: torus3d, shape: [2, 2, 1], wraparound: [false, false, false]}
workload:
  kind: collective
  op: permute
  bytes: 1024
  pairs: [[0, 1], [1, 0], [2, 3], [3, 2]]
)";

}  // namespace

TEST_CASE("collective launch: v5p 2x2x1 permute, latency-bound then bandwidth-bound, launch recovered",
          "[workloads][collective][calibration]") {
  check_curve(kV5pPermute, "launch-v5p-permute");
}

TEST_CASE("collective launch: v5p 2x2x1 all-reduce, latency-bound then bandwidth-bound, launch recovered",
          "[workloads][collective][calibration]") {
  check_curve(R"(
chip: tpu-v5p
pod: {topology: torus3d, shape: [2, 2, 1], wraparound: [false, false, false]}
workload: {kind: collective, op: all_reduce, bytes: 1024}
)",
              "launch-v5p-allreduce");
}

TEST_CASE("collective launch: v5e 4x4 all-reduce, latency-bound then bandwidth-bound, launch recovered",
          "[workloads][collective][calibration]") {
  check_curve(R"(
chip: tpu-v5e
pod: v5e-4x4
workload: {kind: collective, op: all_reduce, bytes: 1024}
)",
              "launch-v5e-allreduce");
}

TEST_CASE("collective launch: v5p permute against the closed form and the measured ppermute sweep",
          "[workloads][collective][calibration]") {
  const auto pts = curve(kV5pPermute, "launch-v5p-permute-measured");
  auto exp = workloads::load_experiment(testing_workloads::write_yaml("launch-v5p-permute-measured", kV5pPermute));
  const double launch = exp.chip.ici.collective_launch, hop = exp.chip.ici.link_latency;
  const double w = exp.chip.ici.link_bandwidth;
  // formulas.md §2, point to point: one hop x T_min + bytes / W_uni, after the launch.
  for (const Point& p : pts) CHECK(p.time_s == Approx(launch + hop + p.bytes / w).epsilon(0.01));
  // Measured (marin-community/marin issue 6736, v5p-8, lax.ppermute loop
  // slopes): 1-16 KiB about 4.5-5.5 us; 1 MiB 16.94 us; 64 MiB 781.98 us.
  auto at = [&](double bytes) {
    for (const Point& p : pts)
      if (p.bytes == bytes) return p.time_s;
    FAIL("no point at " << bytes);
    return 0.0;
  };
  CHECK(at(1024) >= 4.5e-6);
  CHECK(at(1024) <= 5.5e-6);
  CHECK(at(16384) <= 5.5e-6);
  CHECK(at(1 << 20) == Approx(16.94e-6).epsilon(0.05));
  CHECK(at(1 << 26) == Approx(781.98e-6).epsilon(0.05));
}

}  // namespace test_collective_launch
