#include "runtime/collective_replay.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>

namespace runtime {

using interconnect::Ps;

// Collectives with equal specs have equal plans (planning is deterministic).
// Built twice per collective of a step (plan_cover, elaborate, whose keys
// the replays reuse), so numbers are written in place rather than through
// std::to_string temporaries.
std::string collective_key(const interconnect::CollectiveSpec& s) {
  std::string k;
  k.reserve(96);
  const auto number = [&k](auto v, char then) {
    char buf[24];
    k.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
    k += then;
  };
  k += interconnect::to_string(s.op);
  k += '|';
  k += interconnect::to_string(s.algorithm);
  k += '|';
  number(s.bytes, '|');
  number(s.element_bytes, '|');
  number(s.root, '|');
  number(s.pipeline_chunks, '|');
  for (const auto& a : s.axes) {
    k += a;
    k += ',';
  }
  k += '|';
  for (const auto& [from, to] : s.pairs) {
    number(from, '>');
    number(to, ',');
  }
  k += '|';
  for (const auto e : s.pair_elements) number(e, ',');
  if (s.functional) k += "|functional";
  if (s.sparsecore) k += "|sparsecore";
  return k;
}

PodCollectives::PodCollectives(interconnect::Network& net, interconnect::ReductionModel& reduction,
                               interconnect::ReductionModel& sparsecore,
                               std::vector<std::shared_ptr<const interconnect::CollectivePlan>> plans,
                               const std::vector<interconnect::CollectiveSpec>& specs, std::vector<std::string> keys,
                               bool replays)
    : net_(net),
      reduction_(reduction),
      sparsecore_(sparsecore),
      plans_(std::move(plans)),
      specs_(specs),
      keys_(std::move(keys)),
      enabled_(replays),
      colls_(plans_.size()),
      recording_(plans_.size()),
      replays_(plans_.size()) {
  const interconnect::Translations& t = net_.translations();
  if (!t.none()) {
    orbits_.resize(net_.topology().chips());
    for (int c = 0; c < net_.topology().chips(); ++c) orbits_[t.rep(c)].push_back(c);
  }
}

// Collectives go before the network they were made for.
PodCollectives::~PodCollectives() = default;

interconnect::Collective& PodCollectives::simulated(std::size_t i) {
  if (!colls_[i])
    colls_[i] = std::make_unique<interconnect::Collective>(net_, specs_[i].sparsecore ? sparsecore_ : reduction_,
                                                           plans_[i], specs_[i].functional, static_cast<int>(i));
  return *colls_[i];
}

std::vector<std::string> PodCollectives::pending(std::size_t max_lines, std::size_t& total) const {
  std::vector<std::string> out;
  total = 0;
  for (const auto& c : colls_)
    if (c)
      for (auto& line : c->pending(max_lines - std::min(max_lines, out.size()), &total)) out.push_back(std::move(line));
  return out;
}

bool PodCollectives::all_participants_in(std::size_t i, const std::vector<int>& members) const {
  const interconnect::Translations& t = net_.translations();
  std::size_t participants = 0;
  for (const auto& g : plans_[i]->groups)
    for (int c : g) {
      if (!t.is_rep(c)) continue;  // its orbit chip takes part for it
      ++participants;
      if (!std::binary_search(members.begin(), members.end(), c)) return false;
    }
  return participants == members.size();
}

void PodCollectives::expect(std::size_t i, std::size_t chips) {
  if (expected_.empty()) {
    expected_.assign(plans_.size(), 0);
    finished_.assign(plans_.size(), 0);
    done_.resize(plans_.size());
  }
  expected_.at(i) = chips;
}

// A member of collective i finished: once all have, its results are kept
// and its simulation retired (it is still on the call stack; freed at the
// next join).
void PodCollectives::member_finished(std::size_t i) {
  if (expected_.empty() || expected_[i] == 0 || ++finished_[i] < expected_[i] || specs_[i].functional || !colls_[i])
    return;
  const interconnect::Collective& coll = *colls_[i];
  auto d = std::make_unique<Done>();
  d->finished = coll.finish_times();
  d->end = coll.end_time();
  done_[i] = std::move(d);
  retired_.push_back(std::move(colls_[i]));
}

void PodCollectives::join(std::size_t i, const std::vector<int>& members, std::function<void()> on_done) {
  if (joining_ == 0) retired_.clear();
  ++joining_;
  struct Leave {
    int& depth;
    ~Leave() { --depth; }
  } leave{joining_};
  const Ps now = net_.now();
  if (now < busy_until_) conflict_ = true;  // it would have shared the network with a replayed one
  joins_ += members.size();
  const bool alone = enabled_ && !specs_[i].functional && net_.quiet() && all_participants_in(i, members);
  if (alone) {
    auto it = records_.find(keys_[i]);
    if (it != records_.end()) {
      const Record& r = it->second;
      replays_[i] = {&r, now};
      busy_until_ = std::max(busy_until_, now + r.span);
      net_.add_traffic(r.traffic);
      net_.add_link_rates(r.rates, now);
      ++replayed_;
      Ps last = 0;
      for (int m : members) {
        const auto at = std::lower_bound(r.finished.begin(), r.finished.end(), std::pair<int, Ps>{m, 0});
        if (at == r.finished.end() || at->first != m)
          throw std::logic_error("a replayed collective's member left no end");
        last = std::max(last, at->second);  // every member took part (all_participants_in)
      }
      pending_.push_back(std::move(on_done));
      net_.schedule(now + last, this, pending_.size() - 1);
      return;
    }
    auto rec = std::make_unique<Recording>();
    rec->start = now;
    rec->joins_at_start = joins_;
    rec->traffic_at_start = net_.traffic();
    rec->rates_at_start = net_.link_rate_log().size();
    recording_[i] = std::move(rec);
  }
  interconnect::Collective& coll = simulated(i);
  auto joined = std::make_shared<Joined>(Joined{members.size(), members.size(), std::move(on_done)});
  for (int m : members)
    coll.join(m, [this, i, joined] {
      if (--joined->left > 0) return;
      if (recording_[i]) recorded(i);
      for (std::size_t k = 0; k < joined->members; ++k) member_finished(i);
      if (joined->on_done) joined->on_done();
    });
}

// Every member of collective i finished: a record if nothing else joined
// any collective meanwhile.
void PodCollectives::recorded(std::size_t i) {
  std::unique_ptr<Recording> rec = std::move(recording_[i]);
  const interconnect::Collective& coll = *colls_[i];
  if (joins_ != rec->joins_at_start) return;
  Record r;
  // Chips that did not finish are stood for by their orbit chip (translations.h).
  r.finished = coll.finish_times();
  for (auto& [c, at] : r.finished) {
    at -= rec->start;
    r.span = std::max(r.span, at);
  }
  r.traffic = net_.traffic().minus(rec->traffic_at_start);
  const std::vector<interconnect::LinkRateChange>& log = net_.link_rate_log();
  for (std::size_t k = rec->rates_at_start; k < log.size(); ++k) {
    r.rates.push_back(log[k]);
    r.rates.back().at -= rec->start;
  }
  records_.emplace(keys_[i], std::move(r));
}

void PodCollectives::on_timer(std::uint64_t cookie) {
  std::function<void()> done = std::move(pending_.at(cookie));
  if (done) done();
}

Ps PodCollectives::end_time(std::size_t i) const {
  const Replay& r = replays_[i];
  if (r.record) return r.start + r.record->span;
  if (const Done* d = done(i)) return d->end;
  return colls_[i] ? colls_[i]->end_time() : 0;
}

std::vector<std::pair<int, Ps>> PodCollectives::finish_times(std::size_t i) const {
  std::vector<std::pair<int, Ps>> own = simulated_finish_times(i);
  if (orbits_.empty()) return own;
  // Every chip of an orbit finished when its orbit chip did: the orbits of
  // the chips that finished, not every chip of the pod (a pipelined step
  // has tens of thousands of collectives, each joined by one stage).
  std::vector<std::pair<int, Ps>> out;
  for (const auto& [r, when] : own)
    for (const int c : orbits_[r]) out.emplace_back(c, when);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::pair<int, Ps>> PodCollectives::simulated_finish_times(std::size_t i) const {
  if (const Done* d = done(i)) return d->finished;
  const Replay& r = replays_[i];
  if (r.record) {
    std::vector<std::pair<int, Ps>> out = r.record->finished;
    for (auto& f : out) f.second += r.start;
    return out;
  }
  return colls_[i] ? colls_[i]->finish_times() : std::vector<std::pair<int, Ps>>{};
}

}  // namespace runtime
