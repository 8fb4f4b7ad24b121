#pragma once
// MaxText's mesh: twelve named axes, each ici_<axis>_parallelism chips inside
// a slice times dcn_<axis>_parallelism slices (docs/maxtext.md, "Mesh").
#include <cstdint>
#include <string>
#include <vector>

#include "workloads/maxtext/spec.h"

namespace workloads {

// The axes in MaxText's order.
const std::vector<MaxTextAxis>& all_maxtext_axes();
// "ici_fsdp_parallelism", "dcn_data_parallelism"; the stage axis's keys
// are ici_pipeline_parallelism and dcn_pipeline_parallelism.
std::string parallelism_key(MaxTextAxis a, bool ici);

// MaxText's fill rule (max_utils.py fill_unspecified_mesh_axes at 50bafeb):
// at most one value of `values` may be -1; it becomes target / (product of
// the others), which must be at least 1, and then the product must equal
// `target`. `what` is "ICI" or "DCN". Returns the index of the filled value
// (or -1). On failure throws sim::ConfigError (no location; the caller
// locates it) with MaxText's reason, e.g. "the ICI parallelism multiplies to
// 96, not the 256 chips of a slice".
int fill_parallelism(std::int64_t* values, std::size_t n, std::uint64_t target, const std::string& what);

// Fills mesh.ici against chips / slices chips per slice and mesh.dcn against
// slices, as maxtext_utils.py create_device_mesh does: with one slice the
// DCN values are not used (each must be 1 or -1; pyconfig.py
// validate_multiple_slices refuses DCN parallelism on one slice). The key
// path of an error is the offending key ("ici_fsdp_parallelism").
void fill_mesh(MaxTextMesh& mesh, std::uint32_t chips, std::uint32_t slices);

}  // namespace workloads
