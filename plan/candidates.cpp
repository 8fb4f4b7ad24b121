#include "plan/candidates.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <set>

#include "interconnect/mesh.h"

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

namespace {

// The parallelisms in the order MaxText lists its mesh axes (data, stage,
// fsdp, context, tensor, expert: configs/maxtext/base.yml's mesh_axes), the
// least communication-heavy first, which interconnect::mesh_order lays on
// the outer factors.
const Axis kMeshOrder[] = {Axis::data, Axis::pipeline, Axis::fsdp, Axis::context, Axis::tensor, Axis::expert};

// Every split of `chips` over `axes` (a degree each, their product the
// chips), the degree-1 parallelisms left out, in kMeshOrder.
void degree_splits(const std::vector<Axis>& axes, std::size_t next, std::uint64_t chips, std::vector<MeshPart>& mesh,
                   std::vector<std::vector<MeshPart>>& out) {
  if (next == axes.size()) {
    if (chips == 1) out.push_back(mesh);
    return;
  }
  for (std::uint64_t d = 1; d <= chips; ++d) {
    if (chips % d != 0) continue;
    if (d > 1) mesh.push_back({axes[next], static_cast<std::uint32_t>(d)});
    degree_splits(axes, next + 1, chips / d, mesh, out);
    if (d > 1) mesh.pop_back();
  }
}

// The meshes over part of a physical axis: each split of the chips that no
// order lays on whole physical axes, in the order JAX's mesh_utils lays it
// (interconnect::mesh_order: the busiest parallelisms on the inner
// factors), where that order cuts physical axes at most `max_cuts` times
// (an axis in k factors is k - 1 cuts).
std::vector<std::vector<MeshPart>> split_meshes(const std::vector<std::uint32_t>& shape, const std::vector<Axis>& axes,
                                                std::uint32_t max_cuts) {
  std::vector<Axis> ordered;
  for (Axis a : kMeshOrder)
    if (std::find(axes.begin(), axes.end(), a) != axes.end()) ordered.push_back(a);
  std::uint64_t chips = 1;
  for (std::uint32_t d : shape) chips *= d;
  std::vector<std::vector<MeshPart>> splits, out;
  std::vector<MeshPart> mesh;
  degree_splits(ordered, 0, chips, mesh, splits);
  const std::vector<int> dims(shape.begin(), shape.end());
  for (const auto& split : splits) {
    std::vector<long long> sizes;
    for (const MeshPart& m : split) sizes.push_back(m.degree);
    if (interconnect::mesh_order(dims, sizes, true)) continue;  // the whole-axis meshes have it
    const auto order = interconnect::mesh_order(dims, sizes, false);
    if (!order) continue;
    std::vector<MeshPart> laid;
    std::vector<long long> laid_sizes;
    for (std::size_t k : *order) laid.push_back(split[k]), laid_sizes.push_back(split[k].degree);
    const auto taken = interconnect::mesh_parts(dims, laid_sizes, false);
    if (!taken) continue;  // (mesh_order found the order by it)
    std::vector<std::uint32_t> parts(shape.size(), 0);
    for (const auto& axis_parts : *taken)
      for (const interconnect::AxisPart& p : axis_parts) ++parts[static_cast<std::size_t>(p.axis)];
    std::uint32_t cuts = 0;
    for (std::uint32_t n : parts) cuts += n > 1 ? n - 1 : 0;
    if (cuts <= max_cuts) out.push_back(laid);
  }
  return out;
}

}  // namespace

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
  // Then the meshes over part of a physical axis (one order each), after
  // the whole-axis ones, whose ids they leave as they were.
  const std::size_t whole = meshes.size();
  if (spec.max_axis_splits > 0) {
    const auto split = split_meshes(shape, axes, spec.max_axis_splits);
    meshes.insert(meshes.end(), split.begin(), split.end());
  }
  CandidateSet set;
  std::set<std::vector<std::uint32_t>> degrees_seen;
  const std::vector<std::string> remats = remat_choices(spec);
  const std::vector<std::uint32_t> micro =
      spec.microbatches.empty() ? std::vector<std::uint32_t>{1, 2, 4, 8} : spec.microbatches;
  for (std::size_t k = 0; k < meshes.size(); ++k)
    for (Axis dcn : dcn_choices(spec, axes)) {
      Family f{"", meshes[k], dcn, spec.slices, k >= whole};
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
