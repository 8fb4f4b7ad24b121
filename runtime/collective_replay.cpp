#include "runtime/collective_replay.h"

#include <algorithm>
#include <stdexcept>

namespace runtime {

using interconnect::Ps;

// Collectives with equal specs have equal plans (planning is deterministic).
std::string collective_key(const interconnect::CollectiveSpec& s) {
  std::string k = std::string(interconnect::to_string(s.op)) + "|" + interconnect::to_string(s.algorithm) + "|" +
                  std::to_string(s.bytes) + "|" + std::to_string(s.element_bytes) + "|" + std::to_string(s.root) + "|" +
                  std::to_string(s.pipeline_chunks) + "|";
  for (const auto& a : s.axes) k += a + ",";
  k += "|";
  for (const auto& [from, to] : s.pairs) k += std::to_string(from) + ">" + std::to_string(to) + ",";
  return k + (s.functional ? "|functional" : "");
}

PodCollectives::PodCollectives(interconnect::Network& net, interconnect::ReductionModel& reduction,
                               std::vector<std::shared_ptr<const interconnect::CollectivePlan>> plans,
                               const std::vector<interconnect::CollectiveSpec>& specs, bool replays)
    : net_(net),
      reduction_(reduction),
      plans_(std::move(plans)),
      specs_(specs),
      enabled_(replays),
      colls_(plans_.size()),
      recording_(plans_.size()),
      replays_(plans_.size()) {
  for (const auto& s : specs) keys_.push_back(collective_key(s));
}

// Collectives go before the network they were made for.
PodCollectives::~PodCollectives() = default;

interconnect::Collective& PodCollectives::simulated(std::size_t i) {
  if (!colls_[i])
    colls_[i] = std::make_unique<interconnect::Collective>(net_, reduction_, *plans_[i], specs_[i].functional,
                                                           static_cast<int>(i));
  return *colls_[i];
}

std::vector<std::string> PodCollectives::pending() const {
  std::vector<std::string> out;
  for (const auto& c : colls_)
    if (c)
      for (auto& line : c->pending()) out.push_back(std::move(line));
  return out;
}

bool PodCollectives::all_participants_in(std::size_t i, const std::vector<int>& members) const {
  std::size_t participants = 0;
  for (const auto& g : plans_[i]->groups) {
    participants += g.size();
    for (int c : g)
      if (!std::binary_search(members.begin(), members.end(), c)) return false;
  }
  return participants == members.size();
}

void PodCollectives::join(std::size_t i, const std::vector<int>& members, std::function<void()> on_done) {
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
      ++replayed_;
      Ps last = 0;
      for (int m : members) last = std::max(last, r.offset[m]);
      pending_.push_back(std::move(on_done));
      net_.schedule(now + last, this, pending_.size() - 1);
      return;
    }
    auto rec = std::make_unique<Recording>();
    rec->start = now;
    rec->joins_at_start = joins_;
    rec->traffic_at_start = net_.traffic();
    recording_[i] = std::move(rec);
  }
  interconnect::Collective& coll = simulated(i);
  auto joined = std::make_shared<Joined>(Joined{members.size(), std::move(on_done)});
  for (int m : members)
    coll.join(m, [this, i, joined] {
      if (--joined->left > 0) return;
      if (recording_[i]) recorded(i);
      if (joined->on_done) joined->on_done();
    });
}

// Every member of collective i finished: a record if nothing else joined
// any collective meanwhile.
void PodCollectives::recorded(std::size_t i) {
  std::unique_ptr<Recording> rec = std::move(recording_[i]);
  const interconnect::Collective& coll = *colls_[i];
  if (joins_ != rec->joins_at_start) return;
  const std::size_t chips = coll.plan().group_of.size();
  Record r;
  r.offset.assign(chips, 0);
  r.took_part.assign(chips, 0);
  for (const auto& g : coll.plan().groups)
    for (int c : g) {
      r.took_part[c] = 1;
      r.offset[c] = coll.finish_time(c) - rec->start;
      r.span = std::max(r.span, r.offset[c]);
    }
  r.traffic = net_.traffic().minus(rec->traffic_at_start);
  records_.emplace(keys_[i], std::move(r));
}

void PodCollectives::on_timer(std::uint64_t cookie) {
  std::function<void()> done = std::move(pending_.at(cookie));
  if (done) done();
}

bool PodCollectives::joined(std::size_t i, int c) const {
  if (replays_[i].record) return replays_[i].record->took_part[c] != 0;
  return colls_[i] && colls_[i]->joined(c);
}

bool PodCollectives::finished(std::size_t i, int c) const {
  if (replays_[i].record) return replays_[i].record->took_part[c] != 0;
  return colls_[i] && colls_[i]->finished(c);
}

Ps PodCollectives::finish_time(std::size_t i, int c) const {
  const Replay& r = replays_[i];
  if (r.record) return r.record->took_part[c] ? r.start + r.record->offset[c] : 0;
  return colls_[i] ? colls_[i]->finish_time(c) : 0;
}

Ps PodCollectives::end_time(std::size_t i) const {
  const Replay& r = replays_[i];
  if (r.record) return r.start + r.record->span;
  return colls_[i] ? colls_[i]->end_time() : 0;
}

}  // namespace runtime
