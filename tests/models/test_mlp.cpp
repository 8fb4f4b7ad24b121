// The MLP against a case small enough to work out by hand: widths [4, 8, 2],
// batch 3. Every number below is written out from Y = X W + b with
// X[3 x 4], W0[4 x 8], W1[8 x 2], not taken from the implementation.
#include <catch2/catch.hpp>

#include "model_lookup.h"
#include "models/mlp.h"

namespace test_mlp {

using model_lookup::layer;
using model_lookup::matmul;
using models::Dim;
using models::Pass;

namespace {

void check_shape(const models::MatmulSpec& s, std::uint64_t m, std::uint64_t k, std::uint64_t n) {
  INFO(s.name);
  CHECK(s.count == 1);
  CHECK(s.m == m);
  CHECK(s.k == k);
  CHECK(s.n == n);
}

}  // namespace

TEST_CASE("MLP [4, 8, 2], batch 3: matmul shapes by hand", "[models][mlp]") {
  const auto m = models::build_mlp({{4, 8, 2}, "relu"}, 3);
  REQUIRE(m.layers.size() == 3);
  CHECK(m.layers[0].name == "dense0");
  CHECK(m.layers[1].name == "dense1");
  CHECK(m.layers[2].name == "loss");

  const auto& d0 = layer(m, "dense0");
  REQUIRE(d0.forward.size() == 1);
  check_shape(d0.forward[0], 3, 4, 8);  // X[3x4] W0[4x8]
  CHECK(d0.forward[0].weight == "dense0.w");
  CHECK(d0.forward[0].weight_operand == models::Operand::b);
  // The input is data: only dW0 = X^T[4x3] dY[3x8].
  REQUIRE(d0.backward.size() == 1);
  check_shape(d0.backward[0], 4, 3, 8);
  CHECK(d0.backward[0].pass == Pass::backward_weight);
  CHECK(d0.backward[0].weight_operand == models::Operand::none);

  const auto& d1 = layer(m, "dense1");
  check_shape(matmul(d1, "dense1.matmul"), 3, 8, 2);     // H[3x8] W1[8x2]
  check_shape(matmul(d1, "dense1.matmul.dX"), 3, 2, 8);  // dY[3x2] W1^T[2x8]
  check_shape(matmul(d1, "dense1.matmul.dW"), 8, 3, 2);  // H^T[8x3] dY[3x2]
  CHECK(matmul(d1, "dense1.matmul.dX").pass == Pass::backward_data);
  CHECK(layer(m, "loss").forward.empty());
}

TEST_CASE("MLP [4, 8, 2], batch 3: parameters, FLOPs, stash by hand", "[models][mlp]") {
  const auto m = models::build_mlp({{4, 8, 2}, "relu"}, 3);
  // 4*8 + 8 biases, 8*2 + 2 biases
  CHECK(layer(m, "dense0").param_count() == 40);
  CHECK(layer(m, "dense1").param_count() == 18);
  CHECK(m.param_count() == 58);
  CHECK(m.param_bytes() == 116);

  // forward 2*3*4*8 + 2*3*8*2 = 192 + 96; backward dW0 192, dX1 96, dW1 96
  double fwd = 0, bwd = 0;
  for (const auto& l : m.layers) {
    fwd += l.forward_matmul_flops();
    bwd += l.backward_matmul_flops();
  }
  CHECK(fwd == 288);
  CHECK(bwd == 384);
  CHECK(m.matmul_flops_per_step() == 672);
  CHECK(m.tokens() == 3);
  CHECK(m.model_flops_per_token() == 224);

  // Elementwise work by element count: bias adds on 3x8 and 3x2 outputs,
  // ReLU on the 3x8 hidden layer only, cross-entropy on the 3x2 logits.
  const auto& d0 = layer(m, "dense0");
  REQUIRE(d0.elementwise_fwd.size() == 2);
  CHECK(d0.elementwise_fwd[0].op == models::ElementwiseOp::bias_add);
  CHECK(d0.elementwise_fwd[0].elements == 24);
  CHECK(d0.elementwise_fwd[1].op == models::ElementwiseOp::relu);
  CHECK(d0.elementwise_fwd[1].elements == 24);
  CHECK(layer(m, "dense1").elementwise_fwd.size() == 1);  // no activation after the last layer
  CHECK(layer(m, "loss").elementwise_fwd.at(0).elements == 6);
  // Forward softmax cross-entropy costs ELECTRA's SOFTMAX_FLOPS = 5 per logit.
  CHECK(layer(m, "loss").forward_elementwise_flops() == 30);

  // Stashed: X (3x4) and H (3x8) in BF16 for the dWs; ReLU reads the sign of
  // H, so nothing more; the loss keeps 3x2 probabilities (BF16) and 3 int32
  // labels. 24 + 48 + 12 + 12 bytes.
  CHECK(layer(m, "dense0").activation_bytes() == 24);
  CHECK(layer(m, "dense1").activation_bytes() == 48);
  CHECK(layer(m, "loss").activation_bytes() == 24);
  CHECK(m.activation_bytes() == 96);

  // Pipeline boundaries: dense0 sends H (3x8 BF16) forward, dense1 sends dH back.
  CHECK(layer(m, "dense0").output_bytes == 48);
  CHECK(layer(m, "dense0").input_grad_bytes == 0);
  CHECK(layer(m, "dense1").input_grad_bytes == 48);
}

TEST_CASE("MLP with GELU stashes the GELU input too", "[models][mlp]") {
  const auto relu = models::build_mlp({{4, 8, 2}, "relu"}, 3);
  const auto gelu = models::build_mlp({{4, 8, 2}, "gelu"}, 3);
  CHECK(gelu.activation_bytes() - relu.activation_bytes() == 3 * 8 * 2);
  // ELECTRA's ACTIVATION_FLOPS = 8 per element for the tanh GELU.
  CHECK(layer(gelu, "dense0").elementwise_fwd.at(1).flops() == 24 * 8);
}

TEST_CASE("MLP backward matmuls are 2x forward except the first layer's (no dX)", "[models][mlp]") {
  const auto m = models::build_mlp({{784, 1024, 1024, 512, 10}, "gelu"}, 64);
  for (const auto& l : m.layers) {
    if (l.forward.empty()) continue;
    INFO(l.name);
    const double ratio = l.name == "dense0" ? 1.0 : 2.0;
    CHECK(l.backward_matmul_flops() == ratio * l.forward_matmul_flops());
  }
  // 2 * batch * sum of W sizes forward; backward 2x less the first dX.
  const double w = 784.0 * 1024 + 1024.0 * 1024 + 1024.0 * 512 + 512.0 * 10;
  CHECK(m.matmul_flops_per_step() == 6 * 64 * w - 2 * 64 * 784.0 * 1024);
}

TEST_CASE("MLP tensor-parallel roles alternate column, row (Megatron pairing)", "[models][mlp][tp]") {
  const auto m = models::build_mlp({{16, 32, 32, 8}, "relu"}, 4);
  CHECK(matmul(layer(m, "dense0"), "dense0.matmul").tp == models::TpRole::column);
  CHECK(matmul(layer(m, "dense0"), "dense0.matmul").tp_split == Dim::n);
  CHECK(matmul(layer(m, "dense1"), "dense1.matmul").tp == models::TpRole::row);
  CHECK(matmul(layer(m, "dense1"), "dense1.matmul").tp_split == Dim::k);  // partial sums: all-reduce
  CHECK(matmul(layer(m, "dense2"), "dense2.matmul").tp == models::TpRole::column);
}

TEST_CASE("MLP rejects invalid configurations", "[models][mlp]") {
  CHECK_THROWS_AS(models::build_mlp({{4}, "relu"}, 1), std::invalid_argument);
  CHECK_THROWS_AS(models::build_mlp({{4, 0, 2}, "relu"}, 1), std::invalid_argument);
  CHECK_THROWS_AS(models::build_mlp({{4, 2}, "tanh"}, 1), std::invalid_argument);
  CHECK_THROWS_AS(models::build_mlp({{4, 2}, "relu"}, 0), std::invalid_argument);
}

}  // namespace test_mlp
