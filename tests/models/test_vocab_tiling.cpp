// Vocabulary tiling (MaxText's num_vocab_tiling, docs/explanations/tiling.md
// in AI-Hypercomputer/maxtext): the logits and their gradient in k chunks
// of the tokens. Hand counts: the loss layer holds one chunk of the B T x V
// logits, so its stash is the untiled one's divided by k (the labels
// stay); the model's matmul FLOPs do not change; the backward recomputes
// each chunk's logits, 2 B T D V executed FLOPs.
#include <catch2/catch.hpp>

#include "model_lookup.h"
#include "models/transformer.h"

namespace test_vocab_tiling {

using model_lookup::layer;
using model_lookup::matmul;

TEST_CASE("Vocabulary tiling divides the logits' stash by the tiles, model FLOPs unchanged", "[models][vocab_tiling]") {
  models::TransformerConfig c;
  c.layers = 1;
  c.d_model = 256;
  c.d_ff = 1024;
  c.heads = 4;
  c.head_dim = 64;
  c.seq_len = 512;
  c.vocab = 32768;
  const std::uint64_t B = 2;
  const double BT = 1024, D = 256, V = 32768;
  const auto whole = models::build_transformer(c, B);
  c.vocab_tiles = 16;
  const auto tiled = models::build_transformer(c, B);

  const double labels = 4 * BT;  // int32
  CHECK(double(layer(whole, "loss").activation_bytes()) == 2 * BT * V + labels);
  CHECK(double(layer(tiled, "loss").activation_bytes()) == 2 * BT * V / 16 + labels);

  CHECK(tiled.matmul_flops_per_step() == whole.matmul_flops_per_step());
  CHECK(layer(whole, "output").extra_matmul_flops() == 0);
  CHECK(layer(tiled, "output").extra_matmul_flops() == 2 * BT * D * V);
  CHECK(matmul(layer(tiled, "output"), "output.logits.recompute").recompute);
}

}  // namespace test_vocab_tiling
