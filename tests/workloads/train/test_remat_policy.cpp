// MaxText's per-tensor remat policies (workloads/train/remat_policy.h)
// against hand counts of a Transformer block's stash: which bytes each
// policy keeps in HBM, recomputes in the backward and sends to the host;
// which forward ops the backward runs again (JAX recomputes what the
// backward reads and the policy did not save, back to what it did); and the
// host copies each take bytes / host.pcie_bandwidth.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "models/model_config.h"
#include "workloads/experiment.h"
#include "workloads/experiment_fixture.h"
#include "workloads/train/holdings.h"
#include "workloads/train/memory.h"
#include "workloads/train/spec.h"

namespace test_remat_policy {

namespace {

using workloads::Remat;
using workloads::TensorPlace;

// Two blocks: B 2 sequences of T 256, D 512, 8 query heads and 2 KV heads
// of 64 (grouped-query), SwiGLU of F 2048, flash attention.
constexpr double B = 2, T = 256, D = 512, NH = 8 * 64, KH = 2 * 64, F = 2048, N = 8;
constexpr double BT = B * T;
// The block's stash, entry by entry (BF16 but the FP32 log-sum-exp):
// Korthikanti et al. 2022 s.4.1 without dropout, flash attention keeping
// the log-sum-exp per row instead of the probabilities.
constexpr double kIn = 2 * BT * D, kLn1 = 2 * BT * D, kQ = 2 * BT * NH, kK = 2 * BT * KH, kV = 2 * BT * KH,
                 kLse = 4 * B * N * T, kContext = 2 * BT * NH, kResidual = 2 * BT * D, kLn2 = 2 * BT * D,
                 kGate = 2 * BT * F, kUp = 2 * BT * F, kAct = 2 * BT * F;
constexpr double kStash = kIn + kLn1 + kQ + kK + kV + kLse + kContext + kResidual + kLn2 + kGate + kUp + kAct;

workloads::TrainSpec spec_with(Remat remat, workloads::TensorPlaces tensors = {}) {
  workloads::TrainSpec s;
  s.model.type = "transformer";
  models::TransformerConfig& t = s.model.transformer;
  t.layers = 2;
  t.d_model = 512;
  t.d_ff = 2048;
  t.heads = 8;
  t.kv_heads = 2;
  t.head_dim = 64;
  t.seq_len = 256;
  t.vocab = 4096;
  t.mlp = "swiglu";
  t.attention = "flash";
  s.global_batch = 2;
  s.remat = remat;
  s.remat_tensors = std::move(tensors);
  return s;
}

struct Split {
  double device, remat, host;
};

// Block 1 (layer 2: after the embedding and block 0) under `spec`.
Split block_split(const workloads::TrainSpec& spec) {
  const models::ModelSpec micro = models::build_model(spec.chip_model(), spec.microbatch_size());
  REQUIRE(micro.layers[2].name == "block1");
  const workloads::LayerMemory m = workloads::layer_memory(spec, micro, 2);
  return {double(m.stash), double(m.rematerialized), double(m.host)};
}

std::set<std::string> recomputed_ops(const workloads::TrainSpec& spec) {
  const models::ModelSpec micro = models::build_model(spec.chip_model(), spec.microbatch_size());
  const models::LayerSpec redo = workloads::recomputed_forward(spec, micro.layers[2]);
  std::set<std::string> out;
  for (const auto& mm : redo.forward) out.insert(mm.name);
  for (const auto& ew : redo.elementwise_fwd) out.insert(ew.name);
  return out;
}

}  // namespace

TEST_CASE("remat policy: each MaxText policy keeps, recomputes and offloads the block's bytes a hand count gives",
          "[workloads][train][remat]") {
  struct Case {
    Remat remat;
    workloads::TensorPlaces tensors;
    double device, host;  // the rest is recomputed
  };
  const double qkv = kQ + kK + kV;
  const std::vector<Case> cases = {
      // MaxText's decoders.py get_remat_policy, name by name.
      {Remat::save_qkv_proj, {}, kIn + qkv, 0},
      {Remat::save_dot_except_mlp, {}, kIn + qkv + kResidual, 0},
      // mlpwo (the down projection's output) is no residual of the block's
      // backward: keeping it keeps nothing more.
      {Remat::save_dot_except_mlpwi, {}, kIn + qkv + kResidual, 0},
      {Remat::save_out_proj, {}, kIn + kResidual, 0},
      {Remat::qkv_proj_offloaded, {}, kIn, qkv},
      {Remat::minimal_offloaded, {}, kIn, qkv + kResidual + kGate + kUp},
      // The published Llama 3.1 recipes' custom policy.
      {Remat::custom,
       {{"decoder_layer_input", TensorPlace::offload},
        {"query_proj", TensorPlace::offload},
        {"key_proj", TensorPlace::offload},
        {"value_proj", TensorPlace::offload}},
       0,
       kIn + qkv},
      // qkv_proj and mlpwi name the fused projections: either places the parts.
      {Remat::custom,
       {{"qkv_proj", TensorPlace::device}, {"mlpwi", TensorPlace::offload}, {"context", TensorPlace::device}},
       kIn + qkv + kContext,
       kGate + kUp},
  };
  for (const Case& c : cases) {
    const Split s = block_split(spec_with(c.remat, c.tensors));
    INFO(workloads::to_string(c.remat) << ": device " << s.device << ", recomputed " << s.remat << ", host " << s.host);
    CHECK(s.device == c.device);
    CHECK(s.host == c.host);
    CHECK(s.remat == kStash - c.device - c.host);
  }
}

TEST_CASE("remat policy: the backward recomputes what it reads and the policy did not save, back to what it did",
          "[workloads][train][remat]") {
  const std::string a = "block1.attn.", f = "block1.mlp.";
  // Q, K and V kept: the attention kernel runs again from them (its
  // log-sum-exp and output are not saved), then everything after it that
  // the backward reads; not the Q, K, V projections, and not the down
  // projection or the last residual add, whose outputs no backward op reads.
  const std::set<std::string> after_qkv = {"block1.ln1",   a + "score",  a + "softmax", a + "context", a + "o",
                                           a + "residual", "block1.ln2", f + "up",      f + "gate",    f + "swiglu"};
  CHECK(recomputed_ops(spec_with(Remat::save_qkv_proj)) == after_qkv);
  // Offloading them saves the same recomputation.
  CHECK(recomputed_ops(spec_with(Remat::qkv_proj_offloaded)) == after_qkv);
  // With the output projection's output kept too, its matmul and the
  // residual add are not run again; LN2 reads the kept sum.
  std::set<std::string> after_out = after_qkv;
  after_out.erase(a + "o");
  after_out.erase(a + "residual");
  CHECK(recomputed_ops(spec_with(Remat::save_dot_except_mlp)) == after_out);
  // The HFU numerator counts the recomputed matmuls: score, context, o, up
  // and gate here, at 2 m k n each (the attention matmuls as the causal
  // flash kernel counts them).
  const workloads::TrainSpec s = spec_with(Remat::save_qkv_proj);
  const models::ModelSpec micro = models::build_model(s.chip_model(), s.microbatch_size());
  const models::LayerSpec& block = micro.layers[2];
  double kept_flops = 0;
  for (const auto& mm : block.forward)
    if (mm.name == a + "q" || mm.name == a + "k" || mm.name == a + "v" || mm.name == f + "down")
      kept_flops += mm.flops();
  CHECK(workloads::recomputed_forward(s, block).forward_matmul_flops() ==
        Approx(block.forward_matmul_flops() - kept_flops).epsilon(1e-12));
  CHECK(kept_flops == 2 * BT * D * (NH + 2 * KH) + 2 * BT * F * D);
}

TEST_CASE("remat policy: offloaded tensors go to the host and back, each copy bytes / host bandwidth",
          "[workloads][train][remat][offload]") {
  const std::string path = testing_workloads::write_yaml("remat-qkv-offloaded", R"(chip: tpu-v4
fidelity: kernel
workload:
  kind: train
  model: {type: transformer, layers: 2, d_model: 512, d_ff: 2048, heads: 8, kv_heads: 2, head_dim: 64,
          seq_len: 256, vocab: 4096, mlp: swiglu, attention: flash}
  global_batch: 2
  remat: qkv_proj_offloaded
)");
  auto exp = workloads::load_experiment(path, {});
  const auto report = exp.workload->run(exp, {}).report;
  const auto& off = report["result"]["host_offload"];
  // Both blocks' Q, K and V, to the host and back.
  const double qkv = kQ + kK + kV;
  CHECK(off["bytes"].get<double>() == 2 * 2 * qkv);
  // tpu-v4.yaml: host.pcie_bandwidth 16 GB/s each way, one HBM access
  // (0.25 us) per copy; the four copies run one after another at most,
  // and the copies out and back of different blocks may overlap.
  const double copy_s = qkv / 1.6e10 + 2.5e-7;
  CHECK(off["time_s"].get<double>() <= 4 * copy_s * 1.001);
  CHECK(off["time_s"].get<double>() >= 2 * copy_s * 0.999);
  CHECK(off["exposed_s"].get<double>() >= 0);
  CHECK(off["exposed_s"].get<double>() <= off["time_s"].get<double>());
  const auto& mem = report["result"]["memory"];
  CHECK(mem["host_bytes"].get<double>() == 2 * qkv);
  CHECK(mem["offload_buffers_bytes"].get<double>() == 2 * qkv);
}

TEST_CASE("remat policy: remat_tensors is refused without remat: custom, and names MaxText's tensors",
          "[workloads][train][remat][bad-input]") {
  const std::string base = R"(chip: tpu-v4
fidelity: kernel
workload:
  kind: train
  model: {type: transformer, layers: 2, d_model: 512, d_ff: 2048, heads: 8, head_dim: 64, seq_len: 256, vocab: 4096}
  global_batch: 2
)";
  CHECK_THROWS_WITH(
      workloads::load_experiment(
          testing_workloads::write_yaml("remat-tensors-alone", base + "  remat: full\n"
                                                                      "  remat_tensors: {query_proj: device}\n"),
          {}),
      Catch::Contains("workload.remat_tensors: remat_tensors places MaxText's named tensors under "
                      "remat: custom; remat is full"));
  CHECK_THROWS_WITH(
      workloads::load_experiment(
          testing_workloads::write_yaml("remat-tensors-typo", base + "  remat: custom\n"
                                                                     "  remat_tensors: {query_prj: device}\n"),
          {}),
      Catch::Contains("query_prj") && Catch::Contains("query_proj"));
  CHECK_THROWS_WITH(
      workloads::load_experiment(
          testing_workloads::write_yaml("remat-tensors-place", base + "  remat: custom\n"
                                                                      "  remat_tensors: {query_proj: host}\n"),
          {}),
      Catch::Contains("unknown tensor place 'host'"));
  CHECK_THROWS_WITH(workloads::load_experiment(
                        testing_workloads::write_yaml("remat-tensors-tile", base + "  remat: qkv_proj_offloaded\n"),
                        {"fidelity=tile"}),
                    Catch::Contains("remat: qkv_proj_offloaded moves activations over the host link"));
}

}  // namespace test_remat_policy
