#include "plan/candidates.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <set>

namespace plan {

namespace {

// The parallelisms a candidate may use.
std::vector<Axis> usable_axes(const PlanSpec& spec, bool moe) {
  std::vector<Axis> axes = spec.axes;
  if (axes.empty())
    for (std::size_t i = 0; i < kAxes; ++i) axes.push_back(static_cast<Axis>(i));
  if (!moe) axes.erase(std::remove(axes.begin(), axes.end(), Axis::expert), axes.end());
  return axes;
}

// Every split of `dims` (the physical axes of more than one chip) into
// runs of consecutive axes, as the product of each run.
std::vector<std::vector<std::uint32_t>> compositions(const std::vector<std::uint32_t>& dims) {
  std::vector<std::vector<std::uint32_t>> out;
  if (dims.empty()) return {{}};
  const std::size_t cuts = dims.size() - 1;
  for (std::uint32_t mask = 0; mask < (1u << cuts); ++mask) {
    std::vector<std::uint32_t> runs{dims[0]};
    for (std::size_t i = 1; i < dims.size(); ++i) {
      if (mask & (1u << (i - 1)))
        runs.push_back(dims[i]);
      else
        runs.back() *= dims[i];
    }
    out.push_back(runs);
  }
  return out;
}

// Each injective assignment of `axes` to the runs, appended to `out`.
void assign(const std::vector<std::uint32_t>& runs, const std::vector<Axis>& axes, std::vector<MeshPart>& mesh,
            std::vector<std::vector<MeshPart>>& out) {
  if (mesh.size() == runs.size()) {
    out.push_back(mesh);
    return;
  }
  for (Axis a : axes) {
    if (std::any_of(mesh.begin(), mesh.end(), [&](const MeshPart& m) { return m.axis == a; })) continue;
    mesh.push_back({a, runs[mesh.size()]});
    assign(runs, axes, mesh, out);
    mesh.pop_back();
  }
}

bool keeps_fixed(const PlanSpec& spec, const Family& f) {
  for (const auto& [axis, degree] : spec.fixed)
    if (f.degree(axis) != degree) return false;
  return true;
}

// The batch splits evenly: replicas (data x fsdp x expert, times the
// slices) and microbatches.
bool batch_splits(const PlanSpec& spec, const Family& f, std::uint32_t m) {
  return spec.batch() % (f.replicas() * m) == 0;
}

// The parallelisms a family may take across the slices: data or fsdp (both
// split the batch; MaxText's dcn_data_parallelism and dcn_fsdp_parallelism),
// those of `axes`; one (data, unused) with a single slice.
std::vector<Axis> dcn_choices(const PlanSpec& spec, const std::vector<Axis>& axes) {
  if (spec.slices <= 1) return {Axis::data};
  std::vector<Axis> out;
  for (Axis a : {Axis::data, Axis::fsdp})
    if (std::find(axes.begin(), axes.end(), a) != axes.end()) out.push_back(a);
  return out;
}

}  // namespace

std::uint32_t Family::degree(Axis a) const {
  for (const MeshPart& m : mesh)
    if (m.axis == a) return m.degree;
  return 1;
}

std::uint64_t Family::replicas() const {
  return std::uint64_t(degree(Axis::data)) * degree(Axis::fsdp) * degree(Axis::expert) * slices;
}

std::string Family::label() const {
  std::string s;
  for (const MeshPart& m : mesh)
    s += (s.empty() ? "" : " x ") + std::string(to_string(m.axis)) + " " + std::to_string(m.degree);
  if (slices > 1) return (s.empty() ? "" : s + " x ") + "dcn " + to_string(dcn) + " " + std::to_string(slices);
  return s.empty() ? "data 1" : s;
}

std::vector<std::string> remat_choices(const PlanSpec& spec) {
  if (!spec.remat.empty()) return spec.remat;
  if (spec.is_maxtext()) return {"full", "minimal", "minimal_offloaded"};
  return {"none", "minimal", "full", "offload"};
}

CandidateSet enumerate_candidates(const PlanSpec& spec, const std::vector<std::uint32_t>& shape, bool alike, bool moe,
                                  bool placement) {
  std::vector<std::uint32_t> dims;
  for (std::uint32_t d : shape)
    if (d > 1) dims.push_back(d);
  const std::vector<Axis> axes = usable_axes(spec, moe);
  // On a slice whose axes are alike (2x2x2, 16x16), meshes that differ
  // only in which axis a parallelism takes are the same machine: keep one.
  if (std::adjacent_find(dims.begin(), dims.end(), std::not_equal_to<>()) == dims.end() && alike) placement = false;
  std::vector<std::vector<MeshPart>> meshes;
  for (const auto& runs : compositions(dims)) {
    if (runs.size() > axes.size()) continue;
    std::vector<MeshPart> mesh;
    assign(runs, axes, mesh, meshes);
  }
  CandidateSet set;
  std::set<std::vector<std::uint32_t>> degrees_seen;
  const std::vector<std::string> remats = remat_choices(spec);
  const std::vector<std::uint32_t> micro =
      spec.microbatches.empty() ? std::vector<std::uint32_t>{1, 2, 4, 8} : spec.microbatches;
  for (const auto& mesh : meshes)
    for (Axis dcn : dcn_choices(spec, axes)) {
      Family f{"", mesh, dcn, spec.slices};
      if (!keeps_fixed(spec, f)) continue;
      std::vector<std::uint32_t> degrees{static_cast<std::uint32_t>(dcn)};
      for (std::size_t i = 0; i < kAxes; ++i) degrees.push_back(f.degree(static_cast<Axis>(i)));
      if (!placement && !degrees_seen.insert(degrees).second) continue;
      char id[16];
      std::snprintf(id, sizeof id, "f%03zu", set.families.size());
      f.id = id;
      const std::uint32_t stages = f.degree(Axis::pipeline);
      bool any = false;
      for (const std::string& r : remats) {
        for (std::uint32_t m0 : micro) {
          const std::uint32_t m = m0 * stages;
          if (!batch_splits(spec, f, m)) continue;
          char cid[16];
          std::snprintf(cid, sizeof cid, "c%04zu", set.candidates.size());
          set.candidates.push_back({cid, set.families.size(), r, m});
          any = true;
        }
      }
      if (any) set.families.push_back(std::move(f));
    }
  return set;
}

}  // namespace plan
