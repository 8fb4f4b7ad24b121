// Which blocks have experts, and how a chip's experts are multiplied,
// against hand counts: DeepSeek-V3's first dense layers (arXiv:2412.19437
// s.4.2: the first three layers' FFNs dense), Llama 4 Maverick's experts on
// every second layer (MaxText's interleave_moe_layer_step: block i has
// experts when (i + 1) % step == 0), each with its own width (d_ff dense,
// expert_d_ff experts), shared experts beside the routed ones; dropless
// routing's tokens per expert; and a grouped matmul (megablox) doing the
// same FLOPs as the per-expert batch, in one matmul over all the tokens;
// GShard's one-hot einsum dispatch (MaxText without megablox) against a hand
// count of its buffers, einsums and padding.
#include <catch2/catch.hpp>

#include "model_lookup.h"
#include "models/transformer.h"

namespace test_moe_layers {

namespace {

using model_lookup::has_matmul;
using model_lookup::layer;
using model_lookup::matmul;

models::TransformerConfig small_moe() {
  models::TransformerConfig c;
  c.layers = 6;
  c.d_model = 256;
  c.d_ff = 2048;  // the dense blocks'
  c.heads = 4;
  c.head_dim = 64;
  c.seq_len = 64;
  c.vocab = 512;
  c.mlp = "swiglu";
  c.experts = 8;
  c.top_k = 2;
  c.expert_d_ff = 512;
  return c;
}

double mlp_params(const models::LayerSpec& l) {
  double n = 0;
  for (const auto& p : l.params)
    if (p.name.find(".mlp.") != std::string::npos) n += double(p.elements());
  return n;
}

}  // namespace

TEST_CASE("First dense layers, then experts (DeepSeek-V3's layout)", "[models][moe_layers]") {
  auto c = small_moe();
  c.first_dense_layers = 2;
  c.shared_experts = 1;
  const auto m = models::build_transformer(c, 1);
  const double D = 256, F = 2048, EF = 512, E = 8;
  for (std::uint64_t i = 0; i < 6; ++i) {
    const std::string b = "block" + std::to_string(i);
    const auto& l = layer(m, b);
    if (i < 2) {
      CHECK(mlp_params(l) == 3 * D * F);
      CHECK(has_matmul(l, b + ".mlp.up"));
    } else {
      // router, 8 routed and 1 shared expert of 3 D EF each
      CHECK(mlp_params(l) == D * E + (E + 1) * 3 * D * EF);
      CHECK(l.routing_layer == i - 2);
    }
  }
  CHECK(c.moe_layers() == 4);
}

TEST_CASE("Experts on every second block (Llama 4 Maverick's interleave)", "[models][moe_layers]") {
  auto c = small_moe();
  c.moe_layer_step = 2;
  const auto m = models::build_transformer(c, 1);
  std::uint64_t ordinal = 0;
  for (std::uint64_t i = 0; i < 6; ++i) {
    const std::string b = "block" + std::to_string(i);
    const bool experts = i % 2 == 1;
    CHECK(c.moe_layer(i) == experts);
    CHECK(has_matmul(layer(m, b), b + ".mlp.experts.up") == experts);
    if (experts) CHECK(layer(m, b).routing_layer == ordinal++);
  }
  CHECK(c.moe_layers() == 3);
}

TEST_CASE("Dropless experts: each takes tokens x top_k / experts, grouped is one matmul of the same FLOPs",
          "[models][moe_layers]") {
  auto c = small_moe();
  const std::uint64_t B = 4;  // 256 tokens
  const auto batched = models::build_transformer(c, B);
  c.expert_matmul = "grouped";
  const auto grouped = models::build_transformer(c, B);
  const auto& lb = layer(batched, "block0");
  const auto& lg = layer(grouped, "block0");
  // 256 tokens x top 2 over 8 experts: 64 each, no capacity (dropless).
  const auto& up = matmul(lb, "block0.mlp.experts.up");
  CHECK(up.count == 8);
  CHECK(up.m == 64);
  CHECK(up.groups == 0);
  const auto& gup = matmul(lg, "block0.mlp.experts.up");
  CHECK(gup.count == 1);
  CHECK(gup.m == 8 * 64);
  CHECK(gup.groups == 8);
  CHECK(gup.group_tile == 512);  // MaxText's tile_batch_seq
  CHECK(gup.tokens == models::Dim::m);
  CHECK(matmul(lg, "block0.mlp.experts.up.dW").k == 8 * 64);
  // Active FLOPs: every token through top_k experts of 3 D EF, 2 FLOPs per MAC.
  const double tokens = 256, D = 256, EF = 512;
  double expert_fwd = 0;
  for (const auto& mm : lg.forward)
    if (mm.name.find(".experts.") != std::string::npos) expert_fwd += mm.flops();
  CHECK(expert_fwd == 2 * tokens * 2 * 3 * D * EF);
  CHECK(lg.forward_matmul_flops() == lb.forward_matmul_flops());
  CHECK(lg.backward_matmul_flops() == lb.backward_matmul_flops());
}

TEST_CASE("Einsum dispatch: capacity-padded buffers, dispatch and combine einsums, model FLOPs unpadded",
          "[models][moe_layers]") {
  auto c = small_moe();
  c.expert_matmul = "einsum";
  c.capacity_factor = 1.25;
  const std::uint64_t B = 4, T = 64, E = 8, D = 256, EF = 512;
  const auto m = models::build_transformer(c, B);
  const auto& l = layer(m, "block0");
  // MaxText's generate_masks: C = int(max(ceil(T top_k / E) cf, cf)) =
  // ceil(64 x 2 / 8) x 1.25 = 20 rows per expert and sequence.
  const std::uint64_t C = 20;
  const auto& up = matmul(l, "block0.mlp.experts.up");
  CHECK(up.count == E);
  CHECK(up.m == B * C);
  CHECK(up.tokens == models::Dim::none);         // padded: not resized by routing
  CHECK(up.model_share == Approx(16.0 / 20.0));  // 64 x 2 / 8 = 16 tokens fill 20 rows
  // dispatch "BSM,BSEC->EBCM" per sequence: (E C) x T x D; combine the other way.
  const auto& dispatch = matmul(l, "block0.mlp.dispatch.einsum");
  CHECK(dispatch.kind == models::MatmulKind::dispatch);
  CHECK(dispatch.count == B);
  CHECK(dispatch.m == E * C);
  CHECK(dispatch.k == T);
  CHECK(dispatch.n == D);
  const auto& combine = matmul(l, "block0.mlp.combine.einsum");
  CHECK(combine.m == T);
  CHECK(combine.k == E * C);
  CHECK(combine.n == D);
  for (const char* bwd : {".combine.einsum.dY", ".combine.einsum.dMask", ".dispatch.einsum.dX"})
    CHECK(matmul(l, std::string("block0.mlp") + bwd).flops() == Approx(2.0 * B * T * E * C * D));
  // Executed beyond the model: five einsums of 2 B T E C D, and the
  // experts' padding (4 of every 20 rows) in their three forward and six
  // backward matmuls of 2 E (B C) D EF each.
  const double einsums = 5 * 2.0 * B * T * E * C * D;
  const double padding = 9 * 2.0 * E * B * (C - 16) * D * EF;
  CHECK(l.extra_matmul_flops() == Approx(einsums + padding));
  // The model's work is the dropless one: every token through top_k experts.
  c.expert_matmul = "batched";
  c.capacity_factor = 0;
  const models::ModelSpec dropless_model = models::build_transformer(c, B);
  const auto& dropless = layer(dropless_model, "block0");
  CHECK(l.forward_matmul_flops() == Approx(dropless.forward_matmul_flops()));
  CHECK(l.backward_matmul_flops() == Approx(dropless.backward_matmul_flops()));
  // The masks: B T E C cells, a bool and a bf16 weight each.
  bool masks = false;
  for (const auto& st : l.stash)
    if (st.name == "block0.mlp.masks.out") masks = st.bytes() == B * T * E * C * 3;
  CHECK(masks);
}

TEST_CASE("Einsum dispatch needs a capacity, and over expert shards each expert takes every shard's buffers",
          "[models][moe_layers]") {
  auto c = small_moe();
  c.expert_matmul = "einsum";
  CHECK_THROWS_WITH(models::build_transformer(c, 1), Catch::Contains("needs a capacity_factor > 0"));
  // 2 shards of the 8 experts: a chip holds 4, each computing the B x C
  // rows of both shards' sequences (C = ceil(64 x 2 / 8) x 1.25 = 20).
  c.capacity_factor = 1.25;
  c.expert_shards = 2;
  const std::uint64_t B = 4, C = 20;
  const models::ModelSpec sharded = models::build_transformer(c, B);
  const auto& up = matmul(layer(sharded, "block0"), "block0.mlp.experts.up");
  CHECK(up.count == 4);
  CHECK(up.m == 2 * B * C);
}

}  // namespace test_moe_layers
