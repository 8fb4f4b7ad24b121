// Host memory (S(5)) in compiled HLO: copies to and from it run over the
// chip's host link (host.pcie_bandwidth, each direction on its own,
// hw/host_link.h) and overlap the TensorCore's work as far as the schedule
// puts them between a copy-start and its copy-done (docs/hlo.md).
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "app/cli_runner.h"
#include "workloads/experiment.h"
#include "workloads/hlo/workload.h"

namespace test_hlo_host_memory {

namespace {

// 1,048,576 f32 = 4 MiB moved over the host link; a 2048 x 4096 x 4096 bf16
// dot (69 GFLOP) on the TensorCore.
const char* kHead = R"(HloModule host, is_scheduled=true, num_partitions=1

%fused_dot (p0: bf16[2048,4096], p1: bf16[4096,4096]) -> bf16[2048,4096] {
  %p0 = bf16[2048,4096]{1,0} parameter(0)
  %p1 = bf16[4096,4096]{1,0} parameter(1)
  ROOT %dot = bf16[2048,4096]{1,0} dot(%p0, %p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}

ENTRY %main (a: bf16[2048,4096], b: bf16[4096,4096], g: f32[1048576], h: f32[1048576]) -> bf16[2048,4096] {
  %a = bf16[2048,4096]{1,0} parameter(0)
  %b = bf16[4096,4096]{1,0} parameter(1)
  %g = f32[1048576]{0:T(1024)} parameter(2)
  %h = f32[1048576]{0:T(1024)S(5)} parameter(3)
)";

struct Run {
  double step = 0;
  double host_bytes = 0;  // chip0.program.host_transfer_bytes
  double link = 0;        // the chip's host.pcie_bandwidth, B/s each way
};

Run run(const std::string& body) {
  const testing_cli::TempDir dir("hlo-host");
  std::ofstream(dir / "m.hlo.txt") << kHead << body << "}\n";
  const std::string yaml = "name: host\nchip: tpu-v6e\nworkload: {kind: hlo, file: m.hlo.txt}\n";
  const workloads::Experiment exp = workloads::load_experiment_text(yaml, dir / "host.yaml");
  const nlohmann::json r = exp.workload->run(exp, {}).report;
  Run out;
  out.step = r["result"]["step_time_s"].get<double>();
  const nlohmann::json& prog = r["stats"]["chip0"]["program"];
  out.host_bytes = prog.contains("host_transfer_bytes") ? prog["host_transfer_bytes"]["value"].get<double>() : 0.0;
  out.link = exp.chip.host.pcie_bandwidth;
  return out;
}

const std::string kDot = "  %f = bf16[2048,4096]{1,0} fusion(%a, %b), kind=kOutput, calls=%fused_dot\n";
const std::string kToHost = "  %o = f32[1048576]{0:T(1024)S(5)} copy(%g)\n";
const std::string kToHostStart =
    "  %os = (f32[1048576]{0:T(1024)S(5)}, f32[1048576]{0:T(1024)}, u32[]{:S(2)}) copy-start(%g)\n";
const std::string kToHostDone = "  %o = f32[1048576]{0:T(1024)S(5)} copy-done(%os)\n";
const std::string kFromHostStart =
    "  %is = (f32[1048576]{0:T(1024)}, f32[1048576]{0:T(1024)S(5)}, u32[]{:S(2)}) copy-start(%h)\n";
const std::string kFromHostDone = "  %i = f32[1048576]{0:T(1024)} copy-done(%is)\n";
const std::string kRoot = "  ROOT %t = () tuple()\n";
constexpr double kBytes = 1048576.0 * 4;

}  // namespace

TEST_CASE("host memory: a copy to S(5) moves its bytes over the host link at its bandwidth") {
  const Run copy = run(kToHost + kRoot);
  // 4 MiB at v6e's 32 GB/s (docs/reference/tpu-specs.md#v6e.pcie_bw): 131 us.
  CHECK(copy.host_bytes == kBytes);
  CHECK(copy.step == Approx(kBytes / copy.link).epsilon(0.02));
  CHECK(copy.step >= kBytes / copy.link);
}

TEST_CASE("host memory: a synchronous copy follows the dot, a copy-start before it overlaps it") {
  const Run dot = run(kDot + kRoot);
  const Run sync = run(kDot + kToHost + kRoot);
  const Run async = run(kToHostStart + kDot + kToHostDone + kRoot);
  const double copy = kBytes / sync.link;
  INFO("dot " << dot.step << " copy " << copy << " sync " << sync.step << " async " << async.step);
  CHECK(dot.host_bytes == 0);
  // Synchronous: one after the other; scheduled between copy-start and
  // copy-done: the longer of the two (the copy, 131 us, against the dot's ~80 us).
  CHECK(sync.step == Approx(dot.step + copy).epsilon(0.02));
  CHECK(async.step == Approx(std::max(dot.step, copy)).epsilon(0.03));
  CHECK(async.step >= std::max(dot.step, copy));
  CHECK(async.host_bytes == kBytes);
}

TEST_CASE("host memory: a prefetch from S(5) and an offload to it run at once, one per direction") {
  const Run both = run(kFromHostStart + kToHostStart + kFromHostDone + kToHostDone + kRoot);
  // The link is dual-simplex (hw/host_link.h): 4 MiB each way takes one
  // transfer's time, not two.
  CHECK(both.host_bytes == 2 * kBytes);
  CHECK(both.step == Approx(kBytes / both.link).epsilon(0.03));
}

}  // namespace test_hlo_host_memory
