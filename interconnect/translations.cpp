#include "interconnect/translations.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <tuple>

namespace interconnect {

Translations::Translations(const Topology& topology, std::vector<int> axes)
    : axes_(std::move(axes)),
      ici_axes_(topology.ici_axes()),
      chips_(topology.chips()),
      hosts_(topology.hosts()),
      chips_per_host_(topology.chips_per_host()),
      slice_chips_(topology.slice_chips()) {
  for (int a = 0; a < topology.ici_axes(); ++a) {
    shape_.push_back(topology.size(a));
    wraps_.push_back(topology.wraps(a));
  }
  for (const int a : axes_) {
    if (a < 0 || a >= topology.axes() || !topology.wraps(a))
      throw std::invalid_argument("Translations: axis " + std::to_string(a) + " does not wrap");
    if (!hosts_move(topology, a))
      throw std::invalid_argument("Translations: axis " + std::to_string(a) + " does not move hosts onto hosts");
    dcn_.push_back(topology.is_dcn_axis(a));
    if (!dcn_.back()) ici_order_ *= topology.size(a);
    int stride = 1;
    for (int b = 0; b < a; ++b) stride *= topology.size(b);
    size_.push_back(topology.size(a));
    stride_.push_back(stride);
    order_ *= topology.size(a);
  }
  // Only ICI axes leave a fabric share in place (a slice shift moves it).
  if (topology.slices() > 1 && ici_order_ > 1) fabric_base_ = topology.link_slots() - 2 * topology.slices();
}

bool Translations::hosts_move(const Topology& topology, int axis) {
  if (topology.slices() == 1 || topology.is_dcn_axis(axis)) return true;
  int stride = 1;
  for (int b = 0; b < axis; ++b) stride *= topology.size(b);
  return stride % topology.chips_per_host() == 0;
}

std::vector<int> Translations::candidate_axes(const Topology& topology) {
  std::vector<int> axes;
  if (!topology.uniform_links()) return axes;
  for (int a = 0; a < topology.axes(); ++a)
    if (topology.wraps(a) && hosts_move(topology, a)) axes.push_back(a);
  return axes;
}

int Translations::rep(int chip) const {
  int r = chip;
  for (std::size_t i = 0; i < axes_.size(); ++i) r -= (chip / stride_[i]) % size_[i] * stride_[i];
  return r;
}

int Translations::moved(int chip, int from, int to) const { return moved(chip, move(from, to)); }

Translations::Move Translations::move(int from, int to) const {
  Move mv;
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    const int s = size_[i], st = stride_[i];
    int d = to / st % s - from / st % s;
    if (d < 0) d += s;
    mv.by[i] = d;
  }
  return mv;
}

int Translations::moved(int chip, const Move& mv) const {
  int out = chip;
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    const int s = size_[i], st = stride_[i];
    const int c = chip / st % s;
    int m = c + mv.by[i];
    if (m >= s) m -= s;
    out += (m - c) * st;
  }
  return out;
}

int Translations::hops(int a, int b) const {
  if (a / slice_chips_ != b / slice_chips_) return 1;  // one DCN route, whose latency the caller bounds
  int h = 0;
  for (std::size_t axis = 0; axis < shape_.size(); ++axis) {
    const int s = shape_[axis];
    int st = 1;
    for (std::size_t k = 0; k < axis; ++k) st *= shape_[k];
    const int d = std::abs(a / st % s - b / st % s);
    h += wraps_[axis] ? std::min(d, s - d) : d;
  }
  return h;
}

int Translations::link_rep(int link) const {
  const int per_chip = 2 * ici_axes_;
  const int ici_slots = chips_ * per_chip;
  if (link < ici_slots) return rep(link / per_chip) * per_chip + link % per_chip;
  // DCN servers, two per chip, host and slice (Topology::link_slots). A
  // slice shift moves whole hosts and slices: the orbit chip of a host's
  // (a slice's) first chip is the first chip of its orbit host (slice).
  int l = link - ici_slots;
  if (l < 2 * chips_) return ici_slots + 2 * rep(l / 2) + l % 2;
  l -= 2 * chips_;
  if (l < 2 * hosts_) return ici_slots + 2 * chips_ + 2 * (rep(l / 2 * chips_per_host_) / chips_per_host_) + l % 2;
  l -= 2 * hosts_;
  return ici_slots + 2 * (chips_ + hosts_) + 2 * (rep(l / 2 * slice_chips_) / slice_chips_) + l % 2;
}

bool Translations::ties(int src, int dst) const {
  if (src / slice_chips_ != dst / slice_chips_) return false;  // a DCN route has no way round to choose
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    const int s = size_[i], st = stride_[i];
    if (s % 2 != 0 || dcn_[i]) continue;  // a DCN route has no way round to choose
    const int a = src / st % s, b = dst / st % s;
    if ((b - a + s) % s == s / 2) return true;
  }
  return false;
}

namespace {
// A step's transfers start together, so their order within it is no part of
// the schedule: compared as sets of (peer, tag), a's peers moved, with
// their counts. Returns false where they differ in more than counts; else
// the largest count difference, and the longest route of a transfer empty
// on one chip and not on the other (an empty chunk costs no latency).
using Key = std::tuple<int, std::uint32_t, std::uint64_t>;

bool same_step(const Step& a, const Step& b, const Translations& t, int from, const Translations::Move& mv,
               std::uint64_t& uneven, int& hops, std::vector<Key>& x, std::vector<Key>& y) {
  if (a.reduce != b.reduce || a.sends.size() != b.sends.size() || a.recvs.size() != b.recvs.size()) return false;
  uneven = 0;
  hops = 0;
  const int to = t.moved(from, mv);
  const auto same = [&](const std::vector<Transfer>& mine, const std::vector<Transfer>& theirs) {
    if (mine.size() == 1) {  // a ring's step: no sets to sort
      const Transfer &p = mine.front(), &q = theirs.front();
      const int peer = t.moved(p.peer, mv);
      if (peer != q.peer || p.tag != q.tag) return false;
      uneven = std::max(uneven, p.count > q.count ? p.count - q.count : q.count - p.count);
      if ((p.count == 0) != (q.count == 0)) hops = std::max(hops, t.hops(to, peer));
      return true;
    }
    x.clear();
    y.clear();
    for (const Transfer& tr : mine) x.emplace_back(t.moved(tr.peer, mv), tr.tag, tr.count);
    for (const Transfer& tr : theirs) y.emplace_back(tr.peer, tr.tag, tr.count);
    if (x.size() > 1) {
      std::sort(x.begin(), x.end());
      std::sort(y.begin(), y.end());
    }
    for (std::size_t i = 0; i < x.size(); ++i) {
      const auto [p, tag, n] = x[i];
      const auto [q, tag2, m] = y[i];
      if (p != q || tag != tag2) return false;
      uneven = std::max(uneven, n > m ? n - m : m - n);
      if ((n == 0) != (m == 0)) hops = std::max(hops, t.hops(from, p));
    }
    return true;
  };
  return same(a.sends, b.sends) && same(a.recvs, b.recvs);
}
}  // namespace

// Steps compared per plan at most: the check costs a step of every chip,
// about 1/50 of what simulating the step costs, and a ring of 65536 chips
// would be 2^33 of them. Beyond, the plan is simulated chip by chip (and
// under limits.max_wall_time, which the check does not watch).
constexpr std::uint64_t kMaxCheckedSteps = std::uint64_t{1} << 26;

// The steps invariance() would compare: every pass's steps on every chip
// that has a representative. Counted first (a pass knows its step count),
// so a plan beyond the budget is refused at once rather than after 2^26
// comparisons (a 65536-chip ring: 4 s of host time, for nothing).
namespace {
std::uint64_t compared_steps(const CollectivePlan& plan, const Translations& t, const std::vector<char>& compared) {
  std::uint64_t n = 0;
  for (int c = 0; c < static_cast<int>(plan.chips.size()); ++c) {
    if (t.rep(c) != c && compared[c]) n += plan.chips[c].step_count();
  }
  return n;
}
}  // namespace

std::vector<char> Translations::compared_chips(const CollectivePlan& plan) const {
  std::vector<int> at;  // index in axes_ of each of plan.images_along
  for (const int a : plan.images_along) {
    const auto it = std::find(axes_.begin(), axes_.end(), a);
    if (it == axes_.end())
      throw std::logic_error("Translations: the plan leaves out images along axis " + std::to_string(a) +
                             ", which is none of the translations'");
    at.push_back(static_cast<int>(it - axes_.begin()));
  }
  std::vector<char> out(plan.chips.size(), 1);
  if (at.empty()) return out;
  for (std::size_t c = 0; c < out.size(); ++c)
    for (const int i : at)
      if (static_cast<int>(c) / stride_[i] % size_[i] != 0) out[c] = 0;
  return out;
}

Invariance Translations::invariance(const CollectivePlan& plan) const {
  Invariance out;
  if (none()) return out;
  // Chips a step up images_along are their neighbours' images by
  // construction (algorithms.h): only the chips at coordinate 0 there have
  // schedules to compare.
  const std::vector<char> compared = compared_chips(plan);
  if (const std::uint64_t n = compared_steps(plan, *this, compared); n > kMaxCheckedSteps) {
    out.blocker = std::to_string(n) + " steps to compare, more than " + std::to_string(kMaxCheckedSteps);
    return out;
  }
  Step theirs;
  // Per orbit chip, its steps in schedule order, made once: every chip of
  // its orbit is compared with them (4095 chips on a 16x16x16 torus).
  std::map<int, std::vector<Step>> steps_of;
  std::vector<Key> x, y;
  const int chips = static_cast<int>(plan.chips.size());
  // Per orbit chip, per step of its schedule: the largest count difference
  // of any chip of its orbit. A chip's step waits for its peers', which wait
  // for theirs: the differences along any chain of steps add up to at most
  // the sum of each step's worst.
  std::map<int, std::vector<std::pair<std::uint64_t, int>>> worst_of;
  for (int c = 0; c < chips; ++c) {
    const int r = rep(c);
    if (r == c || !compared[c]) continue;
    const auto why = [&](const std::string& what) {
      out.blocker = "chip " + std::to_string(c) + "'s schedule is not chip " + std::to_string(r) + "'s moved: " + what;
      return out;
    };
    const auto& a = plan.chips[r].streams;
    const auto& b = plan.chips[c].streams;
    if (a.size() != b.size()) return why("streams");
    std::vector<std::pair<std::uint64_t, int>>& worst = worst_of[r];
    auto [own, fresh] = steps_of.emplace(r, std::vector<Step>{});
    std::vector<Step>& steps = own->second;
    const Move mv = move(r, c);
    std::size_t slot = 0;  // the step's place in the schedule, the same on every chip of the orbit
    for (std::size_t s = 0; s < a.size(); ++s) {
      if (a[s].phases.size() != b[s].phases.size()) return why("phases");
      for (std::size_t ph = 0; ph < a[s].phases.size(); ++ph) {
        const auto& pa = a[s].phases[ph].passes;
        const auto& pb = b[s].phases[ph].passes;
        if (pa.size() != pb.size()) return why("passes");
        for (std::size_t p = 0; p < pa.size(); ++p) {
          const int count = pa[p]->steps();
          if (count != pb[p]->steps()) return why("steps");
          for (int k = 0; k < count; ++k) {
            if (fresh) {
              steps.emplace_back();
              pa[p]->step(k, steps.back());
            }
            const Step& mine = steps[slot];
            theirs.clear();
            pb[p]->step(k, theirs);
            std::uint64_t d = 0;
            int h = 0;
            if (!same_step(mine, theirs, *this, r, mv, d, h, x, y))
              return why("step " + std::to_string(k) + " of " + pa[p]->describe());
            if (slot >= worst.size()) worst.resize(slot + 1, {0, 0});
            worst[slot].first = std::max(worst[slot].first, d);
            worst[slot].second = std::max(worst[slot].second, h);
            ++slot;
          }
        }
      }
    }
  }
  for (const auto& [r, worst] : worst_of) {
    std::uint64_t elements = 0, hops = 0;
    for (const auto& [d, h] : worst) {
      elements += d;
      hops += static_cast<std::uint64_t>(h);
    }
    out.uneven_bytes = std::max(out.uneven_bytes, elements * static_cast<std::uint64_t>(plan.element_bytes));
    out.uneven_hops = std::max(out.uneven_hops, hops);
  }
  return out;
}

}  // namespace interconnect
