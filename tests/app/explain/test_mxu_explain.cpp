// explain mxu's numbers against their definitions: cycles from the
// closed form, MACs and utilization, and the PE engine checked exactly.
#include <catch2/catch.hpp>

#include "app/explain/mxu_explain.h"
#include "hw/mxu_timing.h"

namespace test_mxu_explain {

TEST_CASE("mxu explain: cycles, utilization and an exact pe check", "[mxu]") {
  explain::MxuExplainRequest req;
  req.config = {128, 128, true};
  req.shape = {128, 128, 128};
  const explain::MxuExplainResult tile = explain::mxu_explain(req);
  CHECK(tile.cycles == 510);  // worked out in test_mxu_timing.cpp
  CHECK(tile.macs == 128u * 128u * 128u);
  CHECK(tile.utilization == Approx(128.0 / 510.0));
  CHECK_FALSE(tile.checked);

  req.config = {8, 8, false};
  req.shape = {20, 30, 17};
  req.fidelity = hw::Fidelity::pe;
  req.seed = 5;
  const explain::MxuExplainResult pe = explain::mxu_explain(req);
  CHECK(pe.checked);
  CHECK(pe.matches_reference);
  CHECK(pe.cycles == hw::mxu_tile_cycles(req.config, req.shape));
  CHECK(pe.utilization == Approx(20.0 * 30 * 17 / (64.0 * pe.cycles)));
  CHECK(pe.wall_time_s >= 0.0);
}

TEST_CASE("mxu explain: output- and input-stationary, tile and pe", "[mxu]") {
  explain::MxuExplainRequest req;
  req.config = {2, 2, true};
  req.config.dataflow = hw::MxuDataflow::os;
  req.shape = {2, 2, 2};
  CHECK(explain::mxu_explain(req).cycles == 4);  // worked out in test_mxu_timing.cpp
  req.config = {8, 8, true};
  req.shape = {20, 30, 17};
  req.fidelity = hw::Fidelity::pe;
  req.seed = 5;
  for (hw::MxuDataflow dataflow : {hw::MxuDataflow::os, hw::MxuDataflow::is}) {
    req.config.dataflow = dataflow;
    const explain::MxuExplainResult pe = explain::mxu_explain(req);
    CHECK(pe.matches_reference);
    CHECK(pe.cycles == hw::mxu_tile_cycles(req.config, req.shape));
  }
}

}  // namespace test_mxu_explain
