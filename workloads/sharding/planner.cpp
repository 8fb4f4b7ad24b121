#include "workloads/sharding/planner.h"

#include <algorithm>

namespace workloads {

namespace {

using Axes = std::vector<std::string>;

bool contains(const Axes& axes, const std::string& a) { return std::find(axes.begin(), axes.end(), a) != axes.end(); }

Axes minus(const Axes& a, const Axes& b) {
  Axes out;
  for (const auto& x : a)
    if (!contains(b, x)) out.push_back(x);
  return out;
}

Axes intersect(const Axes& a, const Axes& b) {
  Axes out;
  for (const auto& x : a)
    if (contains(b, x)) out.push_back(x);
  return out;
}

bool is_prefix(const Axes& prefix, const Axes& of) {
  return prefix.size() <= of.size() && std::equal(prefix.begin(), prefix.end(), of.begin());
}

std::string axes_str(const Axes& axes) {
  if (axes.empty()) return "null";
  if (axes.size() == 1) return axes[0];
  std::string s = "[";
  for (std::size_t i = 0; i < axes.size(); ++i) s += (i ? ", " : "") + axes[i];
  return s + "]";
}

// Fails at the size that does not divide (`m`, `k` or `n`), or at the spec
// when that came from a --set: the error names what the user last typed.
void check_divisible(const sim::YamlNode& where, const char* spec_key, const std::string& tensor, int dim,
                     const char* dim_name, std::uint64_t extent, const Axes& axes, const MeshAxes& mesh) {
  const sim::YamlNode spec = where[spec_key];
  const bool spec_set = spec.location().file.rfind("--set ", 0) == 0;
  const sim::YamlNode at = spec_set ? spec : where[dim_name];
  std::uint64_t parts = 1;
  for (const auto& a : axes) {
    parts *= axes_size({a}, mesh);
    if (extent % parts != 0)
      at.fail(tensor + " dimension " + std::to_string(dim) + " (" + dim_name + " = " + std::to_string(extent) +
              ") is split over mesh axis '" + a + "' (size " + std::to_string(axes_size({a}, mesh)) +
              (axes.size() > 1 ? ", " + std::to_string(parts) + " parts with the axes before it" : "") +
              "): " + std::to_string(extent) + " is not divisible by " + std::to_string(parts));
  }
}

}  // namespace

std::string PartitionSpec::str() const {
  std::string s = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + axes_str(dims[i]);
  return s + "]";
}

std::uint64_t axes_size(const std::vector<std::string>& axes, const MeshAxes& mesh) {
  std::uint64_t n = 1;
  for (const auto& a : axes)
    for (const auto& [name, size] : mesh)
      if (name == a) n *= size;
  return n;
}

PartitionSpec parse_partition_spec(const sim::YamlNode& node, std::size_t rank, const MeshAxes& mesh,
                                   const std::string& tensor) {
  if (!node.present()) return PartitionSpec{std::vector<Axes>(rank)};
  if (!node.is_sequence() || node.size() != rank)
    node.fail("a PartitionSpec for " + tensor + " needs " + std::to_string(rank) +
              " entries (an axis name, a list of axis names, or null per dimension), got " +
              sim::describe_yaml(node.raw()));
  std::vector<std::string> names;
  for (const auto& [name, size] : mesh) names.push_back(name);
  PartitionSpec spec;
  Axes used;
  for (std::size_t d = 0; d < rank; ++d) {
    sim::YamlNode entry = node[d];
    Axes axes;
    auto take = [&](const sim::YamlNode& n) {
      std::string a = n.as_string();
      if (!contains(names, a)) {
        std::string msg = "unknown mesh axis '" + a + "' in the spec of " + tensor + "; the mesh has:";
        for (const auto& x : names) msg += " " + x;
        std::string hint = sim::did_you_mean(a, names);
        if (!hint.empty()) msg += " (" + hint + ")";
        n.fail(msg);
      }
      if (contains(used, a))
        n.fail("mesh axis '" + a + "' is used twice in the spec of " + tensor +
               "; a tensor can be split over an axis along one dimension only");
      used.push_back(a);
      axes.push_back(a);
    };
    if (!entry.present()) {
      // null: replicated along this dimension
    } else if (entry.is_sequence()) {
      for (std::size_t i = 0; i < entry.size(); ++i) take(entry[i]);
    } else {
      take(entry);
    }
    spec.dims.push_back(axes);
  }
  return spec;
}

ShardedMatmulPlan plan_sharded_matmul(const ShardedMatmulShape& s, const PartitionSpec& a, const PartitionSpec& b,
                                      const PartitionSpec& out, const MeshAxes& mesh, const sim::YamlNode& where) {
  check_divisible(where, "a_spec", "A", 0, "m", s.m, a.dims[0], mesh);
  check_divisible(where, "a_spec", "A", 1, "k", s.k, a.dims[1], mesh);
  check_divisible(where, "b_spec", "B", 0, "k", s.k, b.dims[0], mesh);
  check_divisible(where, "b_spec", "B", 1, "n", s.n, b.dims[1], mesh);
  check_divisible(where, "out_spec", "C", 0, "m", s.m, out.dims[0], mesh);
  check_divisible(where, "out_spec", "C", 1, "n", s.n, out.dims[1], mesh);

  const std::uint64_t eb = s.element_bytes, ob = s.out_element_bytes;
  ShardedMatmulPlan plan;
  plan.a_shard = {s.m / axes_size(a.dims[0], mesh), s.k / axes_size(a.dims[1], mesh)};
  plan.b_shard = {s.k / axes_size(b.dims[0], mesh), s.n / axes_size(b.dims[1], mesh)};
  plan.c_shard = {s.m / axes_size(out.dims[0], mesh), s.n / axes_size(out.dims[1], mesh)};

  Axes am = a.dims[0], ak = a.dims[1], bk = b.dims[0], bn = b.dims[1];
  std::vector<std::string> cases;

  // Contraction: both operands must split k the same way. Otherwise gather
  // the operand(s) whose k is split (SB sharding.md, case 2).
  auto gather = [&](const std::string& tensor, int dim, Axes& axes, const Axes& which, std::uint64_t rows,
                    std::uint64_t cols, const std::string& why) {
    // Bytes of one participant's gathered buffer: the tensor with `which` undone.
    std::uint64_t full_rows = rows, full_cols = cols;
    (dim == 0 ? full_rows : full_cols) *= axes_size(which, mesh);
    plan.before.push_back(
        {interconnect::CollectiveOp::all_gather, tensor, dim, which, full_rows * full_cols * eb, why});
    axes = minus(axes, which);
  };
  if (ak != bk) {
    if (!ak.empty())
      gather("A", 1, ak, ak, s.m / axes_size(am, mesh), s.k / axes_size(ak, mesh),
             "A's contracting dimension is split as " + axes_str(a.dims[1]) + " but B's as " + axes_str(b.dims[0]));
    if (!bk.empty())
      gather("B", 0, bk, bk, s.k / axes_size(bk, mesh), s.n / axes_size(bn, mesh),
             "B's contracting dimension is split as " + axes_str(b.dims[0]) + " but A's as " + axes_str(a.dims[1]));
    cases.push_back("contracting dimension sharded on one side: all-gather first");
  }
  // Non-contracting dimensions on the same mesh axis would leave each chip
  // with a diagonal block only: gather the smaller operand (case 4).
  Axes clash = intersect(am, bn);
  if (!clash.empty()) {
    const std::uint64_t a_bytes = (s.m / axes_size(am, mesh)) * (s.k / axes_size(ak, mesh));
    const std::uint64_t b_bytes = (s.k / axes_size(bk, mesh)) * (s.n / axes_size(bn, mesh));
    const std::string why = "A's rows and B's columns are both split over " + axes_str(clash);
    if (b_bytes <= a_bytes)
      gather("B", 1, bn, clash, s.k / axes_size(bk, mesh), s.n / axes_size(bn, mesh), why);
    else
      gather("A", 0, am, clash, s.m / axes_size(am, mesh), s.k / axes_size(ak, mesh), why);
    cases.push_back("both non-contracting dimensions sharded on the same axis: gather one operand");
  }
  plan.k_axes = ak;  // == bk now
  plan.local_m = s.m / axes_size(am, mesh);
  plan.local_k = s.k / axes_size(ak, mesh);
  plan.local_n = s.n / axes_size(bn, mesh);

  // The local product is C split as [am, bn], a partial sum over k_axes.
  Axes cm = am, cn = bn;
  if (!plan.k_axes.empty()) {
    const std::uint64_t local_c = plan.local_m * plan.local_n * ob;
    const Axes& k = plan.k_axes;
    if (out.dims[1] == [&] {
          Axes x = cn;
          x.insert(x.end(), k.begin(), k.end());
          return x;
        }()) {
      plan.after.push_back({interconnect::CollectiveOp::reduce_scatter, "C", 1, k, local_c,
                            "partial sums over " + axes_str(k) + ", output split along n"});
      cn = out.dims[1];
      cases.push_back("contracting dimensions sharded alike: local matmul, then reduce-scatter");
    } else if (out.dims[0] == [&] {
                 Axes x = cm;
                 x.insert(x.end(), k.begin(), k.end());
                 return x;
               }()) {
      plan.after.push_back({interconnect::CollectiveOp::reduce_scatter, "C", 0, k, local_c,
                            "partial sums over " + axes_str(k) + ", output split along m"});
      cm = out.dims[0];
      cases.push_back("contracting dimensions sharded alike: local matmul, then reduce-scatter");
    } else {
      plan.after.push_back(
          {interconnect::CollectiveOp::all_reduce, "C", 0, k, local_c, "partial sums over " + axes_str(k)});
      cases.push_back("contracting dimensions sharded alike: local matmul, then all-reduce");
    }
  }
  // Reshard C to out_spec: dropping axes needs an all-gather, adding axes
  // is a local slice (free).
  for (int d = 0; d < 2; ++d) {
    Axes& have = d == 0 ? cm : cn;
    const Axes& want = out.dims[d];
    if (have == want || is_prefix(have, want)) continue;
    Axes keep;
    for (std::size_t i = 0; i < have.size() && i < want.size() && have[i] == want[i]; ++i) keep.push_back(have[i]);
    Axes drop(have.begin() + static_cast<long>(keep.size()), have.end());
    std::uint64_t rows = s.m / axes_size(cm, mesh), cols = s.n / axes_size(cn, mesh);
    (d == 0 ? rows : cols) *= axes_size(drop, mesh);
    plan.after.push_back({interconnect::CollectiveOp::all_gather, "C", d, drop, rows * cols * ob,
                          "the output is split as " + axes_str(have) + " along " + (d ? "n" : "m") +
                              " but out_spec asks for " + axes_str(want)});
    have = keep;
    cases.push_back("output resharded: all-gather");
  }
  if (cases.empty()) cases.push_back("shardings agree: no communication");
  for (std::size_t i = 0; i < cases.size(); ++i) plan.summary += (i ? "; " : "") + cases[i];
  return plan;
}

}  // namespace workloads
