// What-ifs on a shipped chip or pod (workloads/what_if.h): a `base:`
// mapping and a --set on a named chip load the chip file with only the
// named keys changed, checked and located as inline keys are.
#include <catch2/catch.hpp>

#include <string>

#include "sim/error.h"
#include "workloads/experiment.h"
#include "workloads/experiment_fixture.h"

namespace test_what_if {

using testing_workloads::write_yaml;

namespace {

const char* kMatmul = "workload: {kind: matmul, m: 1024, k: 1024, n: 1024}\n";

workloads::Experiment named_v5e(const std::vector<std::string>& sets = {}) {
  return workloads::load_experiment(write_yaml("named-v5e", std::string("chip: tpu-v5e\n") + kMatmul), sets);
}

// Every chip figure the runs read, equal but for what a test changes.
void check_same_chip(const hw::ChipConfig& a, const hw::ChipConfig& b) {
  CHECK(a.name == b.name);
  CHECK(a.clock == b.clock);
  CHECK(a.mxus_per_core == b.mxus_per_core);
  CHECK(a.vmem == b.vmem);
  CHECK(a.hbm.capacity_bytes == b.hbm.capacity_bytes);
  CHECK(a.hbm.channels == b.hbm.channels);
  CHECK(a.ici.link_bandwidth == b.ici.link_bandwidth);
  CHECK(a.compute_efficiency == b.compute_efficiency);
  CHECK(a.energy.mac_pj == b.energy.mac_pj);
}

}  // namespace

TEST_CASE("what-if: chip {base, hbm.bandwidth} is the named chip with that one key changed", "[workloads][what-if]") {
  const workloads::Experiment base = named_v5e();
  const workloads::Experiment exp = workloads::load_experiment(
      write_yaml("base-v5e", std::string("chip: {base: tpu-v5e, hbm: {bandwidth: 2.4e12}}\n") + kMatmul));
  // tpu-v5e.yaml gives 8.1e11 B/s (docs/reference/tpu-specs.md#v5e.hbm_bw).
  CHECK(base.chip.hbm.bandwidth_bytes_per_s == 8.1e11);
  CHECK(exp.chip.hbm.bandwidth_bytes_per_s == 2.4e12);
  check_same_chip(exp.chip, base.chip);
  REQUIRE(exp.chip_what_if);
  CHECK(exp.chip_what_if->base == "tpu-v5e");
  CHECK(exp.chip_what_if->keys == std::vector<std::pair<std::string, std::string>>{{"hbm.bandwidth", "2.4e12"}});
}

TEST_CASE("what-if: --set chip.KEY on a named chip equals the base mapping", "[workloads][what-if]") {
  const workloads::Experiment exp = named_v5e({"chip.hbm.bandwidth=2.4e12", "chip.ici.link_bandwidth=9e10"});
  const workloads::Experiment base = named_v5e();
  CHECK(exp.chip.hbm.bandwidth_bytes_per_s == 2.4e12);
  CHECK(exp.chip.ici.link_bandwidth == 9e10);
  CHECK(exp.chip.hbm.capacity_bytes == base.chip.hbm.capacity_bytes);
  REQUIRE(exp.chip_what_if);
  CHECK(exp.chip_what_if->keys.size() == 2);
  // A named chip without chip overrides is not a what-if.
  CHECK_FALSE(base.chip_what_if);
}

TEST_CASE("what-if: a wrong key is located where it was written, with the nearest key", "[workloads][what-if]") {
  try {
    named_v5e({"chip.hbmm.bandwidth=2.4e12"});
    FAIL("no error");
  } catch (const sim::ConfigError& e) {
    CHECK(e.where().file == "--set chip.hbmm.bandwidth=2.4e12");
    CHECK(e.key_path() == "chip.hbmm");
    CHECK_THAT(e.detail(), Catch::Contains("did you mean 'hbm'?"));
  }
  try {
    named_v5e({"chip.hbm.bandwith=2.4e12"});
    FAIL("no error");
  } catch (const sim::ConfigError& e) {
    CHECK(e.where().file == "--set chip.hbm.bandwith=2.4e12");
    CHECK_THAT(e.detail(), Catch::Contains("did you mean 'bandwidth'?"));
  }
  const std::string path =
      write_yaml("base-bad", std::string("chip:\n  base: tpu-v5e\n  hbm: {bandwidth: -1}\n") + kMatmul);
  try {
    workloads::load_experiment(path);
    FAIL("no error");
  } catch (const sim::ConfigError& e) {
    CHECK(e.where().file == path);
    CHECK(e.where().line == 3);
    CHECK(e.where().column == 20);
    CHECK(e.key_path() == "chip.hbm.bandwidth");
  }
  try {
    workloads::load_experiment(write_yaml("base-unknown", std::string("chip: {base: tpu-v5f}\n") + kMatmul));
    FAIL("no error");
  } catch (const sim::ConfigError& e) {
    CHECK(e.key_path() == "chip.base");
    CHECK_THAT(e.detail(), Catch::Contains("unknown chip 'tpu-v5f'"));
  }
}

TEST_CASE("what-if: a chip file cannot name a base", "[workloads][what-if]") {
  const std::string path = write_yaml("chip-with-base", "base: tpu-v5e\nname: x\n");
  CHECK_THROWS_AS(workloads::validate_file(path), sim::ConfigError);
}

TEST_CASE("what-if: pod {base, link_bandwidth} and --set pod.KEY on a named pod", "[workloads][what-if]") {
  const std::string tail = "workload: {kind: collective, op: all_reduce, bytes: 1048576}\n";
  const workloads::Experiment named =
      workloads::load_experiment(write_yaml("pod-named", "chip: tpu-v5e\npod: v5e-4x4\n" + tail));
  const workloads::Experiment based = workloads::load_experiment(
      write_yaml("pod-based", "chip: tpu-v5e\npod: {base: v5e-4x4, link_bandwidth: 9.0e10}\n" + tail));
  const workloads::Experiment set = workloads::load_experiment(
      write_yaml("pod-named", "chip: tpu-v5e\npod: v5e-4x4\n" + tail), {"pod.link_bandwidth=9.0e10"});
  for (const workloads::Experiment* e : {&based, &set}) {
    CHECK(e->pod.shape == named.pod.shape);
    CHECK(e->pod.wraparound == named.pod.wraparound);
    CHECK(e->chip.ici.link_bandwidth == 9.0e10);
    REQUIRE(e->pod_what_if);
    CHECK(e->pod_what_if->base == "v5e-4x4");
  }
  // v5e's link: 4.5e10 B/s each way (docs/reference/tpu-specs.md#v5e.ici.bw_per_link_one_way).
  CHECK(named.chip.ici.link_bandwidth == 4.5e10);
}

}  // namespace test_what_if
