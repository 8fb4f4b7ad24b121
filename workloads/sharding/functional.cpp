#include "workloads/sharding/functional.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include "interconnect/mesh.h"
#include "workloads/sharding/spec.h"

namespace workloads {

namespace {

using Axes = std::vector<std::string>;

bool is_suffix(const Axes& tail, const Axes& of) {
  return tail.size() <= of.size() && std::equal(tail.rbegin(), tail.rend(), of.rbegin());
}

std::vector<hw::bf16> to_bf16(const std::vector<double>& v) {
  std::vector<hw::bf16> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = hw::bf16::from_float(static_cast<float>(v[i]));
  return out;
}

// Writes into `dst` in place: ops hold pointers into these buffers.
void assign_bf16(std::vector<hw::bf16>& dst, const std::vector<double>& v) {
  if (dst.size() != v.size()) throw std::logic_error("functional buffer size mismatch");
  for (std::size_t i = 0; i < v.size(); ++i) dst[i] = hw::bf16::from_float(static_cast<float>(v[i]));
}

}  // namespace

ShardedMatmulData::ShardedMatmulData(const Experiment& exp, const ShardedMatmulSpec& spec, std::uint64_t seed,
                                     const sim::YamlNode& where)
    : exp_(exp), spec_(spec) {
  const auto cfg = pod_network_config(exp);
  const interconnect::Topology topo = cfg.make_topology();
  const interconnect::Mesh mesh(topo, cfg.mesh);
  for (int c = 0; c < topo.chips(); ++c) {
    std::vector<std::uint64_t> coords;
    for (std::size_t i = 0; i < cfg.mesh.size(); ++i) {
      std::uint64_t coord = 0, stride = 1;  // the first physical axis varies fastest
      for (const interconnect::AxisPart& p : mesh.physical_axes(static_cast<int>(i))) {
        coord += std::uint64_t(p.digit(topo, c)) * stride;
        stride *= std::uint64_t(p.size);
      }
      coords.push_back(coord);
    }
    mesh_coords_.push_back(coords);
  }

  const auto& s = spec.shape;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  a_full_.resize(s.m * s.k);
  b_full_.resize(s.k * s.n);
  for (auto& x : a_full_) x = hw::bf16::from_float(dist(rng)).to_float();
  for (auto& x : b_full_) x = hw::bf16::from_float(dist(rng)).to_float();

  chips_.resize(mesh_coords_.size());
  for (int c = 0; c < static_cast<int>(chips_.size()); ++c) {
    chips_[c].a.push_back(slice(a_full_, s.m, s.k, spec.a.dims[0], spec.a.dims[1], c));
    chips_[c].b.push_back(slice(b_full_, s.k, s.n, spec.b.dims[0], spec.b.dims[1], c));
  }
  const auto& plan = spec.plan;
  for (const auto& step : plan.before) {
    auto tensor = step.tensor == "A" ? &Chip::a : &Chip::b;
    if (!is_suffix(step.axes, (chips_[0].*tensor).back().axes[step.dim]))
      where.fail("functional mode follows gathers over the minor axes of a dimension only; " + step.tensor +
                 " dimension " + std::to_string(step.dim) + " gathers over axes that are not its minor ones");
    before_.push_back(gather(tensor, step.dim, step.axes));
  }
  finish_operands();
  // C starts as the local product, split like A's rows and B's columns.
  for (auto& ch : chips_) {
    Matrix c0;
    c0.rows = plan.local_m;
    c0.cols = plan.local_n;
    c0.axes[0] = ch.a.back().axes[0];
    c0.axes[1] = ch.b.back().axes[1];
    ch.c.push_back(c0);
  }
  for (const auto& step : plan.after) {
    if (step.op == interconnect::CollectiveOp::all_gather) {
      if (!is_suffix(step.axes, chips_[0].c.back().axes[step.dim]))
        where.fail("functional mode follows output gathers over the minor axes of a dimension only");
      after_.push_back(gather(&Chip::c, step.dim, step.axes));
      continue;
    }
    const bool scatter = step.op == interconnect::CollectiveOp::reduce_scatter;
    const std::size_t v_in = chips_[0].c.size() - 1;
    for (auto& ch : chips_) {
      Matrix out = ch.c.back();
      if (scatter) {
        (step.dim == 0 ? out.rows : out.cols) /= axes_size(step.axes, exp.mesh);
        out.axes[step.dim].insert(out.axes[step.dim].end(), step.axes.begin(), step.axes.end());
      }
      out.v.clear();
      ch.c.push_back(out);
    }
    const Axes k = step.axes;
    const int dim = step.dim;
    runtime::CollectiveData d;
    // Version 0 of C is the MXUs' FP32 accumulator.
    auto current = [this, v_in](int c) {
      return v_in == 0 ? std::vector<double>(chips_[c].y.begin(), chips_[c].y.end()) : chips_[c].c[v_in].v;
    };
    d.input = [this, current, scatter, k, dim, v_in](int c) {
      std::vector<double> v = current(c);
      if (!scatter) return v;
      // reduce_scatter hands rank p the p-th chunk: lay out the blocks along
      // `dim` in the order of the group's ranks.
      const Matrix& in = chips_[c].c[v_in];
      const auto members = group(c, k);
      const std::uint64_t parts = members.size();
      std::vector<double> out;
      out.reserve(v.size());
      for (int g : members) {
        const std::uint64_t blk = index(g, k);
        const std::uint64_t r0 = dim == 0 ? blk * in.rows / parts : 0, r1 = dim == 0 ? r0 + in.rows / parts : in.rows;
        const std::uint64_t c0 = dim == 1 ? blk * in.cols / parts : 0, c1 = dim == 1 ? c0 + in.cols / parts : in.cols;
        for (std::uint64_t i = r0; i < r1; ++i)
          for (std::uint64_t j = c0; j < c1; ++j) out.push_back(v[i * in.cols + j]);
      }
      return out;
    };
    d.output = [this, v_in](int c, const std::vector<double>& v) { chips_[c].c[v_in + 1].v = v; };
    after_.push_back(d);
  }
}

std::uint64_t ShardedMatmulData::coord(int chip, const std::string& axis) const {
  for (std::size_t i = 0; i < exp_.mesh.size(); ++i)
    if (exp_.mesh[i].first == axis) return mesh_coords_[chip][i];
  return 0;
}

std::uint64_t ShardedMatmulData::index(int chip, const Axes& axes) const {
  std::uint64_t idx = 0;
  for (const auto& a : axes) idx = idx * axes_size({a}, exp_.mesh) + coord(chip, a);
  return idx;
}

std::vector<int> ShardedMatmulData::group(int chip, const Axes& axes) const {
  std::vector<int> members;
  for (int g = 0; g < static_cast<int>(mesh_coords_.size()); ++g) {
    bool same = true;
    for (std::size_t i = 0; i < exp_.mesh.size() && same; ++i)
      if (std::find(axes.begin(), axes.end(), exp_.mesh[i].first) == axes.end())
        same = mesh_coords_[g][i] == mesh_coords_[chip][i];
    if (same) members.push_back(g);
  }
  return members;  // ascending chip id: the order of a collective's ranks
}

ShardedMatmulData::Matrix ShardedMatmulData::slice(const std::vector<double>& full, std::uint64_t rows,
                                                   std::uint64_t cols, const Axes& row_axes, const Axes& col_axes,
                                                   int chip) const {
  Matrix m;
  m.rows = rows / axes_size(row_axes, exp_.mesh);
  m.cols = cols / axes_size(col_axes, exp_.mesh);
  m.axes[0] = row_axes;
  m.axes[1] = col_axes;
  const std::uint64_t r0 = index(chip, row_axes) * m.rows, c0 = index(chip, col_axes) * m.cols;
  m.v.resize(m.rows * m.cols);
  for (std::uint64_t i = 0; i < m.rows; ++i)
    for (std::uint64_t j = 0; j < m.cols; ++j) m.v[i * m.cols + j] = full[(r0 + i) * cols + c0 + j];
  return m;
}

runtime::CollectiveData ShardedMatmulData::gather(std::vector<Matrix> Chip::*tensor, int dim, const Axes& axes) {
  const std::size_t v_in = (chips_[0].*tensor).size() - 1;
  const std::uint64_t parts = axes_size(axes, exp_.mesh);
  for (auto& ch : chips_) {
    Matrix out = (ch.*tensor).back();
    (dim == 0 ? out.rows : out.cols) *= parts;
    out.axes[dim].resize(out.axes[dim].size() - axes.size());
    out.v.assign(out.rows * out.cols, 0.0);
    (ch.*tensor).push_back(out);
  }
  const bool from_y = tensor == &Chip::c && v_in == 0;
  runtime::CollectiveData d;
  d.input = [this, tensor, v_in, from_y](int c) {
    if (from_y) return std::vector<double>(chips_[c].y.begin(), chips_[c].y.end());
    return (chips_[c].*tensor)[v_in].v;
  };
  d.output = [this, tensor, v_in, dim, axes](int c, const std::vector<double>& v) {
    const Matrix& in = (chips_[c].*tensor)[v_in];
    Matrix& out = (chips_[c].*tensor)[v_in + 1];
    const auto members = group(c, axes);
    const std::uint64_t blk = in.rows * in.cols;
    for (std::size_t p = 0; p < members.size(); ++p) {
      const std::uint64_t pos = index(members[p], axes);
      const std::uint64_t r0 = dim == 0 ? pos * in.rows : 0, c0 = dim == 1 ? pos * in.cols : 0;
      for (std::uint64_t i = 0; i < in.rows; ++i)
        for (std::uint64_t j = 0; j < in.cols; ++j) out.v[(r0 + i) * out.cols + c0 + j] = v[p * blk + i * in.cols + j];
    }
  };
  return d;
}

void ShardedMatmulData::finish_operands() {
  const auto& plan = spec_.plan;
  const bool split = spec_.collective_matmul && plan.before.size() == 1;
  for (auto& ch : chips_) {
    // Operands are read when the first op that uses them runs, after the
    // gathers filled them: convert lazily by keeping the buffers sized now.
    ch.a_local.assign(plan.local_m * plan.local_k, hw::bf16{});
    ch.b_local.assign(plan.local_k * plan.local_n, hw::bf16{});
    ch.y.assign(plan.local_m * plan.local_n, 0.0f);
    if (!split) {
      if (ch.a.size() == 1) ch.a_local = to_bf16(ch.a[0].v);
      if (ch.b.size() == 1) ch.b_local = to_bf16(ch.b[0].v);
    } else {
      const bool a_side = plan.before[0].tensor == "A";
      const Matrix& own = a_side ? ch.a[0] : ch.b[0];
      const Matrix& other = a_side ? ch.b[0] : ch.a[0];
      (a_side ? ch.b_local : ch.a_local) = to_bf16(other.v);
      const std::uint64_t parts = axes_size(plan.before[0].axes, exp_.mesh);
      ch.shards.assign(parts, std::vector<hw::bf16>(own.v.size()));
      ch.shards[0] = to_bf16(own.v);
    }
  }
  if (split) return;
  // Gathered operands land in the last version; the hooks convert them.
  for (std::size_t s = 0; s < before_.size(); ++s) {
    const bool a_side = plan.before[s].tensor == "A";
    const bool last = [&] {
      for (std::size_t t = s + 1; t < plan.before.size(); ++t)
        if (plan.before[t].tensor == plan.before[s].tensor) return false;
      return true;
    }();
    if (!last) continue;
    auto out = before_[s].output;
    before_[s].output = [this, out, a_side](int c, const std::vector<double>& v) {
      out(c, v);
      auto& ch = chips_[c];
      assign_bf16(a_side ? ch.a_local : ch.b_local, (a_side ? ch.a : ch.b).back().v);
    };
  }
}

runtime::CollectiveData ShardedMatmulData::before(std::size_t step) { return before_.at(step); }
runtime::CollectiveData ShardedMatmulData::after(std::size_t step) { return after_.at(step); }

kernels::MatmulData ShardedMatmulData::local(int chip) {
  auto& ch = chips_[chip];
  return kernels::MatmulData{ch.a_local.data(), ch.b_local.data(), ch.y.data(), 0, 0, 0};
}

kernels::MatmulData ShardedMatmulData::split_step(int chip, std::uint64_t j) {
  const auto& plan = spec_.plan;
  const ShardingStep& g = plan.before[0];
  auto& ch = chips_[chip];
  const auto members = group(chip, g.axes);
  const std::uint64_t parts = members.size();
  const std::uint64_t rank = std::find(members.begin(), members.end(), chip) - members.begin();
  // After j permutes to the next rank, the shard here came from rank - j.
  const std::uint64_t pos = index(members[(rank + parts - j % parts) % parts], g.axes);
  const std::uint64_t m = plan.local_m, k = plan.local_k, n = plan.local_n;
  kernels::MatmulData d{ch.a_local.data(), ch.b_local.data(), ch.y.data(), k, n, n};
  const hw::bf16* shard = ch.shards[j].data();
  if (g.tensor == "A" && g.dim == 1) {
    d.a = shard, d.lda = k / parts, d.b += pos * (k / parts) * n;
  } else if (g.tensor == "A") {
    d.a = shard, d.y += pos * (m / parts) * n;
  } else if (g.dim == 0) {
    d.b = shard, d.a += pos * (k / parts);
  } else {
    d.b = shard, d.ldb = n / parts, d.y += pos * (n / parts);
  }
  return d;
}

runtime::CollectiveData ShardedMatmulData::permute(std::uint64_t j) {
  runtime::CollectiveData d;
  d.input = [this, j](int c) {
    const auto& s = chips_[c].shards[j];
    std::vector<double> v(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) v[i] = s[i].to_float();
    return v;
  };
  d.output = [this, j](int c, const std::vector<double>& v) { assign_bf16(chips_[c].shards[j + 1], v); };
  return d;
}

ShardedMatmulData::Check ShardedMatmulData::check() const {
  Check r;
  const auto& s = spec_.shape;
  const double u = std::ldexp(1.0, -24);
  const double gamma = (double(s.k) + 2) * u / (1 - (double(s.k) + 2) * u);
  for (int c = 0; c < static_cast<int>(chips_.size()); ++c) {
    const Chip& ch = chips_[c];
    const Matrix& out = ch.c.back();
    const bool from_y = ch.c.size() == 1;
    const std::uint64_t r0 = index(c, out.axes[0]) * out.rows, c0 = index(c, out.axes[1]) * out.cols;
    for (std::uint64_t i = 0; i < out.rows; ++i)
      for (std::uint64_t j = 0; j < out.cols; ++j) {
        double exact = 0, mag = 0;
        for (std::uint64_t p = 0; p < s.k; ++p) {
          const double prod = a_full_[(r0 + i) * s.k + p] * b_full_[p * s.n + c0 + j];
          exact += prod;
          mag += std::fabs(prod);
        }
        const double got = from_y ? double(ch.y[i * out.cols + j]) : out.v[i * out.cols + j];
        const double err = std::fabs(got - exact);
        r.max_abs_error = std::max(r.max_abs_error, err);
        if (!(err <= gamma * mag)) r.matches = false;
      }
  }
  return r;
}

}  // namespace workloads
