// Collective matmul in training (TrainSpec::collective_matmul): with
// sequence parallelism each tensor-parallel reduce-scatter after a linear
// matmul and all-gather before one become N-1 permutes around the tensor
// ring interleaved with N token chunks of that matmul (XLA's windowed
// einsum; docs/calibration.md#maxtext-128b-tensor). Checked against the
// same step without it: the collectives it hides are the ones that run
// exposed there.
#include <catch2/catch.hpp>

#include <string>

#include "nominal_chip.h"
#include "workloads/experiment.h"
#include "workloads/experiment_fixture.h"

namespace test_collective_matmul {

namespace {

using testing_workloads::write_yaml;

// One Transformer block on 4 v4 chips of a wrapping ring, tensor parallel
// with sequence parallelism. Wide (d_ff 65536, 64 heads of 512): each
// linear matmul's local compute is several times its collective
// (per token, 2 x width / 4 FLOPs at 275 TFLOP/s against 2 D x 3/4 bytes at
// 2 x 45 GB/s: width / 9200 times as long), so the collectives can hide.
nlohmann::json run(bool collective_matmul, const std::string& widths) {
  const std::string path = write_yaml(
      std::string("cm") + (collective_matmul ? "on" : "off") + widths, "chip: " + nominal_chip::chip("tpu-v4") + R"(
fidelity: kernel
pod: {topology: ring, shape: [4], wraparound: [true]}
mesh: {model: 4}
workload:
  kind: train
  model: {type: transformer, layers: 1, d_model: 1024, )" + widths + R"(, seq_len: 2048, vocab: 4096}
  global_batch: 4
  parallelism: {tensor: model, sequence: true}
  optimizer: sgd
  collective_matmul: )" + (collective_matmul ? "true" : "false") + "\n");
  auto exp = workloads::load_experiment(path);
  return exp.workload->run(exp, {}).report;
}

const std::string kWide = "d_ff: 65536, heads: 64, head_dim: 512";

double step(const nlohmann::json& r) { return r["result"]["step_time_s"].get<double>(); }

// Sum of the times of the collectives whose name contains `what`.
double time_of(const nlohmann::json& r, const std::string& what, int* count = nullptr) {
  double t = 0;
  int n = 0;
  for (const auto& c : r["collectives"]) {
    const std::string name = c["name"];
    if (name.find(what) == std::string::npos) continue;
    t += c["time_s"].get<double>();
    ++n;
  }
  if (count) *count = n;
  return t;
}

}  // namespace

TEST_CASE("collective matmul off: the reduce-scatter and all-gather pairs, no permutes", "[workloads][train]") {
  const auto off = run(false, kWide);
  int rs = 0, ag = 0, permutes = 0;
  time_of(off, "reduce-scatter", &rs);
  time_of(off, "all-gather", &ag);
  time_of(off, "permute", &permutes);
  // Per block, two in the forward (after the attention and MLP outputs)
  // and two in the backward (the input gradients of QKV and of the MLP's
  // up projection); the embedding's and logits' besides.
  CHECK(rs == ag);
  CHECK(rs >= 4);
  CHECK(permutes == 0);
}

TEST_CASE("collective matmul hides the tensor collectives of a compute-bound block", "[workloads][train]") {
  const auto off = run(false, kWide);
  const auto on = run(true, kWide);
  // Without it every sequence-parallel reduce-scatter and all-gather runs on
  // the critical path (each waits for the matmul before it and the next
  // matmul waits for it): the step less their time is the compute alone.
  const double exposed = time_of(off, "reduce-scatter") + time_of(off, "all-gather");
  REQUIRE(exposed > 0.05 * step(off));
  int permutes = 0;
  time_of(on, "permute", &permutes);
  CHECK(permutes > 0);
  // What is left: the compute in chunks (a quarter of each matmul, a
  // little less efficient than whole) plus the gathers still owed at the
  // block's edges (the block's output leaves whole, as without).
  const double owed = time_of(on, "all-gather");
  CHECK(step(on) == Approx(step(off) - exposed + owed).epsilon(0.04));
  CHECK(step(on) < step(off));
}

TEST_CASE("collective matmul never costs more than its permutes' latencies", "[workloads][train]") {
  // The step may grow by at most the extra launches and hops of the
  // permutes: per permute, v4's collective launch (4 us,
  // docs/calibration.md#collective-launch) and one ICI hop (1 us). Only
  // where the matmuls are longer than the collectives: a permute moves its
  // shard one way round the ring where the ring collective it replaces uses
  // both directions, so where communication dominates the step grows by
  // more (not modelled: XLA's bidirectional collective matmul).
  const auto off = run(false, kWide);
  const auto on = run(true, kWide);
  int permutes = 0;
  time_of(on, "permute", &permutes);
  CHECK(step(on) <= step(off) + permutes * (4.0e-6 + 1.0e-6));
}

}  // namespace test_collective_matmul
