// kind: maxtext against its hand-written twin: a MaxText configuration and
// the kind: train experiment that says the same thing in tpusim's words
// (docs/maxtext.md, "From MaxText to tpusim") give the same report; what
// tpusim does not model is refused where it is asked for, or listed.
#include <catch2/catch.hpp>

#include <string>

#include "workloads/experiment.h"
#include "workloads/experiment_fixture.h"

namespace test_maxtext_to_train {

namespace {

using testing_workloads::write_yaml;

const char* const kPod =
    "chip: tpu-v6e\nfidelity: kernel\npod: {topology: torus2d, shape: [2, 2], wraparound: false}\n";

// Llama 3.1 8B's block (MaxText's llama3.1-8b.yml) cut to 2 layers, on 4
// chips of FSDP, the published recipes' remat policy.
std::string maxtext(const std::string& mesh = "ici_fsdp_parallelism: -1", const std::string& extra = "") {
  return std::string(kPod) + R"(workload:
  kind: maxtext
  config: {model_name: llama3.1-8b, override_model_config: true, base_num_decoder_layers: 2,
           per_device_batch_size: 1, max_target_length: 1024, attention: flash,
           remat_policy: custom, decoder_layer_input: offload, query_proj: offload, key_proj: offload,
           value_proj: offload, steps: 30, )" +
         mesh + "}\n" + extra;
}

nlohmann::json run(const std::string& path) {
  auto exp = workloads::load_experiment(path, {});
  return exp.workload->run(exp, {}).report;
}

// maxtext()'s kind: train twin, written by hand from the model file and
// base.yml: float32 weights and Adam moments, bf16 matmuls, each named
// tensor where custom puts it (the rest recomputed, decoder_layer_input
// offloaded); `mesh` and `parallelism` the mapping bodies of its mesh.
std::string twin(const std::string& mesh, const std::string& parallelism) {
  return std::string(kPod) + "mesh: {" + mesh + R"(}
workload:
  kind: train
  model: {type: transformer, layers: 2, d_model: 4096, d_ff: 14336, heads: 32, kv_heads: 8, head_dim: 128,
          seq_len: 1024, vocab: 128256, tied_embeddings: false, mlp: swiglu, attention: flash}
  global_batch: 4
  parallelism: {)" +
         parallelism + R"(}
  precision: {params: float32, optimizer: float32}
  remat: custom
  remat_tensors: {decoder_layer_input: offload, query_proj: offload, key_proj: offload, value_proj: offload,
                  context: remat, mlpwi: remat, mlpwi_0: remat, mlpwi_1: remat, mlpwo: remat, qkv_proj: remat,
                  out_proj: remat}
)";
}

}  // namespace

TEST_CASE("maxtext: a MaxText configuration and its kind: train twin give the same step", "[workloads][maxtext]") {
  const auto mt = run(write_yaml("mt-llama", maxtext()));
  // The twin: FSDP over the 4 chips (mesh axis fsdp).
  const auto train = run(write_yaml("mt-llama-twin", twin("fsdp: 4", "fsdp: fsdp")));
  CHECK(mt["result"]["step_time_s"] == train["result"]["step_time_s"]);
  CHECK(mt["result"]["memory"] == train["result"]["memory"]);
  CHECK(mt["result"]["model_flops"] == train["result"]["model_flops"]);
  CHECK(mt["result"]["host_offload"] == train["result"]["host_offload"]);
  // What became of the keys: the mesh as laid out, a key without effect.
  CHECK(mt["result"]["maxtext"]["mesh"] == nlohmann::json{{"fsdp", 4}});
  CHECK(mt["result"]["maxtext"]["remat_policy"] == "custom");
  bool steps_listed = false;
  for (const auto& k : mt["result"]["ignored_keys"]) steps_listed = steps_listed || k["key"] == "steps";
  CHECK(steps_listed);
  CHECK(mt["result"]["approximations"].empty());
}

TEST_CASE("maxtext: the SparseCore offload flags set parallelism.sparsecore_offload, as the twin says it",
          "[workloads][maxtext]") {
  // FSDP 2 x data 2: the step has weight gathers, gradient reduce-scatters
  // and gradient all-reduces, each moved by its flag.
  const std::string mesh = "ici_fsdp_parallelism: 2, ici_data_parallelism: 2";
  const std::string flags =
      "  xla_flags: \"--xla_tpu_enable_sparse_core_collective_offload_all_gather=true "
      "--xla_tpu_enable_sparse_core_collective_offload_reduce_scatter=true "
      "--xla_tpu_enable_sparse_core_collective_offload_all_reduce=true\"\n";
  const auto mt = run(write_yaml("mt-sc", maxtext(mesh, flags)));
  const auto data_fsdp = [&](const std::string& name, const std::string& offload) {
    return run(write_yaml(name, twin("data: 2, fsdp: 2", "data: data, fsdp: fsdp" + offload)));
  };
  const auto on =
      data_fsdp("mt-sc-twin", ", sparsecore_offload: {all_gather: true, reduce_scatter: true, all_reduce: true}");
  CHECK(mt["result"]["maxtext"]["mesh"] == nlohmann::json{{"data", 2}, {"fsdp", 2}});
  CHECK(mt["result"]["step_time_s"] == on["result"]["step_time_s"]);
  CHECK(mt["stats"]["chip0"]["reduction"] == on["stats"]["chip0"]["reduction"]);
  CHECK(mt["result"]["approximations"].empty());
  // Offloaded, the TensorCore's vector units reduce nothing; without the
  // flags they reduce every gradient collective, as the twin without the key.
  CHECK(mt["stats"]["chip0"]["reduction"]["vector_busy_time"]["value"] == 0);
  const auto off = run(write_yaml("mt-sc-off", maxtext(mesh)));
  const auto off_twin = data_fsdp("mt-sc-off-twin", "");
  CHECK(off["result"]["step_time_s"] == off_twin["result"]["step_time_s"]);
  CHECK(off["stats"]["chip0"]["reduction"]["vector_busy_time"]["value"].get<double>() > 0);
  CHECK_FALSE(off["stats"]["chip0"]["program"].contains("sparsecore_time"));
}

TEST_CASE("maxtext: an all-reduce offload with tensor parallelism is refused where the flag is, or listed",
          "[workloads][maxtext][bad-input]") {
  // tpusim moves the gradient all-reduces; the tensor-parallel ones stay
  // on the TensorCore, which the flag would move too.
  const std::string flags = "  xla_flags: \"--xla_tpu_enable_sparse_core_collective_offload_all_reduce=true\"\n";
  const std::string mesh = "ici_fsdp_parallelism: 2, ici_tensor_parallelism: 2";
  CHECK_THROWS_WITH(workloads::load_experiment(write_yaml("mt-sc-tp", maxtext(mesh, flags)), {}),
                    Catch::Contains("workload.xla_flags") && Catch::Contains("tensor-parallel all-reduces") &&
                        Catch::Contains("allow_unmodelled"));
  const auto r = run(write_yaml("mt-sc-tp-allowed", maxtext(mesh, flags + "  allow_unmodelled: true\n")));
  REQUIRE(r["result"]["approximations"].size() == 1);
  CHECK(r["result"]["approximations"][0]["key"] == "xla_tpu_enable_sparse_core_collective_offload_all_reduce");
}

TEST_CASE(
    "maxtext: a mesh that lays onto no whole physical axes splits one as JAX does, and one that lays "
    "in no way is refused, located at the config",
    "[workloads][maxtext][bad-input]") {
  // fsdp 2 x tensor 2 lays onto the 2 x 2 pod's x and y in MaxText's order.
  CHECK_NOTHROW(workloads::load_experiment(
      write_yaml("mt-mesh-ok", maxtext("ici_fsdp_parallelism: 2, ici_tensor_parallelism: 2")), {}));
  // On 4 x 4, fsdp 8 x tensor 2 takes no whole axes in either order; with
  // allow_split_physical_axes, as JAX's mesh_utils, tensor (later in MaxText's order, the
  // heavier traffic) takes x's inner 2 chips, fsdp x's outer 2 and y.
  const std::string ring8 =
      "chip: tpu-v6e\nfidelity: kernel\npod: {topology: torus2d, shape: [4, 4], wraparound: false}\n";
  std::string text = maxtext("ici_fsdp_parallelism: 8, ici_tensor_parallelism: 2");
  text.replace(0, std::string(kPod).size(), ring8);
  // Without allow_split_physical_axes (base.yml: False) MaxText refuses it.
  CHECK_THROWS_WITH(workloads::load_experiment(write_yaml("mt-mesh-nosplit", text), {}),
                    Catch::Contains("workload.config") &&
                        Catch::Contains("does not lay onto whole physical axes of the 4x4 slice in any order; "
                                        "allow_split_physical_axes: true"));
  text = maxtext("ici_fsdp_parallelism: 8, ici_tensor_parallelism: 2, allow_split_physical_axes: true");
  text.replace(0, std::string(kPod).size(), ring8);
  CHECK_NOTHROW(workloads::load_experiment(write_yaml("mt-mesh-split", text), {}));
  // On 6 x 6, neither 9 nor 4 divides a 6-chip axis or is a multiple of it.
  const std::string six =
      "chip: tpu-v6e\nfidelity: kernel\npod: {topology: torus2d, shape: [6, 6], wraparound: false}\n";
  text = maxtext("ici_fsdp_parallelism: 9, ici_tensor_parallelism: 4, allow_split_physical_axes: true");
  text.replace(0, std::string(kPod).size(), six);
  CHECK_THROWS_WITH(
      workloads::load_experiment(write_yaml("mt-mesh-none", text), {}),
      Catch::Contains("workload.config") &&
          Catch::Contains("does not lay onto whole physical axes of the 6x6 slice in any order, nor splitting"));
}

TEST_CASE("maxtext: a batch or a tensor split the step cannot take is refused at the MaxText key that sets it",
          "[workloads][maxtext][bad-input]") {
  // A quarter sequence per chip: 1 sequence over 4 FSDP replicas.
  std::string text = maxtext();
  text.replace(text.find("per_device_batch_size: 1"), 24, "per_device_batch_size: 0.25");
  CHECK_THROWS_WITH(workloads::load_experiment(write_yaml("mt-batch", text), {}),
                    Catch::Contains("workload.config.per_device_batch_size:") &&
                        Catch::Contains("the global batch of 1 sequences does not divide over 4 replicas"));
  // Llama 3.1 8B's 8 KV heads over tensor parallelism of 4 split; its 14336
  // MLP does; 32 query heads do: fine. Over 3 (a 3-chip axis) nothing splits.
  const std::string ring3 = "chip: tpu-v6e\nfidelity: kernel\npod: {topology: ring, shape: [3], wraparound: true}\n";
  std::string tp3 = maxtext("ici_fsdp_parallelism: 1, ici_tensor_parallelism: -1");
  tp3.replace(0, std::string(kPod).size(), ring3);
  CHECK_THROWS_WITH(workloads::load_experiment(write_yaml("mt-tp3", tp3), {}),
                    Catch::Contains("workload.config.ici_tensor_parallelism:") &&
                        Catch::Contains("tensor parallelism of 3 does not split the model's 32 query heads"));
  // 2 layers over a pipeline of 4 stages: exit 2 at the key (it was an
  // internal error from the stage split).
  CHECK_THROWS_WITH(workloads::load_experiment(
                        write_yaml("mt-pp4", maxtext("ici_fsdp_parallelism: 1, ici_pipeline_parallelism: -1")), {}),
                    Catch::Contains("workload.config.ici_pipeline_parallelism:") &&
                        Catch::Contains("does not divide the model's 2 layers"));
}

TEST_CASE("maxtext: experts without megablox run GShard's einsums into padded buffers, without a capacity, refused",
          "[workloads][maxtext]") {
  // Mixtral 8x7B's block (E 8, top 2, D 4096, expert F 14336) cut to 2
  // layers, 1 sequence of 1024 per chip: C = ceil(1024 x 2 / 8) x 1.25 =
  // 320 buffer rows per expert, 256 of them filled.
  const auto mixtral = [](const std::string& moe) {
    return std::string(kPod) + R"(workload:
  kind: maxtext
  config: {model_name: mixtral-8x7b, override_model_config: true, base_num_decoder_layers: 2,
           per_device_batch_size: 1, max_target_length: 1024, attention: flash, remat_policy: full,
           ici_fsdp_parallelism: -1, )" +
           moe + "}\n";
  };
  const auto grouped = run(write_yaml("mt-moe-grouped", mixtral("capacity_factor: 1.25")));
  const auto einsum =
      run(write_yaml("mt-moe-einsum", mixtral("megablox: false, sparse_matmul: false, capacity_factor: 1.25")));
  const auto executed_over_model = [](const nlohmann::json& r) {
    return r["result"]["hfu"].get<double>() / r["result"]["mfu"].get<double>();
  };
  // The model's FLOPs are the same; the einsum run executes at least, per
  // layer and chip, the five einsums of 2 T E C D and the padding's 64 rows
  // per expert in the experts' nine matmuls of 2 E rows D F (the forward's
  // again under full remat comes on top).
  CHECK(einsum["result"]["model_flops"].get<double>() == Approx(grouped["result"]["model_flops"].get<double>()));
  const double T = 1024, E = 8, C = 320, D = 4096, F = 14336, layers = 2;
  const double extra = layers * (5 * 2 * T * E * C * D + 9 * 2 * E * (C - 256) * D * F);
  const double model_per_chip = grouped["result"]["model_flops"].get<double>() / 4;
  CHECK(executed_over_model(einsum) - executed_over_model(grouped) >= extra / model_per_chip);
  CHECK(executed_over_model(einsum) - executed_over_model(grouped) <= 2 * extra / model_per_chip);
  // Dense experts with no capacity: every expert on every token, not modelled.
  CHECK_THROWS_WITH(
      workloads::load_experiment(write_yaml("mt-moe-dense", mixtral("megablox: false, sparse_matmul: false")), {}),
      Catch::Contains("workload.config") && Catch::Contains("dense experts without a capacity"));
}

TEST_CASE(
    "maxtext: Llama 4's chunked attention over chunks as long as the sequence is causal attention, shorter ones "
    "refused",
    "[workloads][maxtext]") {
  // Llama 4 Scout's block pattern (llama4-17b-16e.yml: RoPE layers chunked,
  // every fourth NoPE and global; every layer MoE) cut small, 4 layers of
  // 1024 tokens.
  const auto llama4 = [](const std::string& attention) {
    return std::string(kPod) + R"(workload:
  kind: maxtext
  config: {model_name: llama4-17b-16e, override_model_config: true, base_num_decoder_layers: 4,
           base_emb_dim: 512, base_mlp_dim: 1024, base_moe_mlp_dim: 1024, base_num_query_heads: 8,
           base_num_kv_heads: 2, head_dim: 64, vocab_size: 2048, per_device_batch_size: 1,
           max_target_length: 1024, attention: flash, remat_policy: full, ici_fsdp_parallelism: -1,
           megablox: true, sparse_matmul: true, )" +
           attention + "}\n";
  };
  // A chunk of the whole sequence lets each query see every key before it,
  // as the global layers do: the same model FLOPs as every layer global
  // (nope_layer_interval: 1), and the same FLOPs MaxText's own count gives
  // (its chunked term n w^2 + r^2 with n = 1, r = 0 is the causal s^2).
  const auto chunked = run(write_yaml("mt-llama4-chunk", llama4("chunk_attn_window_size: 1024")));
  const auto global =
      run(write_yaml("mt-llama4-global", llama4("chunk_attn_window_size: 1024, nope_layer_interval: 1")));
  CHECK(chunked["result"]["model_flops"].get<double>() == Approx(global["result"]["model_flops"].get<double>()));
  CHECK(chunked["result"]["approximations"].empty());
  // Chunks shorter than the sequence (block-diagonal attention) are not modelled.
  CHECK_THROWS_WITH(
      workloads::load_experiment(write_yaml("mt-llama4-short", llama4("chunk_attn_window_size: 512")), {}),
      Catch::Contains("model_name") &&
          Catch::Contains("chunk attention layers of chunks (512 tokens) shorter than the sequence (1024)"));
}

TEST_CASE("maxtext: ici_tensor_parallelism on a mixture of experts splits each expert's MLP width, memory by hand",
          "[workloads][maxtext]") {
  // Llama 4 Scout's block (llama4-17b-16e.yml: 16 experts, 1 per token,
  // and 1 shared expert of moe_mlp_dim, every layer MoE) cut to 4 layers
  // of d_model 512 on 4 chips: fsdp 2 x tensor 2, as Maverick's recipe
  // meshes fsdp 32 x tensor 4.
  const auto scout = [](int moe_mlp_dim) {
    return std::string(kPod) + R"(workload:
  kind: maxtext
  config: {model_name: llama4-17b-16e, override_model_config: true, base_num_decoder_layers: 4,
           base_emb_dim: 512, base_mlp_dim: 1024, base_num_query_heads: 8, base_num_kv_heads: 2,
           head_dim: 64, vocab_size: 2048, per_device_batch_size: 1, max_target_length: 1024,
           attention: flash, remat_policy: full, ici_fsdp_parallelism: -1, ici_tensor_parallelism: 2,
           megablox: true, sparse_matmul: true, chunk_attn_window_size: 1024, base_moe_mlp_dim: )" +
           std::to_string(moe_mlp_dim) + "}\n";
  };
  // Runs (no longer refused at the key), with nothing approximated.
  const auto wide = run(write_yaml("mt-moe-tp-wide", scout(1024)));
  const auto narrow = run(write_yaml("mt-moe-tp-narrow", scout(512)));
  CHECK(wide["result"]["approximations"].empty());
  CHECK(wide["result"]["maxtext"]["mesh"] == nlohmann::json{{"fsdp", 2}, {"tensor", 2}});
  // Widening moe_mlp_dim by 512 adds, per layer, the 16 routed and the
  // shared expert's wi_0, wi_1 and wo slices (3 x 512 x 512 each), MaxText
  // sharding 'mlp' over tensor and 'embed_no_exp' over fsdp: / (2 x 2) per
  // chip; float32 weights and gradients, AdamW's two float32 moments.
  const double added = 4 * (16 + 1) * 3 * 512.0 * 512 / (2 * 2);
  const auto delta = [&](const char* field) {
    return wide["result"]["memory"][field].get<double>() - narrow["result"]["memory"][field].get<double>();
  };
  CHECK(delta("params_bytes") == 4 * added);
  CHECK(delta("grads_bytes") == 4 * added);
  CHECK(delta("optimizer_bytes") == 8 * added);
}

}  // namespace test_maxtext_to_train
