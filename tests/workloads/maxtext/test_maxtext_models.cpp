// What MaxText's decoder blocks make of a model file (docs/maxtext.md,
// "Decoder blocks"), counted by hand from the shipped model files and the
// block rules, for the blocks the recipes do not cover.
#include <catch2/catch.hpp>

#include "maxtext_fixture.h"

namespace test_maxtext_models {

using maxtext_fixture::load;
using workloads::AttentionType;

TEST_CASE("maxtext models: gemma2 scans pairs of a local and a global layer", "[maxtext][models]") {
  // gemma2-9b.yml: base_num_decoder_layers 21 ("half of the real number of layers"), window 4096.
  const auto m = load("{model_name: gemma2-9b, per_device_batch_size: 1}", 8).model;
  const auto layers = m.layers();
  REQUIRE(layers.size() == 42);
  for (std::size_t i = 0; i < layers.size(); ++i) {
    INFO(i);
    CHECK(layers[i].attention == (i % 2 == 0 ? AttentionType::local_sliding : AttentionType::global));
    CHECK(layers[i].window == (i % 2 == 0 ? 4096u : 0u));
  }
  CHECK(m.attn_logits_soft_cap == 50.0);
  CHECK(m.final_logits_soft_cap == 30.0);
}

TEST_CASE("maxtext models: gpt-oss alternates local and global layers, every one MoE", "[maxtext][models]") {
  // gpt-oss-20b.yml: 24 layers, window 128, 32 experts, 4 per token, experts 2880 wide (mlp_dim).
  const auto m = load("{model_name: gpt-oss-20b, per_device_batch_size: 1}", 8).model;
  const auto layers = m.layers();
  REQUIRE(layers.size() == 24);
  std::size_t local = 0, moe = 0;
  for (const auto& l : layers) {
    local += l.attention == AttentionType::local_sliding && l.window == 128 ? 1 : 0;
    moe += l.moe ? 1 : 0;
  }
  CHECK(local == 12);
  CHECK(moe == 24);
  CHECK(m.expert_mlp_dim() == 2880);
  CHECK(m.shared_experts_in_use() == 0);  // base.yml's shared_experts 1 is not used by this block
  CHECK(m.attention_sink);
}

TEST_CASE("maxtext models: deepseek2-16b has one dense layer, then MoE with two shared experts", "[maxtext][models]") {
  // deepseek2-16b.yml: 27 layers, first_num_dense_layers 1, 64 experts (6 per token) of 1408,
  // shared_experts 2, MLA with full-rank queries (q_lora_rank 0).
  const auto m = load("{model_name: deepseek2-16b, per_device_batch_size: 1}", 8).model;
  const auto layers = m.layers();
  REQUIRE(layers.size() == 27);
  CHECK_FALSE(layers[0].moe);
  for (std::size_t i = 1; i < layers.size(); ++i) CHECK(layers[i].moe);
  CHECK(m.expert_mlp_dim() == 1408);
  CHECK(m.mlp_dim == 10944);
  CHECK(m.shared_experts_in_use() == 2);
  CHECK(m.attention_type == AttentionType::mla);
  CHECK(m.q_lora_rank == 0);
}

TEST_CASE("maxtext models: qwen3 MoE experts take moe_mlp_dim, Mixtral's take mlp_dim", "[maxtext][models]") {
  // qwen3-30b-a3b.yml: base_mlp_dim 768 = base_moe_mlp_dim 768, 128 experts, 8 per token.
  const auto q = load("{model_name: qwen3-30b-a3b, per_device_batch_size: 1}", 8).model;
  CHECK(q.expert_mlp_dim() == 768);
  CHECK(q.num_experts == 128);
  // mixtral-8x7b.yml: base_mlp_dim 14336 (base_moe_mlp_dim too); the mixtral block reads mlp_dim
  // (layers/mixtral.py), so another base_moe_mlp_dim changes nothing.
  const auto mix = load(
      "{model_name: mixtral-8x7b, per_device_batch_size: 1, base_moe_mlp_dim: 1000, override_model_config: true}", 8);
  CHECK(mix.model.expert_mlp_dim() == 14336);
}

}  // namespace test_maxtext_models
