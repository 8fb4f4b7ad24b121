#pragma once
// Time covered by sets of intervals (ops' [start, end) in picoseconds): how
// long a chip computed, communicated, and communicated while computing.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace runtime {

using Interval = std::pair<std::uint64_t, std::uint64_t>;

// Sorted, disjoint intervals covering the same time; empty ones dropped.
inline std::vector<Interval> merge(std::vector<Interval> v) {
  std::sort(v.begin(), v.end());
  std::vector<Interval> out;
  for (const auto& iv : v) {
    if (iv.second <= iv.first) continue;
    if (!out.empty() && iv.first <= out.back().second)
      out.back().second = std::max(out.back().second, iv.second);
    else
      out.push_back(iv);
  }
  return out;
}

inline std::uint64_t length(const std::vector<Interval>& merged) {
  std::uint64_t s = 0;
  for (const auto& iv : merged) s += iv.second - iv.first;
  return s;
}

// Length of the intersection of two merged interval lists.
inline std::uint64_t overlap(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::uint64_t s = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const std::uint64_t lo = std::max(a[i].first, b[j].first), hi = std::min(a[i].second, b[j].second);
    if (hi > lo) s += hi - lo;
    (a[i].second < b[j].second) ? ++i : ++j;
  }
  return s;
}

// How much of `iv` no interval of `merged` covers.
inline std::uint64_t uncovered(const Interval& iv, const std::vector<Interval>& merged) {
  if (iv.second <= iv.first) return 0;
  std::uint64_t covered = 0;
  auto it = std::upper_bound(merged.begin(), merged.end(), iv.first,
                             [](std::uint64_t t, const Interval& m) { return t < m.second; });
  for (; it != merged.end() && it->first < iv.second; ++it)
    covered += std::min(it->second, iv.second) - std::max(it->first, iv.first);
  return iv.second - iv.first - covered;
}

}  // namespace runtime
