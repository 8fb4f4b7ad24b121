#include "interconnect/algorithms.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "interconnect/passes.h"

namespace interconnect {

namespace {

class Planner {
 public:
  Planner(const Topology& topology, const LinkConfig& link, const CollectiveSpec& spec, CollectivePlan& plan, bool all)
      : topo_(topology), link_(link), spec_(spec), plan_(plan), all_(all) {
    for (const AxisPart& a : plan_.axes) {
      if (a.size > 1) axes_.push_back(a);
    }
  }

  void plan_group(const std::vector<int>& group) {
    n_ = static_cast<int>(group.size());
    group_ = &group;
    if (n_ == 1 && plan_.op != CollectiveOp::permute) return;  // nothing to exchange
    switch (plan_.op) {
      case CollectiveOp::all_reduce:
      case CollectiveOp::reduce_scatter:
      case CollectiveOp::all_gather:
        if (plan_.algorithm == Algorithm::torus) {
          plan_torus();
        } else {
          plan_ring(plan_.algorithm == Algorithm::bidirectional_ring);
        }
        return;
      case CollectiveOp::all_to_all:
        if (plan_.algorithm == Algorithm::dimension_ordered) {
          plan_all_to_all_dimension_ordered();
        } else {
          plan_all_to_all();
        }
        return;
      case CollectiveOp::permute: plan_permute(); return;
      case CollectiveOp::broadcast: plan_broadcast(plan_.algorithm == Algorithm::bidirectional_ring); return;
    }
  }

 private:
  bool does_rs() const { return plan_.op != CollectiveOp::all_gather; }
  bool does_ag() const { return plan_.op != CollectiveOp::reduce_scatter; }
  bool shards() const { return plan_.op != CollectiveOp::all_reduce; }
  std::uint64_t shard() const { return plan_.elements / static_cast<std::uint64_t>(n_); }

  // The group's chips in snake (boustrophedon) order over its axes, so that
  // consecutive chips are neighbours (over part of a physical axis, a
  // stride apart: the message is routed over the links between); with even
  // sizes the last is also a neighbour of the first where the outermost
  // axis wraps (else the closing message is routed back along the line).
  ChipList snake() {
    std::vector<std::vector<int>> order{{}};
    for (const AxisPart& a : axes_) {
      std::vector<std::vector<int>> next;
      for (int t = 0; t < a.size; ++t) {
        const bool reverse = t % 2 == 1;
        for (std::size_t i = 0; i < order.size(); ++i) {
          std::vector<int> c = order[reverse ? order.size() - 1 - i : i];
          c.push_back(t);
          next.push_back(std::move(c));
        }
      }
      order = std::move(next);
    }
    auto chips = std::make_shared<std::vector<int>>();
    const std::vector<int> base = topo_.coords(group_->front());
    for (const auto& tuple : order) {
      std::vector<int> c = base;
      for (std::size_t i = 0; i < axes_.size(); ++i) axes_[i].set_digit(c, tuple[i]);
      chips->push_back(topo_.chip_at(c));
    }
    return chips;
  }

  // The chips along `part` through `chip`, by coordinate; shared by all of them.
  ChipList line(const AxisPart& part, int chip) {
    std::vector<int> c = topo_.coords(chip);
    part.set_digit(c, 0);
    const auto key = std::make_tuple(part.axis, part.stride, topo_.chip_at(c));
    auto it = lines_.find(key);
    if (it != lines_.end()) return it->second;
    auto chips = std::make_shared<std::vector<int>>();
    for (int t = 0; t < part.size; ++t) {
      part.set_digit(c, t);
      chips->push_back(topo_.chip_at(c));
    }
    lines_.emplace(key, chips);
    return chips;
  }

  std::vector<Stream>& streams(int chip) { return plan_.chips[chip].streams; }
  bool kept(int chip) const { return all_ || plan_.planned(topo_, chip); }

  // Shard-shaped ops: logical block b holds `piece` elements of the shard of
  // block_owner[b], starting `piece_offset` into that shard.
  LayoutMap shard_layout(const std::vector<int>& block_owner, Region piece) const {
    LayoutMap m;
    if (!spec_.functional) return m;
    auto table = std::make_shared<std::vector<std::uint64_t>>();
    for (int chip : block_owner) table->push_back(plan_.rank[chip] * shard() + piece.offset);
    m.block = piece.count;
    m.blocks = table;
    return m;
  }

  void plan_ring(bool both_ways) {
    const ChipList ring = snake();
    const int parts = both_ways ? 2 : 1;
    for (int part = 0; part < parts; ++part) {
      const int dir = part == 0 ? +1 : -1;
      Region region;
      LayoutMap layout;
      if (shards()) {
        const Region piece = Region{0, shard()}.chunk(part, parts);
        if (piece.count == 0) continue;
        region = {0, piece.count * n_};
        layout = shard_layout(*ring, piece);
      } else {
        region = Region{0, plan_.elements}.chunk(part, parts);
        if (region.count == 0) continue;
      }
      for (int p = 0; p < n_; ++p) {
        if (!kept((*ring)[p])) continue;
        Stream s;
        s.layout = layout;
        if (does_rs()) {
          add_phase(s, std::make_shared<RingPass>(PassKind::reduce_scatter, ring, p, dir, region, kGroupRing));
        }
        if (does_ag()) add_phase(s, std::make_shared<RingPass>(PassKind::all_gather, ring, p, dir, region, kGroupRing));
        streams((*ring)[p]).push_back(std::move(s));
      }
    }
  }

  static void add_phase(Stream& s, std::shared_ptr<const Pass> pass) {
    Phase ph;
    ph.passes.push_back(std::move(pass));
    s.phases.push_back(std::move(ph));
  }

  // One phase along `part`: a ring in direction dir where the axis wraps
  // and the part reaches the wraparound link (the whole axis, or its outer
  // factor: chips a stride apart), else the line both ways (an inner or
  // middle factor, whose ring would close back over its own links).
  Phase axis_phase(PassKind kind, const AxisPart& part, int chip, int dir, Region region) {
    Phase ph;
    const ChipList l = line(part, chip);
    const int pos = part.digit(topo_, chip);
    if (topo_.wraps(part.axis) && part.outermost(topo_)) {
      ph.passes.push_back(std::make_shared<RingPass>(kind, l, pos, dir, region, part.axis));
    } else {
      for (int d : {+1, -1}) ph.passes.push_back(std::make_shared<LinePass>(kind, l, pos, d, region, part.axis));
    }
    return ph;
  }

  // Across slices the algorithm is hierarchical: every stream reduce-scatters
  // along its ICI axes first, so only each chip's shard crosses DCN (a ring
  // per DCN axis, last in every stream's order), and all-gathers along the
  // ICI axes last.
  void plan_torus() {
    std::vector<AxisPart> ici, dcn;
    for (const AxisPart& a : axes_) (topo_.is_dcn_axis(a.axis) ? dcn : ici).push_back(a);
    const int rotations = std::max<int>(1, static_cast<int>(ici.size()));
    const int k = static_cast<int>(axes_.size());
    const int parts = 2 * rotations;
    for (int j = 0; j < rotations; ++j) {
      std::vector<AxisPart> order;  // axes in the order this stream reduce-scatters along them
      for (std::size_t m = 0; m < ici.size(); ++m) order.push_back(ici[(j + m) % ici.size()]);
      order.insert(order.end(), dcn.begin(), dcn.end());
      for (int dir : {+1, -1}) {
        const int part = 2 * j + (dir > 0 ? 0 : 1);
        Region whole;
        LayoutMap layout;
        if (shards()) {
          const Region piece = Region{0, shard()}.chunk(part, parts);
          if (piece.count == 0) continue;
          whole = {0, piece.count * n_};
          layout = shard_layout(nested_order(order), piece);
        } else {
          whole = Region{0, plan_.elements}.chunk(part, parts);
          if (whole.count == 0) continue;
        }
        for (int chip : *group_) {
          if (!kept(chip)) continue;
          Stream s;
          s.layout = layout;
          s.phases.reserve(static_cast<std::size_t>((does_rs() ? k : 0) + (does_ag() ? k : 0)));
          std::vector<Region> before;  // the region each reduce-scatter phase starts from
          Region r = whole;
          for (const AxisPart& axis : order) {
            before.push_back(r);
            r = r.chunk(axis.digit(topo_, chip), axis.size);
          }
          if (does_rs()) {
            for (int m = 0; m < k; ++m) {
              s.phases.push_back(axis_phase(PassKind::reduce_scatter, order[m], chip, dir, before[m]));
            }
          }
          if (does_ag()) {
            for (int m = k - 1; m >= 0; --m) {
              s.phases.push_back(axis_phase(PassKind::all_gather, order[m], chip, dir, before[m]));
            }
          }
          streams(chip).push_back(std::move(s));
        }
      }
    }
  }

  // The group's chips by their nested index over `order` (first axis most
  // significant): the logical block each owns after reduce-scattering in that
  // order.
  std::vector<int> nested_order(const std::vector<AxisPart>& order) const {
    std::vector<int> owner(n_);
    for (int chip : *group_) {
      std::uint64_t b = 0;
      for (const AxisPart& axis : order) b = b * axis.size + axis.digit(topo_, chip);
      owner[b] = chip;
    }
    return owner;
  }

  // Elements the chip `from` sends the chip `to` in an all_to_all.
  std::uint64_t block(int from, int to) const {
    const std::vector<std::uint64_t>& blocks = spec_.pair_elements;  // empty: a shard each
    return blocks.empty() ? shard()
                          : blocks[std::size_t(plan_.rank[from]) * std::size_t(n_) + std::size_t(plan_.rank[to])];
  }

  void plan_all_to_all() {
    const std::uint64_t s = shard();
    for (int chip : *group_) {
      Step step;
      for (int peer : *group_) {
        if (peer == chip) continue;
        // Sends the block meant for peer; receives peer's block for this chip
        // into peer's slot. Both sit at the peer's rank (with unequal
        // blocks, timing only, the offsets are not used). An empty block
        // is no message.
        const std::uint64_t at = plan_.rank[peer] * s;
        if (const std::uint64_t out = block(chip, peer)) step.sends.push_back({peer, 0, at, out});
        if (const std::uint64_t in = block(peer, chip)) step.recvs.push_back({peer, 0, at, in});
      }
      Stream st;
      std::vector<Step> steps;
      steps.push_back(std::move(step));
      add_phase(
          st, std::make_shared<ListPass>(std::move(steps), "direct all-to-all among " + std::to_string(n_) + " chips"));
      streams(chip).push_back(std::move(st));
    }
  }

  // Dimension-ordered (hierarchical) all-to-all: one phase per axis of the
  // group, in the group's axis order; phase m is a direct all-to-all among
  // the chips of each line along axis m. Before phase m a chip holds the
  // blocks whose source has its coordinates on axes m, m+1, ... and whose
  // destination has its coordinates on axes 0 .. m-1; it sends each line
  // peer, as one message, every block whose destination has that peer's
  // coordinate on axis m. So a block moves along one axis per phase, in
  // dimension order like a routed message, but is stored at every turn and
  // forwarded in the next phase, which starts when the chip's previous
  // phase has ended. The per-peer sums follow each block (source, destination)
  // from holder to holder: O(n^2 k) per group.
  void plan_all_to_all_dimension_ordered() {
    const int k = static_cast<int>(axes_.size());
    std::vector<std::vector<int>> coords;
    for (int chip : *group_) coords.push_back(topo_.coords(chip));
    const auto digit = [&](const std::vector<int>& c, const AxisPart& p) { return (c[p.axis] / p.stride) % p.size; };
    // out[m][rank x size(axis m) + c]: elements the chip of that rank sends,
    // in phase m, to the chip of its line whose coordinate on axis m is c.
    std::vector<std::vector<std::uint64_t>> out(k);
    for (int m = 0; m < k; ++m) out[m].assign(std::size_t(n_) * std::size_t(axes_[m].size), 0);
    std::vector<int> at;  // the block's holder
    for (int from = 0; from < n_; ++from) {
      for (int to = 0; to < n_; ++to) {
        const std::uint64_t b = block((*group_)[from], (*group_)[to]);
        if (b == 0 || from == to) continue;
        at = coords[from];
        for (int m = 0; m < k; ++m) {
          const AxisPart& axis = axes_[m];
          const int dest = digit(coords[to], axis);
          if (digit(at, axis) == dest) continue;
          out[m][std::size_t(plan_.rank[topo_.chip_at(at)]) * std::size_t(axis.size) + std::size_t(dest)] += b;
          axis.set_digit(at, dest);
        }
      }
    }
    for (int chip : *group_) {
      Stream st;
      for (int m = 0; m < k; ++m) {
        const AxisPart& axis = axes_[m];
        const int size = axis.size, pos = axis.digit(topo_, chip);
        const ChipList l = line(axis, chip);
        const auto sent = [&](int sender, int c) {
          return out[m][std::size_t(plan_.rank[sender]) * std::size_t(size) + std::size_t(c)];
        };
        Step step;
        for (int c = 0; c < size; ++c) {
          const int peer = (*l)[c];
          if (peer == chip) continue;
          // Timing only (CollectiveSpec::validate), so no offsets; an empty
          // aggregate is no message.
          if (const std::uint64_t n = sent(chip, c)) step.sends.push_back({peer, 0, 0, n});
          if (const std::uint64_t n = sent(peer, pos)) step.recvs.push_back({peer, 0, 0, n});
        }
        std::vector<Step> steps;
        steps.push_back(std::move(step));
        add_phase(st, std::make_shared<ListPass>(
                          std::move(steps), "dimension-ordered all-to-all, phase " + std::to_string(m + 1) + " of " +
                                                std::to_string(k) + ": along " + topo_.axis_name(axis.axis) +
                                                " among " + std::to_string(size) + " chips"));
      }
      streams(chip).push_back(std::move(st));
    }
  }

  void plan_permute() {
    std::vector<std::pair<int, int>> pairs = spec_.pairs;
    if (pairs.empty()) {
      for (int i = 0; i < n_; ++i) pairs.emplace_back(i, (i + 1) % n_);
    }
    std::vector<Step> step(n_);
    for (const auto& [src, dst] : pairs) {
      const int from = (*group_)[src], to = (*group_)[dst];
      plan_.receives[to] = 1;
      if (from == to) continue;  // stays in place: nothing crosses a link
      step[src].sends.push_back({to, 0, 0, plan_.elements});
      step[dst].recvs.push_back({from, 0, 0, plan_.elements});
    }
    for (int i = 0; i < n_; ++i) {
      Stream st;
      std::vector<Step> steps;
      steps.push_back(std::move(step[i]));
      add_phase(st, std::make_shared<ListPass>(std::move(steps), "direct permute"));
      streams((*group_)[i]).push_back(std::move(st));
    }
  }

  void plan_broadcast(bool both_ways) {
    const ChipList ring = snake();
    int root_pos = 0;
    while ((*ring)[root_pos] != (*group_)[spec_.root]) ++root_pos;
    const int parts = both_ways ? 2 : 1;
    for (int part = 0; part < parts; ++part) {
      const int dir = part == 0 ? +1 : -1;
      const Region region = Region{0, plan_.elements}.chunk(part, parts);
      if (region.count == 0) continue;
      auto chain = std::make_shared<std::vector<int>>();
      for (int i = 0; i < n_; ++i) chain->push_back((*ring)[((root_pos + dir * i) % n_ + n_) % n_]);
      const int chunks = pipeline_chunks(region.count);
      for (int i = 0; i < n_; ++i) {
        Stream st;
        add_phase(st, std::make_shared<ChainPass>(chain, i, region, chunks));
        streams((*chain)[i]).push_back(std::move(st));
      }
    }
  }

  // A chip forwards piece k-1 while piece k arrives, so a chain of n chips
  // moving B bytes in m pieces takes about (m + n - 2) B / (m W) + (n - 1) L:
  // latency is paid once per hop, and smaller pieces only shorten the fill.
  // Pieces stay at least a packet and at least a bandwidth-latency product
  // (below that a piece is latency-bound), and at most 1024 of them.
  int pipeline_chunks(std::uint64_t elements) const {
    if (spec_.pipeline_chunks > 0) {
      return static_cast<int>(std::min<std::uint64_t>(elements, static_cast<std::uint64_t>(spec_.pipeline_chunks)));
    }
    const double bytes = static_cast<double>(elements) * plan_.element_bytes;
    const double smallest = std::max(static_cast<double>(link_.packet_bytes), link_.bandwidth * link_.latency);
    const double m = std::min({1024.0, static_cast<double>(elements), std::floor(bytes / smallest)});
    return static_cast<int>(std::max(1.0, m));
  }

  const Topology& topo_;
  const LinkConfig& link_;
  const CollectiveSpec& spec_;
  CollectivePlan& plan_;
  bool all_;                    // every chip's schedule (no images_along)
  std::vector<AxisPart> axes_;  // parts of the collective with more than one chip
  const std::vector<int>* group_ = nullptr;
  int n_ = 0;
  std::map<std::tuple<int, int, int>, ChipList> lines_;  // key: axis, stride, first chip
};

}  // namespace

bool CollectivePlan::planned(const Topology& topology, int chip) const {
  return std::all_of(images_along.begin(), images_along.end(), [&](int a) { return topology.coord(chip, a) == 0; });
}

CollectivePlan plan_collective(const Topology& topology, const Mesh& mesh, const LinkConfig& link,
                               const CollectiveSpec& spec, const std::vector<int>& images_along) {
  CollectivePlan plan;
  plan.op = spec.op;
  plan.algorithm = resolve_algorithm(spec.op, spec.algorithm);
  plan.element_bytes = spec.element_bytes;
  plan.functional = spec.functional;
  plan.elements = spec.bytes / static_cast<std::uint64_t>(spec.element_bytes);
  plan.axes = mesh.resolve(spec.axes, "workload.axes");
  plan.groups = chip_groups(topology, plan.axes);
  plan.group_of.assign(topology.chips(), 0);
  plan.rank.assign(topology.chips(), 0);
  plan.receives.assign(topology.chips(), 0);
  plan.chips.resize(topology.chips());
  for (std::size_t g = 0; g < plan.groups.size(); ++g) {
    for (std::size_t i = 0; i < plan.groups[g].size(); ++i) {
      plan.group_of[plan.groups[g][i]] = static_cast<int>(g);
      plan.rank[plan.groups[g][i]] = static_cast<int>(i);
    }
  }
  plan.images_along = images_along;
  const bool all = images_along.empty();
  Planner planner(topology, link, spec, plan, all);
  for (const auto& group : plan.groups)
    if (all || std::any_of(group.begin(), group.end(), [&](int c) { return plan.planned(topology, c); }))
      planner.plan_group(group);
  return plan;
}

std::optional<std::vector<int>> images_along(const Topology& topology, const Mesh& mesh, const CollectiveSpec& spec,
                                             const std::vector<int>& axes) {
  if (spec.functional) return std::nullopt;
  if (spec.op != CollectiveOp::all_reduce && spec.op != CollectiveOp::reduce_scatter &&
      spec.op != CollectiveOp::all_gather)
    return std::nullopt;
  const Algorithm algorithm = resolve_algorithm(spec.op, spec.algorithm);
  const bool torus = algorithm == Algorithm::torus;
  if (!torus && algorithm != Algorithm::ring && algorithm != Algorithm::bidirectional_ring) return std::nullopt;
  std::vector<AxisPart> parts;  // of more than one chip, as the planner keeps them
  for (const AxisPart& a : mesh.resolve(spec.axes, "workload.axes"))
    if (a.size > 1) parts.push_back(a);
  std::uint64_t group = 1;
  int ici = 0;
  for (const AxisPart& a : parts) {
    group *= static_cast<std::uint64_t>(a.size);
    if (!topology.is_dcn_axis(a.axis)) ++ici;
  }
  // The torus all-reduce cuts the buffer into 2 x (ICI axes) streams, each
  // then along the group's axes level by level: equal counts everywhere
  // when every stream's part divides by the group. A reduce-scatter's or
  // all-gather's buffer is its shard times the group.
  bool even = spec.op != CollectiveOp::all_reduce;
  if (!even) {
    const std::uint64_t elements = spec.bytes / static_cast<std::uint64_t>(spec.element_bytes);
    const std::uint64_t streams = 2 * static_cast<std::uint64_t>(std::max(1, ici));
    const std::uint64_t q = elements / streams;
    even = q % group == 0 && (elements % streams == 0 || (q + 1) % group == 0);
  }
  std::vector<int> out;
  for (const int axis : axes) {
    if (!topology.wraps(axis)) return std::nullopt;
    int on_axis = 0;
    bool whole = true;
    for (const AxisPart& a : parts)
      if (a.axis == axis) {
        ++on_axis;
        whole = whole && a.whole(topology);
      }
    if (on_axis == 0) {
      out.push_back(axis);
      continue;
    }
    // A ring through the whole group (a snake over its axes) is no image of
    // itself under a shift along one of them; a part of an axis runs as a
    // line (or a ring of parts) whose places a shift does not keep.
    if (!torus || on_axis > 1 || !whole) return std::nullopt;
    if (even) out.push_back(axis);
  }
  return out;
}

}  // namespace interconnect
