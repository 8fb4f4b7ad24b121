// Issue 19 through whole experiments: stragglers drawn from a seed
// (stragglers: [{fraction, seed}]) and degraded links (pod.links) in a
// data-parallel step, where the pod is no longer symmetric.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "workloads/experiment.h"
#include "workloads/experiment_fixture.h"

namespace test_pod_links_stragglers {

namespace {

using testing_workloads::dp_mlp_ring_of_8;
using testing_workloads::run;
using testing_workloads::write_yaml;

std::vector<std::uint32_t> drawn(const nlohmann::json& report, std::size_t entry = 0) {
  return report["stragglers"][entry]["chips"].get<std::vector<std::uint32_t>>();
}

std::string ring_of(int chips, const std::string& stragglers) {
  return write_yaml("random-stragglers-" + std::to_string(chips), R"(
chip: tpu-v4
pod: {topology: ring, shape: [)" + std::to_string(chips) + R"(]}
stragglers: )" + stragglers + R"(
workload: {kind: collective, op: all_reduce, bytes: 1048576}
)");
}

}  // namespace

TEST_CASE("random stragglers: the seed's engine output picks the chip", "[workloads][stragglers]") {
  // std::mt19937_64 seeded 5489 (the engine's default seed) first gives
  // 14514284786278117030, which is 6 mod 8 (1000 is a multiple of 8: the
  // last three digits, 030, decide): the first of 8 candidates swapped
  // with the one at index 6.
  const std::vector<std::uint32_t> eight{0, 1, 2, 3, 4, 5, 6, 7};
  CHECK(workloads::choose_stragglers(eight, 1, 5489) == std::vector<std::uint32_t>{6});
  // Candidates are taken by position: the same draw among other chips.
  CHECK(workloads::choose_stragglers({10, 11, 12, 13, 14, 15, 16, 17}, 1, 5489) == std::vector<std::uint32_t>{16});
  CHECK(workloads::choose_stragglers(eight, 8, 1) == eight);
}

TEST_CASE("random stragglers: round(F x chips) chips, the same for the same seed, named in the report",
          "[workloads][stragglers]") {
  const int chips = 64;
  const double fraction = 0.1;  // 6.4 rounds to 6
  const auto a = run(ring_of(chips, "[{fraction: 0.1, seed: 7, compute: 0.5}]"));
  const auto b = run(ring_of(chips, "[{fraction: 0.1, seed: 7, compute: 0.5}]"));
  const auto c = run(ring_of(chips, "[{fraction: 0.1, seed: 8, compute: 0.5}]"));
  const std::size_t want = static_cast<std::size_t>(std::llround(fraction * chips));
  REQUIRE(want == 6);
  CHECK(drawn(a).size() == want);
  CHECK(drawn(a) == drawn(b));
  CHECK(drawn(a) != drawn(c));
  for (const std::uint32_t chip : drawn(a)) CHECK(chip < static_cast<std::uint32_t>(chips));
  CHECK(a["stragglers"][0]["seed"] == 7);
  CHECK(a["stragglers"][0]["compute"] == 0.5);
  // A listed entry first: the draw is among the chips it left.
  const auto d = run(ring_of(8, "[{chips: [0, 1, 2, 3, 4, 5, 6], compute: 0.5}, {fraction: 0.125, hbm: 0.5}]"));
  CHECK(drawn(d, 1) == std::vector<std::uint32_t>{7});
}

TEST_CASE("random stragglers: bad entries are located", "[workloads][stragglers]") {
  CHECK_THROWS_WITH(run(ring_of(8, "[{fraction: 0.01, compute: 0.5}]")),
                    Catch::Contains("stragglers[0].fraction") && Catch::Contains("at least 1 is needed"));
  CHECK_THROWS_WITH(run(ring_of(8, "[{chips: [1], fraction: 0.5, compute: 0.5}]")),
                    Catch::Contains("stragglers[0]") && Catch::Contains("not both"));
}

TEST_CASE("degraded links: a data-parallel step on a ring with a slow link, every chip or one per group",
          "[workloads][links]") {
  // The gradient all-reduces cross the slow link: the step is longer than
  // the even pod's. The pod has no symmetric axes, and one chip standing
  // for its replicas (it goes on when the slowest of them is done) gives
  // the step simulating every chip gives, to the replica check's 1%.
  const std::string path = dp_mlp_ring_of_8();
  const std::string slow = "pod.links=[{from: [3], to: [4], bandwidth: 0.25}]";
  const auto even = run(path);
  const auto auto_replicas = run(path, {slow});
  const auto every_chip = run(path, {slow, "replicas=all"});
  const double t_even = even["result"]["step_time_s"].get<double>();
  const double t_auto = auto_replicas["result"]["step_time_s"].get<double>();
  const double t_all = every_chip["result"]["step_time_s"].get<double>();
  INFO("even " << t_even << " s, slow link " << t_auto << " s (one per group), " << t_all << " s (every chip)");
  CHECK(t_auto > t_even);
  CHECK(std::abs(t_auto - t_all) <= 0.01 * t_all);
  CHECK(auto_replicas["pod"]["links"][0]["bandwidth"] == 0.25);
}

}  // namespace test_pod_links_stragglers
