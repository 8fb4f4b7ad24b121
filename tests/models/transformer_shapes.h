#pragma once
// Transformer shapes used by several tests.
#include "models/transformer.h"

namespace transformer_shapes {

// GPT-3 6.7B (Brown et al. 2020, Table 2.1): 32 layers, d_model 4096,
// 32 heads of 128, context 2048, GPT-2 vocabulary, d_ff = 4 d_model, tied
// embeddings as in GPT-2.
inline models::TransformerConfig gpt3_6p7b() {
  models::TransformerConfig c;
  c.layers = 32;
  c.d_model = 4096;
  c.d_ff = 4 * 4096;
  c.heads = 32;
  c.head_dim = 128;
  c.seq_len = 2048;
  c.vocab = 50257;
  c.tied_embeddings = true;
  return c;
}

// A 1.3B model with GPT-3 XL's depth and width (24 x 2048, d_ff 8192) and
// 16 heads of 128 so that heads x head_dim = d_model.
inline models::TransformerConfig gpt_1p3b() {
  models::TransformerConfig c;
  c.layers = 24;
  c.d_model = 2048;
  c.d_ff = 8192;
  c.heads = 16;
  c.head_dim = 128;
  c.seq_len = 2048;
  c.vocab = 50257;
  c.tied_embeddings = true;
  return c;
}

}  // namespace transformer_shapes
