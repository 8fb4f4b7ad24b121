#include "hw/mxu_config.h"

#include <string>

#include "sim/error.h"

namespace hw {

namespace {

// Smallest array with a neighbour in both directions; largest MXU built so
// far is 256 x 256 (docs/reference/tpu-specs.md#common.mxu_size_v6e).
constexpr std::uint32_t kMinDim = 2;
constexpr std::uint32_t kMaxDim = 256;

void check_dim(const char* key, std::uint32_t v) {
  if (v < kMinDim || v > kMaxDim) {
    throw sim::ConfigError({}, key, "must be in [2, 256], got " + std::to_string(v));
  }
}

void check_extent(const char* key, std::uint64_t v) {
  if (v == 0) throw sim::ConfigError({}, key, "must be at least 1");
}

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0); }

}  // namespace

void validate(const MxuConfig& config) {
  check_dim("mxu.rows", config.rows);
  check_dim("mxu.cols", config.cols);
}

void validate(const MxuShape& shape) {
  check_extent("mxu.m", shape.m);
  check_extent("mxu.k", shape.k);
  check_extent("mxu.n", shape.n);
}

MxuTiling mxu_tiling(const MxuConfig& config, const MxuShape& shape) {
  validate(config);
  validate(shape);
  MxuTiling t;
  t.k_tiles = ceil_div(shape.k, config.rows);
  t.n_tiles = ceil_div(shape.n, config.cols);
  t.last_n_cols = shape.n - (t.n_tiles - 1) * config.cols;
  return t;
}

}  // namespace hw
