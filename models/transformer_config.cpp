#include "models/transformer_config.h"

#include <algorithm>

namespace models {

bool TransformerConfig::moe_layer(std::uint64_t i) const {
  return moe() && i >= first_dense_layers && moe_layer_step > 0 && (i + 1) % moe_layer_step == 0;
}

bool TransformerConfig::local_layer(std::uint64_t i) const {
  return sliding_window > 0 && (sliding_window_pattern == 0 || (i + 1) % sliding_window_pattern != 0);
}

std::uint64_t TransformerConfig::moe_layers() const {
  std::uint64_t n = 0;
  for (std::uint64_t i = 0; i < layers; ++i) n += moe_layer(i) ? 1 : 0;
  return n;
}

std::uint64_t TransformerConfig::attended(std::uint64_t i, std::uint64_t context) const {
  return local_layer(i) ? std::min(context, sliding_window) : context;
}

std::uint64_t TransformerConfig::kv_cache_elements(std::uint64_t context) const {
  std::uint64_t tokens = 0;
  for (std::uint64_t i = 0; i < layers; ++i) tokens += attended(i, context);
  return tokens * kv_width();
}

}  // namespace models
