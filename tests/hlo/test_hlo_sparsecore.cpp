// The SparseCores as hardware (hw/sparsecore.h, docs/hlo.md#sparsecore):
// what XLA puts on the "sparsecore" execution thread runs beside the
// TensorCore, a collective offloaded there leaves the TensorCore free for
// the work scheduled between its start and done, and the SparseCores' own
// HBM bandwidth bounds their work.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "app/cli_runner.h"
#include "sim/error.h"
#include "workloads/experiment.h"
#include "workloads/hlo/workload.h"

namespace test_hlo_sparsecore {

namespace {

struct Run {
  double step = 0;
  nlohmann::json stats;  // chip0's
};

double value(const nlohmann::json& group, const char* key) {
  return group.contains(key) ? group[key]["value"].get<double>() : 0.0;
}

Run run(const std::string& hlo, const std::string& chip, const std::string& pod) {
  const testing_cli::TempDir dir("hlo-sparsecore");
  std::ofstream(dir / "m.hlo.txt") << hlo;
  const std::string yaml = "name: sc\nchip: " + chip + "\n" + pod + "workload: {kind: hlo, file: m.hlo.txt}\n";
  const workloads::Experiment exp = workloads::load_experiment_text(yaml, dir / "sc.yaml");
  const nlohmann::json r = exp.workload->run(exp, {}).report;
  return {r["result"]["step_time_s"].get<double>(), r["stats"]["chip0"]};
}

// Four v6e chips; a 2048 x 4096 x 4096 bf16 dot on the TensorCore, and an
// all-gather of 512 x 4096 bf16 from each chip (16 MiB gathered).
const std::string kHead = R"(HloModule offload, is_scheduled=true, num_partitions=4

%fused_dot (p0: bf16[2048,4096], p1: bf16[4096,4096]) -> bf16[2048,4096] {
  %p0 = bf16[2048,4096]{1,0} parameter(0)
  %p1 = bf16[4096,4096]{1,0} parameter(1)
  ROOT %dot = bf16[2048,4096]{1,0} dot(%p0, %p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}

%gather_all (q: bf16[512,4096]) -> bf16[2048,4096] {
  %q = bf16[512,4096]{1,0} parameter(0)
  ROOT %ag = bf16[2048,4096]{1,0} all-gather(%q), channel_id=1, replica_groups=[1,4]<=[4], dimensions={0}, use_global_device_ids=true
}, execution_thread="sparsecore"

ENTRY %main (a: bf16[2048,4096], b: bf16[4096,4096], x: bf16[512,4096]) -> () {
  %a = bf16[2048,4096]{1,0} parameter(0)
  %b = bf16[4096,4096]{1,0} parameter(1)
  %x = bf16[512,4096]{1,0} parameter(2)
)";
const std::string kPod = "pod: {topology: torus2d, shape: [2, 2], wraparound: [false, false]}\n";
const std::string kDot = "  %f = bf16[2048,4096]{1,0} fusion(%a, %b), kind=kOutput, calls=%fused_dot\n";
const std::string kGather =
    "  %g = bf16[2048,4096]{1,0} all-gather(%x), channel_id=1, replica_groups=[1,4]<=[4], dimensions={0}, "
    "use_global_device_ids=true\n";
const std::string kOffloadStart =
    "  %cs = ((bf16[512,4096]{1,0}), bf16[2048,4096]{1,0}, s32[]) call-start(%x), "
    "async_execution_thread=\"sparsecore\", to_apply=%gather_all, "
    "backend_config={\"sparse_core_config\":{\"offload\":\"OFFLOAD_COLLECTIVE\"}}\n";
const std::string kOffloadDone = "  %cd = bf16[2048,4096]{1,0} call-done(%cs)\n";
const std::string kEnd = "  ROOT %t = () tuple()\n}\n";

}  // namespace

TEST_CASE("sparsecore: offloading an all-gather frees the TensorCore, the step shortens by the overlap") {
  const Run dot = run(kHead + kDot + kEnd, "tpu-v6e", kPod);
  const Run gather = run(kHead + kGather + kEnd, "tpu-v6e", kPod);
  // On the TensorCore the gather is synchronous: the dot waits for it.
  const Run sync = run(kHead + kGather + kDot + kEnd, "tpu-v6e", kPod);
  // Offloaded (call-start on the sparsecore thread), the dot scheduled
  // between its start and done runs while the SparseCore gathers.
  const Run offload = run(kHead + kOffloadStart + kDot + kOffloadDone + kEnd, "tpu-v6e", kPod);
  INFO("dot " << dot.step << " gather " << gather.step << " sync " << sync.step << " offload " << offload.step);
  CHECK(sync.step == Approx(dot.step + gather.step).epsilon(0.02));
  CHECK(offload.step == Approx(std::max(dot.step, gather.step)).epsilon(0.03));
  // Shortened by the shorter of the two, the time the TensorCore no longer waits.
  CHECK(sync.step - offload.step == Approx(std::min(dot.step, gather.step)).epsilon(0.05));
  // The SparseCore's time is the gather's; what ran beside the dot is the dot's.
  const nlohmann::json& prog = offload.stats["program"];
  CHECK(value(prog, "sparsecore_time") == Approx(gather.step).epsilon(0.03));
  CHECK(value(prog, "hidden_sparsecore_time") == Approx(std::min(dot.step, gather.step)).epsilon(0.05));
  CHECK(value(sync.stats["program"], "sparsecore_time") == 0);
}

TEST_CASE("sparsecore: a gather on the sparsecore thread runs at the SparseCores' own HBM bandwidth") {
  // A 65536 x 128 f32 table, 16384 indices, 16384 rows out: the cost
  // model's bytes are the operands (32 MiB + 64 KiB) and the result (8 MiB).
  std::ifstream in(std::string(TPUSIM_SOURCE_DIR) + "/tests/data/hlo/sparsecore-gather.hlo.txt");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const double bytes = 65536.0 * 128 * 4 + 16384.0 * 4 + 16384.0 * 128 * 4;
  // A v6e whose 2 SparseCores move 1e11 B/s each: 2e11 B/s together, far
  // below the chip's 1.6e12 B/s of HBM, so the SparseCores are the limit.
  const Run slow = run(text, "{base: tpu-v6e, sparsecore: {hbm_bandwidth: 1.0e11}}", "");
  CHECK(slow.step == Approx(bytes / 2.0e11).epsilon(0.02));
  CHECK(value(slow.stats, "sparsecore_hbm_bytes") == bytes);
  CHECK(value(slow.stats, "sparsecore_busy_time") == Approx(slow.step).epsilon(0.02));
  // The shipped v6e (8e11 B/s each): HBM's 1.6e12 B/s and the SparseCores'
  // together are the same figure (docs/reference/tpu-specs.md#common.sparsecore).
  const Run shipped = run(text, "tpu-v6e", "");
  CHECK(shipped.step == Approx(bytes / 1.6e12).epsilon(0.03));
  CHECK(shipped.step >= bytes / 1.6e12);
}

TEST_CASE("sparsecore: work on the sparsecore thread of a chip without SparseCores is a located error") {
  try {
    run(kHead + kOffloadStart + kOffloadDone + kEnd, "tpu-v5e",
        "pod: {topology: torus2d, shape: [2, 2], wraparound: [false, false]}\n");
    FAIL("no error");
  } catch (const sim::ConfigError& e) {
    INFO(e.what());
    CHECK(e.where().line == 11);  // the all-gather in %gather_all
    CHECK(std::string(e.what()).find("has no SparseCores") != std::string::npos);
  }
}

}  // namespace test_hlo_sparsecore
