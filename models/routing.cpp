#include "models/routing.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace models {

namespace {

// SplitMix64 (Steele, Lea and Flood 2014): one 64-bit state, one odd
// increment, a fixed mix; the same stream everywhere.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }  // [0, 1), 53 bits
  std::uint64_t below(std::uint64_t n) { return next() % n; }    // modulo bias below 2^-40 for n < 2^24

 private:
  std::uint64_t state_;
};

// `total` split in proportion to `shares` (summing to 1): floors, then the
// largest remainders one more each (lower index first on ties).
std::vector<std::uint64_t> split_exactly(std::uint64_t total, const std::vector<double>& shares) {
  const std::size_t n = shares.size();
  std::vector<std::uint64_t> out(n);
  std::vector<std::pair<double, std::size_t>> rest(n);
  std::uint64_t given = 0;
  for (std::size_t e = 0; e < n; ++e) {
    const double want = double(total) * shares[e];
    out[e] = static_cast<std::uint64_t>(std::floor(want));
    given += out[e];
    rest[e] = {want - double(out[e]), e};
  }
  std::stable_sort(rest.begin(), rest.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t i = 0; given < total; ++i, ++given) ++out[rest[i % n].second];
  return out;
}

}  // namespace

std::uint64_t LayerRouting::routed_to(std::uint32_t expert) const {
  std::uint64_t n = 0;
  for (std::uint32_t s = 0; s < sources; ++s) n += routed[std::size_t{s} * experts + expert];
  return n;
}

std::uint64_t LayerRouting::kept_by(std::uint32_t expert) const {
  std::uint64_t n = 0;
  for (std::uint32_t s = 0; s < sources; ++s) n += kept[std::size_t{s} * experts + expert];
  return n;
}

std::uint64_t LayerRouting::rows(std::uint32_t source, std::uint32_t expert) const {
  return buffer_rows ? buffer_rows : kept[std::size_t{source} * experts + expert];
}

std::uint64_t LayerRouting::rows_for(std::uint32_t expert) const {
  std::uint64_t n = 0;
  for (std::uint32_t s = 0; s < sources; ++s) n += rows(s, expert);
  return n;
}

std::uint64_t LayerRouting::assignments() const {
  return std::accumulate(routed.begin(), routed.end(), std::uint64_t{0});
}

std::uint64_t LayerRouting::dropped() const {
  return assignments() - std::accumulate(kept.begin(), kept.end(), std::uint64_t{0});
}

LayerRouting route_layer(const RoutingConfig& cfg, std::uint32_t experts, std::uint32_t top_k, double capacity_factor,
                         std::uint32_t sources, std::uint64_t tokens, std::uint64_t layer) {
  if (experts == 0 || top_k == 0 || top_k > experts || sources == 0)
    throw std::invalid_argument("route_layer: need 1 <= top_k <= experts and a source");
  LayerRouting r;
  r.sources = sources;
  r.experts = experts;
  r.routed.assign(std::size_t{sources} * experts, 0);
  const std::uint64_t assignments = tokens * top_k;  // per source
  if (cfg.distribution == "zipf") {
    // Popularity by rank, the ranks dealt by a Fisher-Yates shuffle of this layer's own stream.
    SplitMix64 deal(cfg.seed ^ (0x5bd1e995ULL * (layer + 1)));
    std::vector<std::uint32_t> rank(experts);
    std::iota(rank.begin(), rank.end(), 0u);
    for (std::uint32_t i = experts - 1; i > 0; --i) std::swap(rank[i], rank[deal.below(i + 1)]);
    std::vector<double> p(experts);
    for (std::uint32_t e = 0; e < experts; ++e) p[e] = std::pow(double(rank[e] + 1), -cfg.skew);
    std::vector<double> left(experts);
    for (std::uint32_t s = 0; s < sources; ++s) {
      SplitMix64 rng(cfg.seed + 0x9e3779b97f4a7c15ULL * (layer * 65536 + s + 1));
      std::uint64_t* row = &r.routed[std::size_t{s} * experts];
      for (std::uint64_t t = 0; t < tokens; ++t) {
        left = p;
        double mass = std::accumulate(left.begin(), left.end(), 0.0);
        for (std::uint32_t k = 0; k < top_k; ++k) {
          double u = rng.uniform() * mass;
          std::uint32_t e = 0;
          while (e + 1 < experts && (left[e] == 0 || u >= left[e])) {
            u -= left[e];
            ++e;
          }
          while (left[e] == 0) --e;  // rounding at the end of the walk: the last expert still unpicked
          ++row[e];
          mass -= left[e];
          left[e] = 0;
        }
      }
    }
  } else {
    std::vector<double> shares(experts, 1.0 / experts);
    if (cfg.distribution == "measured") {
      if (cfg.loads.size() != experts)
        throw std::invalid_argument("route_layer: measured routing needs one load per expert");
      const double sum = std::accumulate(cfg.loads.begin(), cfg.loads.end(), 0.0);
      for (std::uint32_t e = 0; e < experts; ++e) shares[e] = cfg.loads[e] / sum;
    } else if (cfg.distribution != "uniform") {
      throw std::invalid_argument("route_layer: unknown distribution '" + cfg.distribution + "'");
    }
    const std::vector<std::uint64_t> row = split_exactly(assignments, shares);
    for (std::uint32_t e = 0; e < experts; ++e)
      if (row[e] > tokens)
        throw std::invalid_argument(
            "route_layer: an expert would get a token more than once (its share exceeds 1 / top_k)");
    for (std::uint32_t s = 0; s < sources; ++s) std::copy(row.begin(), row.end(), &r.routed[std::size_t{s} * experts]);
  }
  r.kept = r.routed;
  if (capacity_factor > 0) {
    r.capacity = static_cast<std::uint64_t>(std::ceil(capacity_factor * double(assignments) / double(experts)));
    for (auto& k : r.kept) k = std::min(k, r.capacity);
  }
  return r;
}

}  // namespace models
