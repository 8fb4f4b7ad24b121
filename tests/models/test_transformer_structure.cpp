// The Transformer's ops as a strategy will consume them: exact shapes of a
// tiny model worked out by hand, a consistent dependency graph, and the
// tensor-parallel marks giving Megatron's communication pattern.
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "model_lookup.h"
#include "models/transformer.h"
#include "transformer_shapes.h"

namespace test_transformer_structure {

using model_lookup::layer;
using model_lookup::matmul;
using models::Dim;
using models::Pass;

namespace {

// L=1, D=4, F=8, N=2 heads of H=3 (N H = 6 != D), T=5, V=7, batch 2.
models::TransformerConfig tiny() {
  models::TransformerConfig c;
  c.layers = 1;
  c.d_model = 4;
  c.d_ff = 8;
  c.heads = 2;
  c.head_dim = 3;
  c.seq_len = 5;
  c.vocab = 7;
  return c;
}

struct Shape {
  const char* name;
  std::uint64_t count, m, k, n;
};

}  // namespace

TEST_CASE("Tiny Transformer: matmul shapes by hand", "[models][transformer][shapes]") {
  const auto m = models::build_transformer(tiny(), 2);
  REQUIRE(m.layers.size() == 4);
  CHECK(m.layers[0].name == "embedding");
  CHECK(m.layers[1].name == "block0");
  CHECK(m.layers[2].name == "output");
  CHECK(m.layers[3].name == "loss");
  // Tokens B T = 10; attention is batched over B N = 4 (sequence, head) pairs.
  const Shape forward[] = {
      {"block0.attn.q", 1, 10, 4, 6},  // LN1(x)[10x4] W_q[4x6]
      {"block0.attn.k", 1, 10, 4, 6},      {"block0.attn.v", 1, 10, 4, 6},
      {"block0.attn.score", 4, 5, 3, 5},    // Q[5x3] K^T[3x5]
      {"block0.attn.context", 4, 5, 5, 3},  // P[5x5] V[5x3]
      {"block0.attn.o", 1, 10, 6, 4},       // context[10x6] W_o[6x4]
      {"block0.mlp.up", 1, 10, 4, 8},      {"block0.mlp.down", 1, 10, 8, 4},
  };
  const auto& b = layer(m, "block0");
  REQUIRE(b.forward.size() == 8);
  for (std::size_t i = 0; i < 8; ++i) {
    INFO(forward[i].name);
    CHECK(b.forward[i].name == forward[i].name);
    CHECK(b.forward[i].pass == Pass::forward);
    CHECK(b.forward[i].count == forward[i].count);
    CHECK(b.forward[i].m == forward[i].m);
    CHECK(b.forward[i].k == forward[i].k);
    CHECK(b.forward[i].n == forward[i].n);
  }
  const Shape backward[] = {
      {"block0.attn.score.dQ", 4, 5, 5, 3},    // dS[5x5] K[5x3]
      {"block0.attn.score.dK", 4, 5, 5, 3},    // dS^T[5x5] Q[5x3]
      {"block0.attn.context.dP", 4, 5, 3, 5},  // dO[5x3] V^T[3x5]
      {"block0.attn.context.dV", 4, 5, 5, 3},  // P^T[5x5] dO[5x3]
      {"block0.attn.q.dX", 1, 10, 6, 4},       // dQ[10x6] W_q^T[6x4]
      {"block0.attn.q.dW", 1, 4, 10, 6},       // LN1(x)^T[4x10] dQ[10x6]
      {"block0.mlp.down.dX", 1, 10, 4, 8},    {"block0.mlp.down.dW", 1, 8, 10, 4},
  };
  for (const auto& s : backward) {
    const auto& mm = matmul(b, s.name);
    INFO(s.name);
    CHECK(mm.pass != Pass::forward);
    CHECK(mm.count == s.count);
    CHECK(mm.m == s.m);
    CHECK(mm.k == s.k);
    CHECK(mm.n == s.n);
  }
  CHECK(b.backward.size() == 16);  // 6 linear layers x (dX, dW) + 4 attention
  CHECK(matmul(b, "block0.attn.q.dW").pass == Pass::backward_weight);
  CHECK(matmul(b, "block0.attn.score.dQ").pass == Pass::backward_data);
  const auto& logits = matmul(layer(m, "output"), "output.logits");
  CHECK(logits.m == 10);
  CHECK(logits.k == 4);
  CHECK(logits.n == 7);

  // Parameters: LN 4 x 4, Q/K/V/O 4 x 24, MLP 2 x 32; embedding and
  // unembedding 28 each, final LN 8.
  CHECK(b.param_count() == 16 + 96 + 64);
  CHECK(m.param_count() == 176 + 28 + 28 + 8);
  // Elementwise: softmax over B N T T = 100 probabilities, GELU on B T F = 80.
  std::map<std::string, std::uint64_t> elements;
  for (const auto& e : b.elementwise_fwd) elements[e.name] = e.elements;
  CHECK(elements["block0.attn.softmax"] == 100);
  CHECK(elements["block0.mlp.gelu"] == 80);
  CHECK(elements["block0.ln1"] == 40);
  CHECK(elements["block0.mlp.residual"] == 40);
  CHECK(layer(m, "loss").elementwise_fwd.at(0).elements == 70);
}

TEST_CASE("Op names are unique and every dependency is an earlier op of the same pass",
          "[models][transformer][graph]") {
  for (const std::string mlp : {"gelu", "swiglu"}) {
    auto cfg = tiny();
    cfg.layers = 3;
    cfg.mlp = mlp;
    cfg.tied_embeddings = mlp == "swiglu";
    const auto m = models::build_transformer(cfg, 2);
    std::set<std::string> all;
    for (const auto& l : m.layers) {
      INFO(l.name << " " << mlp);
      // Kahn's algorithm over each pass: the ops form a DAG and every `after`
      // names an op of the same layer and pass direction.
      for (bool forward : {true, false}) {
        std::map<std::string, std::vector<std::string>> deps;
        for (const auto& op : forward ? l.forward : l.backward) deps[op.name] = op.after;
        for (const auto& op : forward ? l.elementwise_fwd : l.elementwise_bwd) deps[op.name] = op.after;
        for (const auto& [name, after] : deps) {
          CHECK(all.insert(name).second);
          for (const auto& a : after) {
            INFO(name << " after " << a);
            CHECK(deps.count(a) == 1);
          }
        }
        std::set<std::string> done;
        bool progress = true;
        while (progress) {
          progress = false;
          for (const auto& [name, after] : deps) {
            if (done.count(name)) continue;
            bool ready = true;
            for (const auto& a : after) ready = ready && done.count(a);
            if (ready) {
              done.insert(name);
              progress = true;
            }
          }
        }
        CHECK(done.size() == deps.size());
      }
      for (const auto& op : l.forward) CHECK(op.pass == Pass::forward);
      for (const auto& op : l.backward) CHECK(op.pass != Pass::forward);
      // Every weight a matmul uses exists, and its dW writes its gradient.
      for (const auto* list : {&l.forward, &l.backward})
        for (const auto& op : *list) {
          if (op.kind != models::MatmulKind::linear) continue;
          INFO(op.name);
          CHECK(m.owner_of(op.weight) != nullptr);
          if (op.pass == Pass::backward_weight) CHECK(op.output == op.weight + ".grad");
        }
    }
  }
}

TEST_CASE("Tensor-parallel marks give Megatron's 2 all-reduces forward and 2 backward per block",
          "[models][transformer][tp]") {
  // Shoeybi et al. 2019 (arXiv:1909.08053), section 3 and Figure 4: with
  // column-parallel Q/K/V and up (and gate) and row-parallel O and down, a
  // block needs two all-reduces in the forward pass (after O and down) and
  // two in the backward pass (of the inputs' gradients of Q/K/V and of
  // up/gate). An all-reduce is needed for each distinct tensor written by
  // matmuls whose contraction (k) is split.
  for (const std::string mlp : {"gelu", "swiglu"}) {
    auto cfg = tiny();
    cfg.mlp = mlp;
    const auto model = models::build_transformer(cfg, 2);
    const auto& b = layer(model, "block0");
    std::set<std::string> fwd, bwd;
    for (const auto& op : b.forward)
      if (op.tp_split == Dim::k) fwd.insert(op.output);
    for (const auto& op : b.backward)
      if (op.tp_split == Dim::k) bwd.insert(op.output);
    INFO(mlp);
    CHECK(fwd == std::set<std::string>{"block0.attn.out", "block0.mlp.down.out"});
    CHECK(bwd == std::set<std::string>{"block0.ln1.out.grad", "block0.ln2.out.grad"});
    // Every other matmul splits a non-contracted dimension: no communication.
    for (const auto* list : {&b.forward, &b.backward})
      for (const auto& op : *list) {
        INFO(op.name);
        CHECK(op.tp_split != Dim::none);
        if (op.kind != models::MatmulKind::linear) CHECK(op.tp_split == Dim::count);  // by heads
      }
  }
  // Parameter splits follow: column weights by cols, row weights by rows,
  // LayerNorm replicated, the embedding table by vocabulary rows.
  const auto m = models::build_transformer(tiny(), 1);
  for (const auto& l : m.layers)
    for (const auto& p : l.params) {
      INFO(p.name);
      const bool norm = p.name.find(".scale") != std::string::npos || p.name.find(".bias") != std::string::npos;
      if (norm) CHECK(p.tp_split == models::ParamSplit::replicated);
      if (p.name.find("w_o") != std::string::npos || p.name.find("w_down") != std::string::npos ||
          p.name == "embedding.table")
        CHECK(p.tp_split == models::ParamSplit::rows);
      if (p.name.find("w_q") != std::string::npos || p.name.find("w_up") != std::string::npos ||
          p.name == "output.unembedding")
        CHECK(p.tp_split == models::ParamSplit::cols);
    }
}

TEST_CASE("Pipeline boundaries carry B T D activations forward and back", "[models][transformer][pipeline]") {
  const auto m = models::build_transformer(tiny(), 2);
  CHECK(layer(m, "embedding").output_bytes == 2 * 10 * 4);
  CHECK(layer(m, "embedding").input_grad_bytes == 0);
  CHECK(layer(m, "block0").output_bytes == 2 * 10 * 4);
  CHECK(layer(m, "block0").input_grad_bytes == 2 * 10 * 4);
  CHECK(layer(m, "output").output_bytes == 2 * 10 * 7);  // logits
  CHECK(layer(m, "loss").input_grad_bytes == 2 * 10 * 7);
}

TEST_CASE("Transformer rejects zero sizes and unknown MLP variants", "[models][transformer]") {
  auto c = tiny();
  CHECK_THROWS_AS(models::build_transformer(c, 0), std::invalid_argument);
  c.heads = 0;
  CHECK_THROWS_AS(models::build_transformer(c, 1), std::invalid_argument);
  c = tiny();
  c.mlp = "silu";
  CHECK_THROWS_AS(models::build_transformer(c, 1), std::invalid_argument);
  c = tiny();
  c.kv_heads = c.heads + 1;  // does not divide the query heads
  CHECK_THROWS_AS(models::build_transformer(c, 1), std::invalid_argument);
  c = tiny();
  c.attention = "sparse";
  CHECK_THROWS_AS(models::build_transformer(c, 1), std::invalid_argument);
  c = tiny();
  c.seq_len = 1ull << 40;  // B N T^2 overflows 64 bits
  CHECK_THROWS_AS(models::build_transformer(c, 1), std::overflow_error);
}

}  // namespace test_transformer_structure
