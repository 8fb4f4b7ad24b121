#pragma once
// The combined outputs of a sweep (docs/interface.md#sweep-outputs):
// sweep.csv, one row a point, and summary.json with each point's speedup
// against the baseline (the smallest chip count that ran), the parallel
// efficiency, and the Amdahl (strong) or Gustafson (weak) fit.
//
// Both are functions of the points' results alone, never of wall-clock time
// or of how points were spread over workers and ranks, so -j 1, -j N, MPI
// and a resumed run write the same bytes. Wall-clock facts go in the
// summary's separate `execution` section.
#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "sweep/points.h"
#include "sweep/record.h"
#include "sweep/spec.h"

namespace sweep {

inline constexpr const char* kSweepSchema = "tpusim.sweep/1";

struct SweepOutputs {
  std::string csv;
  nlohmann::json summary;  // without `execution`
};

// A CSV field: quoted (RFC 4180) when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& s);

// `finished` maps point id -> record; points without one are "not_run".
SweepOutputs summarize_sweep(const SweepSpec& spec, const std::vector<SweepPoint>& points,
                             const std::map<std::string, PointRecord>& finished);

// DIR/sweep.csv and DIR/summary.json (with `execution` added), atomically.
void write_sweep_outputs(const std::string& out_dir, const SweepOutputs& outputs, const nlohmann::json& execution);

}  // namespace sweep
