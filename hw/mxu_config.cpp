#include "hw/mxu_config.h"

#include <string>

#include "sim/error.h"
#include "sim/params.h"
#include "sim/units.h"

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

using sim::ceil_div;

}  // namespace

const sim::EnumNames<Fidelity>& fidelity_names() {
  static const sim::EnumNames<Fidelity> names(
      "fidelity", {{Fidelity::kernel, "kernel",
                    "a whole kernel is one op: a flow on the chip's HBM capped by its "
                    "engine time"},
                   {Fidelity::tile, "tile", "every block's DMA and MXU ops, each MXU op in closed form"},
                   {Fidelity::pe, "pe", "every processing element every cycle"}});
  return names;
}

const char* to_string(Fidelity f) { return fidelity_names().name(f); }

const sim::EnumNames<MxuSchedule>& mxu_schedule_names() {
  static const sim::EnumNames<MxuSchedule> names(
      "MXU schedule",
      {{MxuSchedule::overlapped, "overlapped", "the next tile's weights load while the current tile streams"},
       {MxuSchedule::fold_serial, "fold_serial",
        "a tile starts once the previous one has left the array (SCALE-Sim's stall-free cycles)"}});
  return names;
}

const char* to_string(MxuSchedule s) { return mxu_schedule_names().name(s); }

const sim::EnumNames<MxuDataflow>& mxu_dataflow_names() {
  static const sim::EnumNames<MxuDataflow> names(
      "MXU dataflow", {{MxuDataflow::ws, "ws", "weight-stationary: weight tiles stay, activations stream"},
                       {MxuDataflow::os, "os", "output-stationary: output tiles accumulate in place"},
                       {MxuDataflow::is, "is", "input-stationary: activation tiles stay, weights stream"}});
  return names;
}

const char* to_string(MxuDataflow d) { return mxu_dataflow_names().name(d); }

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
  t.m_tiles = ceil_div(shape.m, config.rows);
  t.last_m_rows = shape.m - (t.m_tiles - 1) * config.rows;
  return t;
}

}  // namespace hw
