#include "plan/slice.h"

#include <algorithm>
#include <functional>

#include "hw/chip_config.h"
#include "sim/error.h"
#include "sim/text.h"
#include "workloads/experiment.h"

namespace plan {

namespace {

// n as `dims` factors, as equal as possible, ascending: each factor the
// largest power-of-two-friendly divisor not above the remaining root.
std::vector<std::uint32_t> square_factors(std::uint32_t n, int dims) {
  std::vector<std::uint32_t> out;
  for (int d = dims; d > 1; --d) {
    std::uint32_t best = 1;
    for (std::uint32_t f = 1; std::uint64_t(f) * f <= n; ++f) {
      std::uint64_t power = 1;
      for (int i = 0; i < d; ++i) power *= f;
      if (power > n) break;
      if (n % f == 0) best = f;
    }
    out.push_back(best);
    n /= best;
  }
  out.push_back(n);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

namespace {

Slice one_slice(const PlanSpec& spec) {
  Slice s;
  if (!spec.pod_yaml.empty()) {
    const sim::YamlNode pod = sim::YamlNode::load_string(spec.pod_yaml, spec.path);
    workloads::PodSpec p;
    workloads::pod_params().load(pod, p);
    s.shape = p.shape;
    s.pod_yaml = spec.pod_yaml;
    s.alike_wraparound =
        std::adjacent_find(p.wraparound.begin(), p.wraparound.end(), std::not_equal_to<>()) == p.wraparound.end();
    return s;
  }
  return squarest_slice(hw::load_chip(sim::YamlNode::load_file(spec.chip_file)), spec.chips);
}

}  // namespace

Slice plan_slice(const PlanSpec& spec) {
  Slice s = one_slice(spec);
  if (spec.slices > 1)
    s.pod_yaml = "{slices: " + std::to_string(spec.slices) + ", slice: " + s.pod_yaml +
                 (spec.dcn_yaml.empty() ? "" : ", dcn: " + spec.dcn_yaml) + "}";
  return s;
}

Slice squarest_slice(const hw::ChipConfig& chip, std::uint32_t chips) {
  return slice_of_shape(chip, square_factors(chips, chip.ici.links_per_chip >= 6 ? 3 : 2));
}

Slice slice_of_shape(const hw::ChipConfig& chip, const std::vector<std::uint32_t>& shape) {
  Slice s;
  const bool three_d = chip.ici.links_per_chip >= 6;
  s.shape = shape;
  std::vector<std::string> dims, wrap;
  for (std::uint32_t d : s.shape) {
    dims.push_back(std::to_string(d));
    // tpu-specs.md#common.wraparound_rules: (1) v4 and v5p wrap on whole
    // 4x4x4 cubes, axes that are multiples of 4 (the squarest shapes this
    // gives, 4x4x4, 4x4x8, 4x8x8, 8x8x16, ..., are also rule (4)'s tori);
    // (2) v5e and v6e wrap only axes of 16.
    const bool wraps =
        three_d ? std::all_of(s.shape.begin(), s.shape.end(), [](std::uint32_t x) { return x % 4 == 0; }) : d == 16;
    wrap.push_back(wraps ? "true" : "false");
  }
  s.alike_wraparound = std::adjacent_find(wrap.begin(), wrap.end(), std::not_equal_to<>()) == wrap.end();
  s.pod_yaml = std::string("{topology: ") +
               (shape.size() == 3   ? "torus3d"
                : shape.size() == 2 ? "torus2d"
                                    : "ring") +
               ", shape: " + sim::flow_list(dims) + ", wraparound: " + sim::flow_list(wrap) + "}";
  return s;
}

}  // namespace plan
