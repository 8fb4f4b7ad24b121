#include "workloads/maxtext/mesh.h"

#include "sim/error.h"

namespace workloads {

const std::vector<MaxTextAxis>& all_maxtext_axes() {
  static const std::vector<MaxTextAxis> axes = [] {
    std::vector<MaxTextAxis> out;
    for (std::size_t i = 0; i < kMaxTextAxes; ++i) out.push_back(static_cast<MaxTextAxis>(i));
    return out;
  }();
  return axes;
}

std::string parallelism_key(MaxTextAxis a, bool ici) {
  const std::string axis = a == MaxTextAxis::stage ? "pipeline" : maxtext_axis_names().name(a);
  return std::string(ici ? "ici_" : "dcn_") + axis + "_parallelism";
}

int fill_parallelism(std::int64_t* values, std::size_t n, std::uint64_t target, const std::string& what) {
  const std::string group = what == "ICI" ? "ici" : "dcn";
  const std::string unit = what == "ICI" ? "chips of a slice" : "slices";
  int fill = -1;
  std::int64_t known = 1;
  for (std::size_t i = 0; i < n; ++i) {
    if (values[i] != -1) {
      known *= values[i];
      continue;
    }
    if (fill >= 0)
      sim::reject(parallelism_key(static_cast<MaxTextAxis>(i), what == "ICI"),
                  "a second -1 among the " + group + "_*_parallelism values (the first is " +
                      parallelism_key(static_cast<MaxTextAxis>(fill), what == "ICI") +
                      "): at most one axis of a group can be unspecified");
    fill = static_cast<int>(i);
  }
  if (fill >= 0) {
    // MaxText truncates target / known to an integer; a remainder then fails
    // the product check below, as it does there.
    const std::int64_t t = static_cast<std::int64_t>(target);
    if (t < known)
      sim::reject(parallelism_key(static_cast<MaxTextAxis>(fill), what == "ICI"),
                  "-1 cannot be filled: the other " + group + "_*_parallelism values multiply to " +
                      std::to_string(known) + ", more than the " + std::to_string(target) + " " + unit);
    values[fill] = t / known;
  }
  std::int64_t product = 1;
  for (std::size_t i = 0; i < n; ++i) product *= values[i];
  if (product != static_cast<std::int64_t>(target)) {
    // Located at the filled key, or else at the first value that is not 1.
    std::size_t at_i = 0;
    if (fill >= 0) {
      at_i = static_cast<std::size_t>(fill);
    } else {
      while (at_i + 1 < n && values[at_i] == 1) ++at_i;
    }
    const std::string at = parallelism_key(static_cast<MaxTextAxis>(at_i), what == "ICI");
    std::string msg = "the " + group + "_*_parallelism values multiply to " + std::to_string(product) + ", not the " +
                      std::to_string(target) + " " + unit;
    if (fill >= 0)
      msg += " (-1 became " + std::to_string(values[fill]) + ": " + std::to_string(target) + " is not a multiple of " +
             std::to_string(known) + ")";
    sim::reject(at, msg);
  }
  return fill;
}

void fill_mesh(MaxTextMesh& mesh, std::uint32_t chips, std::uint32_t slices) {
  if (slices == 0 || chips % slices != 0)
    sim::reject("", std::to_string(chips) + " chips do not make " + std::to_string(slices) + " equal slices");
  fill_parallelism(mesh.ici, kMaxTextAxes, chips / slices, "ICI");
  if (slices == 1) {
    for (std::size_t i = 0; i < kMaxTextAxes; ++i) {
      if (mesh.dcn[i] != 1 && mesh.dcn[i] != -1)
        sim::reject(parallelism_key(static_cast<MaxTextAxis>(i), false),
                    "DCN parallelism of " + std::to_string(mesh.dcn[i]) + " on a pod of one slice");
      mesh.dcn[i] = 1;
    }
    return;
  }
  fill_parallelism(mesh.dcn, kMaxTextAxes, slices, "DCN");
}

}  // namespace workloads
