#pragma once
// Where a matmul turns from memory-bound to compute-bound as its rows grow
// (k and n fixed): the roofline's ridge, measured. Shared by the bf16 and
// the 8-bit roofline tests.
#include <cstdint>
#include <functional>

#include <nlohmann/json.hpp>

namespace testing_workloads {

// `result(m)` runs the matmul with m rows and returns its report's
// `result`. The measured bound (result.roofline.bound) must be "memory" at
// m = lo and "compute" at m = hi; bisecting over multiples of `step`, this
// returns the arithmetic intensity of the smallest compute-bound m.
inline double crossover_intensity(const std::function<nlohmann::json(std::uint64_t)>& result, std::uint64_t lo,
                                  std::uint64_t hi, std::uint64_t step = 8) {
  nlohmann::json at_hi = result(hi);
  if (result(lo)["roofline"]["bound"] != "memory" || at_hi["roofline"]["bound"] != "compute") return 0;
  while (hi - lo > step) {
    const std::uint64_t mid = (lo + hi) / 2 / step * step;
    nlohmann::json r = result(mid);
    if (r["roofline"]["bound"] == "compute") {
      hi = mid;
      at_hi = std::move(r);
    } else {
      lo = mid;
    }
  }
  return at_hi["arithmetic_intensity"].get<double>();
}

}  // namespace testing_workloads
