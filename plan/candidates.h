#pragma once
// The planner's search space (docs/plan.md, "Candidates"): every way to
// lay the parallelisms on the slice's physical axes, each mesh axis taking
// whole consecutive physical axes, and then every split of the chips over
// the parallelisms that needs a factor of a physical axis (16 = 4 x 4), laid
// as JAX's mesh_utils lays it (interconnect::mesh_order) and within
// max_axis_splits cuts; times each remat policy and microbatch count. The
// experiment loader applies interconnect/mesh.h's rule to each candidate. A
// family is one mesh: its candidates differ only in remat and microbatches.
#include <cstdint>
#include <string>
#include <vector>

#include "plan/spec.h"

namespace plan {

struct MeshPart {
  Axis axis;
  std::uint32_t degree;
};

struct Family {
  std::string id;              // f000, f001, ...
  std::vector<MeshPart> mesh;  // in placement order (x first); degree-1 parallelisms left out
  // With several slices, the parallelism across them (data or fsdp, as
  // MaxText's dcn_data_parallelism or dcn_fsdp_parallelism) and their count.
  Axis dcn = Axis::data;
  std::uint32_t slices = 1;
  // A mesh axis takes a factor of a physical axis (a MaxText candidate then
  // runs with allow_split_physical_axes).
  bool split = false;
  std::string label() const;           // "fsdp 16 x tensor 16", "fsdp 256 x dcn data 2", "data 1" for one chip
  std::uint32_t degree(Axis a) const;  // inside a slice (the ici_* degree)
  std::uint64_t replicas() const;      // what splits the batch: data x fsdp x expert, times the slices
};

struct Candidate {
  std::string id;  // c0000, c0001, ...
  std::size_t family = 0;
  std::string remat;
  std::uint32_t microbatches = 1;
};

struct CandidateSet {
  std::vector<Family> families;
  std::vector<Candidate> candidates;
};

// With several slices (spec.slices), each mesh is a family per parallelism
// across them: data or fsdp, whichever `spec.axes` allows. `alike`: the slice's axes all wrap or all do not (axes of
// one size are then interchangeable). `moe`: the model has experts (the expert axis applies). `placement`: false for a
// MaxText model, whose mesh order MaxText's reader chooses, so meshes of the same degrees are one family.
CandidateSet enumerate_candidates(const PlanSpec& spec, const std::vector<std::uint32_t>& shape, bool alike, bool moe,
                                  bool placement);

// The default remat policies of a model kind.
std::vector<std::string> remat_choices(const PlanSpec& spec);

}  // namespace plan
