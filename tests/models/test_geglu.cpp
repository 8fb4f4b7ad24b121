// GeGLU MLP (Shazeer 2020, arXiv:2002.05202, eq. 5: FFN_GEGLU =
// (GELU(x W) * x V) W_2; Gemma's MLP) against its definition: three
// d_model x d_ff matrices, three matmuls forward of 2 BT D F FLOPs each,
// the gate's and up's outputs and the product stashed.
#include <catch2/catch.hpp>

#include "model_lookup.h"
#include "models/transformer.h"

namespace test_geglu {

using model_lookup::layer;
using model_lookup::matmul;

TEST_CASE("GeGLU: 3 d_model d_ff parameters, three matmuls, GELU-gated", "[models][geglu]") {
  models::TransformerConfig c;
  c.layers = 2;
  c.d_model = 384;
  c.d_ff = 1536;
  c.heads = 6;
  c.head_dim = 64;
  c.seq_len = 32;
  c.vocab = 256;
  c.mlp = "geglu";
  const std::uint64_t B = 2;
  const auto m = models::build_transformer(c, B);
  const auto& l = layer(m, "block1");
  const double D = 384, F = 1536, BT = 64;
  double mlp_params = 0;
  for (const auto& p : l.params)
    if (p.name.rfind("block1.mlp.", 0) == 0) mlp_params += double(p.elements());
  CHECK(mlp_params == 3 * D * F);
  for (const char* op : {"block1.mlp.up", "block1.mlp.gate"}) CHECK(matmul(l, op).flops() == 2 * BT * D * F);
  CHECK(matmul(l, "block1.mlp.down").flops() == 2 * BT * F * D);
  // The activation is GELU(gate) * up on BT x F elements: GELU's 8 FLOPs
  // (ELECTRA's count) and one multiply.
  bool found = false;
  for (const auto& e : l.elementwise_fwd)
    if (e.name == "block1.mlp.geglu") {
      found = true;
      CHECK(e.op == models::ElementwiseOp::geglu);
      CHECK(e.flops() == BT * F * 9);
    }
  CHECK(found);
  // The same stash as SwiGLU: gate, up and activation outputs, F each per token.
  c.mlp = "swiglu";
  CHECK(layer(models::build_transformer(c, B), "block1").activation_bytes() == l.activation_bytes());
}

}  // namespace test_geglu
