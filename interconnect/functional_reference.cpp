#include "interconnect/functional_reference.h"

namespace interconnect {

std::vector<double> test_pattern(int chip, std::uint64_t elements) {
  std::vector<double> v(elements);
  for (std::uint64_t i = 0; i < elements; ++i) {
    v[i] = static_cast<double>(static_cast<long long>((chip * 7919ULL + i * 104729ULL + 13ULL) % 2001ULL) - 1000);
  }
  return v;
}

std::vector<double> expected_output(const CollectivePlan& plan, const CollectiveSpec& spec,
                                    const std::vector<std::vector<double>>& inputs, int chip) {
  const std::vector<int>& group = plan.groups[plan.group_of[chip]];
  const int r = plan.rank[chip];
  const std::uint64_t v = plan.elements, s = plan.shard_elements();
  std::vector<double> out;
  switch (plan.op) {
    case CollectiveOp::all_reduce:
      out.assign(v, 0.0);
      for (int c : group) {
        for (std::uint64_t i = 0; i < v; ++i) out[i] += inputs[c][i];
      }
      break;
    case CollectiveOp::reduce_scatter:
      out.assign(s, 0.0);
      for (int c : group) {
        for (std::uint64_t i = 0; i < s; ++i) out[i] += inputs[c][r * s + i];
      }
      break;
    case CollectiveOp::all_gather:
      for (int c : group) out.insert(out.end(), inputs[c].begin(), inputs[c].end());
      break;
    case CollectiveOp::all_to_all:
      for (int c : group) {
        out.insert(out.end(), inputs[c].begin() + static_cast<std::ptrdiff_t>(r * s),
                   inputs[c].begin() + static_cast<std::ptrdiff_t>((r + 1) * s));
      }
      break;
    case CollectiveOp::permute: {
      out.assign(v, 0.0);
      std::vector<std::pair<int, int>> pairs = spec.pairs;
      const int n = static_cast<int>(group.size());
      if (pairs.empty()) {
        for (int i = 0; i < n; ++i) pairs.emplace_back(i, (i + 1) % n);
      }
      for (const auto& [src, dst] : pairs) {
        if (dst == r) out = inputs[group[src]];
      }
      break;
    }
    case CollectiveOp::broadcast: out = inputs[group[spec.root]]; break;
  }
  return out;
}

}  // namespace interconnect
