#pragma once
// Collectives replayed instead of simulated again. The network model is
// time-invariant: a collective that starts on a quiet network, with every
// participant joining at the same instant, and that nothing else disturbs
// until it ends, takes the same course whenever it starts. A data-parallel
// step all-reduces one gradient bucket per layer, most of them the same
// size, one after another; across a 4096-chip torus each costs millions of
// network events. The first of each kind is simulated and recorded (each
// chip's end time relative to the start, and the traffic it put on every
// link); later identical ones are replayed from the record.
//
// Only for collectives that all their participants join at once, which is
// what one representative chip per group of replicas does (pod_runtime.h).
// If another collective starts while a replayed one would still be running,
// the replay was not faithful: conflict() says so and the caller simulates
// again without replays.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "interconnect/collective.h"
#include "interconnect/collective_spec.h"
#include "interconnect/network.h"
#include "interconnect/reduction.h"

namespace runtime {

// The same key for collectives whose plans are equal.
std::string collective_key(const interconnect::CollectiveSpec& spec);

// The pod's collectives: each simulated by an interconnect::Collective made
// when it is first needed, or replayed.
class PodCollectives : public interconnect::NetworkClient {
 public:
  // plans[i] is pod collective i's plan, made from specs[i] (equal plans
  // may be one object), and keys[i] its collective_key (what its replays are
  // found by; the caller made it to share the plans). With `replays` false
  // every collective is simulated.
  // sparsecore: what the collectives offloaded to the SparseCores
  // (CollectiveSpec::sparsecore) reduce on; the others reduce on `reduction`.
  PodCollectives(interconnect::Network& net, interconnect::ReductionModel& reduction,
                 interconnect::ReductionModel& sparsecore,
                 std::vector<std::shared_ptr<const interconnect::CollectivePlan>> plans,
                 const std::vector<interconnect::CollectiveSpec>& specs, std::vector<std::string> keys, bool replays);
  ~PodCollectives() override;

  std::size_t size() const { return plans_.size(); }
  const interconnect::CollectivePlan& plan(std::size_t i) const { return *plans_[i]; }
  // The simulation of collective i (made now if need be); for functional
  // inputs and outputs.
  interconnect::Collective& simulated(std::size_t i);
  // One line per unfinished part of a simulated collective, at most
  // `max_lines`; `total` gets how many there are in all.
  std::vector<std::string> pending(std::size_t max_lines, std::size_t& total) const;

  // Chips `members` join collective i now, all at once; on_done runs when
  // the last of them has finished its part.
  void join(std::size_t i, const std::vector<int>& members, std::function<void()> on_done);
  // Collective i is joined by `chips` chips in all: once they have finished,
  // its simulation is freed and only their end times are kept (a pipelined
  // step has tens of thousands of collectives, each sized for the pod).
  // Functional collectives are kept for their outputs.
  void expect(std::size_t i, std::size_t chips);

  bool conflict() const { return conflict_; }
  std::size_t replayed() const { return replayed_; }

  // Collective i, simulated, replayed or freed: when it ended, and the
  // chips that finished their part of it, in chip order, and when (with
  // translations, every chip of an orbit when its orbit chip did).
  interconnect::Ps end_time(std::size_t i) const;
  std::vector<std::pair<int, interconnect::Ps>> finish_times(std::size_t i) const;
  // The same for the chips simulated only (with translations, the orbit chips).
  std::vector<std::pair<int, interconnect::Ps>> simulated_finish_times(std::size_t i) const;

  void on_timer(std::uint64_t cookie) override;

 private:
  struct Record {
    // The chips that took part and their ends after the start, by chip.
    std::vector<std::pair<int, interconnect::Ps>> finished;
    interconnect::Ps span = 0;  // the last chip's end after the start
    interconnect::Traffic traffic;
    std::vector<interconnect::LinkRateChange> rates;  // after the start (Network::log_link_rates)
  };
  struct Joined {  // members of one join that have not finished yet
    std::size_t members = 0;
    std::size_t left = 0;
    std::function<void()> on_done;
  };
  struct Recording {  // a collective being simulated that may become a record
    interconnect::Ps start = 0;
    std::uint64_t joins_at_start = 0;
    interconnect::Traffic traffic_at_start;
    std::size_t rates_at_start = 0;
  };
  struct Replay {
    const Record* record = nullptr;
    interconnect::Ps start = 0;
  };

  struct Done {                                              // a freed simulation's results
    std::vector<std::pair<int, interconnect::Ps>> finished;  // in chip order
    interconnect::Ps end = 0;
  };

  bool all_participants_in(std::size_t i, const std::vector<int>& members) const;
  void recorded(std::size_t i);
  void member_finished(std::size_t i);
  const Done* done(std::size_t i) const { return done_.empty() ? nullptr : done_[i].get(); }

  interconnect::Network& net_;
  interconnect::ReductionModel& reduction_;
  interconnect::ReductionModel& sparsecore_;
  std::vector<std::shared_ptr<const interconnect::CollectivePlan>> plans_;
  std::vector<interconnect::CollectiveSpec> specs_;
  std::vector<std::string> keys_;
  std::vector<std::vector<int>> orbits_;  // with translations: per orbit chip, its orbit's chips in order
  bool enabled_;
  std::vector<std::unique_ptr<interconnect::Collective>> colls_;  // null until simulated
  std::map<std::string, Record> records_;
  std::vector<std::unique_ptr<Recording>> recording_;  // per collective
  std::vector<Replay> replays_;                        // per collective; record == nullptr: simulated
  std::vector<std::function<void()>> pending_;         // on_done of replays, by timer cookie
  std::uint64_t joins_ = 0;
  std::vector<std::size_t> expected_, finished_;  // per collective: chips that join it, and that finished
  std::vector<std::unique_ptr<Done>> done_;       // per collective (empty until expect): null while not freed
  std::vector<std::unique_ptr<interconnect::Collective>> retired_;  // freed at the next join
  int joining_ = 0;                                                 // join calls under way
  interconnect::Ps busy_until_ = 0;                                 // the end of the latest replay
  bool conflict_ = false;
  std::size_t replayed_ = 0;
};

}  // namespace runtime
