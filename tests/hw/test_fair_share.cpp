#include <algorithm>
#include <catch2/catch.hpp>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "hw/fair_share.h"

namespace test_fair_share {

using hw::FairShare;

namespace {

struct Arrival {
  FairShare::Tick at;
  double amount;
};

// Completion times under processor sharing computed the textbook way: keep
// every flow's remaining work and step from event to event (next arrival or
// next flow to empty), serving each active flow at capacity / n in between.
// Nothing here uses finish tags.
std::vector<double> ps_by_remaining_work(double capacity, const std::vector<Arrival>& arrivals) {
  std::vector<double> done(arrivals.size(), -1.0);
  std::map<std::size_t, double> remaining;  // active flows
  std::size_t next = 0;                     // arrivals are sorted by time
  double t = 0.0;
  while (next < arrivals.size() || !remaining.empty()) {
    const double t_arrival =
        next < arrivals.size() ? static_cast<double>(arrivals[next].at) : std::numeric_limits<double>::infinity();
    double t_empty = std::numeric_limits<double>::infinity();
    const double rate = remaining.empty() ? 0.0 : capacity / static_cast<double>(remaining.size());
    for (const auto& [id, left] : remaining) t_empty = std::min(t_empty, t + left / rate);
    const double t_next = std::min(t_arrival, t_empty);
    for (auto& [id, left] : remaining) left -= (t_next - t) * rate;
    t = t_next;
    for (auto it = remaining.begin(); it != remaining.end();) {
      if (it->second <= 1e-9 * arrivals[it->first].amount) {
        done[it->first] = t;
        it = remaining.erase(it);
      } else {
        ++it;
      }
    }
    while (next < arrivals.size() && static_cast<double>(arrivals[next].at) <= t) {
      remaining[next] = arrivals[next].amount;
      ++next;
    }
  }
  return done;
}

// Drives the server the way a SystemC unit does: an event at every arrival
// and at every next_completion(); returns the tick each flow was reported.
std::vector<FairShare::Tick> drive(FairShare& s, const std::vector<Arrival>& arrivals) {
  std::vector<FairShare::Tick> done(arrivals.size(), 0);
  std::size_t next = 0;
  while (next < arrivals.size() || s.pending()) {
    const FairShare::Tick t_completion =
        s.pending() ? s.next_completion() : std::numeric_limits<FairShare::Tick>::max();
    if (next < arrivals.size() && arrivals[next].at < t_completion) {
      s.add(arrivals[next].at, arrivals[next].amount, next);
      ++next;
    } else {
      for (FairShare::FlowId id : s.finish(t_completion)) done[id] = t_completion;
    }
  }
  return done;
}

}  // namespace

TEST_CASE("fair share: a lone flow gets the whole capacity", "[fair]") {
  FairShare s(0.25);
  s.add(10, 1000.0, 7);
  REQUIRE(s.next_completion() == 10 + 4000);
  CHECK(s.finish(4009).empty());
  CHECK(s.finish(4010) == std::vector<FairShare::FlowId>{7});
  CHECK_FALSE(s.pending());
  CHECK(s.busy_ticks() == Approx(4000.0));
  CHECK(s.served() == Approx(1000.0));
}

TEST_CASE("fair share: staggered flows follow a hand-computed timeline", "[fair]") {
  // Capacity 1 per tick. A(100) at 0, B(50) at 20, C(30) at 40.
  //   0..20   A alone            -> A 80 left
  //   20..40  A,B at 1/2         -> A 70, B 40
  //   40..130 A,B,C at 1/3       -> C done at 130 (30*3), A 40, B 10
  //   130..150 A,B at 1/2        -> B done at 150, A 30
  //   150..180 A alone           -> A done at 180 (= total work 180)
  FairShare s(1.0);
  s.add(0, 100.0, 0);
  CHECK(s.next_completion() == 100);
  s.add(20, 50.0, 1);
  s.add(40, 30.0, 2);
  CHECK(s.next_completion() == 130);
  CHECK(s.finish(130) == std::vector<FairShare::FlowId>{2});
  CHECK(s.next_completion() == 150);
  CHECK(s.finish(150) == std::vector<FairShare::FlowId>{1});
  CHECK(s.next_completion() == 180);
  CHECK(s.finish(180) == std::vector<FairShare::FlowId>{0});
  CHECK(s.busy_ticks() == Approx(180.0));
  CHECK(s.served() == Approx(180.0));
}

TEST_CASE("fair share: a late finish() still changes rates at each completion", "[fair]") {
  // Same flows as the timeline above, but nobody wakes the server until 1000.
  FairShare s(1.0);
  s.add(0, 100.0, 0);
  s.add(20, 50.0, 1);
  s.add(40, 30.0, 2);
  CHECK(s.finish(1000) == std::vector<FairShare::FlowId>{2, 1, 0});
  CHECK(s.busy_ticks() == Approx(180.0));  // idle after 180, not busy until 1000
  // The server is empty again; a new flow is timed from its own arrival.
  s.add(2000, 10.0, 3);
  CHECK(s.next_completion() == 2010);
}

TEST_CASE("fair share: equal flows started together finish together", "[fair]") {
  FairShare s(3.0);
  for (FairShare::FlowId id = 0; id < 3; ++id) s.add(5, 300.0, id);
  REQUIRE(s.next_completion() == 5 + 300);  // 900 units of work at 3 per tick
  CHECK(s.finish(305).size() == 3);
}

TEST_CASE("fair share: simultaneous flows match the sorted-sizes closed form", "[fair]") {
  // n flows from t=0, sizes w1 <= ... <= wn: the k-th ends at
  // (w1 + ... + w(k-1) + (n-k+1) wk) / C, since until then everyone active
  // has received wk each.
  std::mt19937_64 rng(11);
  for (int round = 0; round < 50; ++round) {
    const double capacity = std::uniform_real_distribution<double>(0.1, 4.0)(rng);
    const std::size_t n = 1 + rng() % 8;
    std::vector<double> w(n);
    for (double& x : w) x = std::uniform_real_distribution<double>(1.0, 5000.0)(rng);
    FairShare s(capacity);
    for (std::size_t i = 0; i < n; ++i) s.add(0, w[i], i);
    std::vector<FairShare::Tick> got(n);
    while (s.pending()) {
      const FairShare::Tick t = s.next_completion();
      for (FairShare::FlowId id : s.finish(t)) got[id] = t;
    }
    std::vector<double> sorted = w;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t k =
          static_cast<std::size_t>(std::lower_bound(sorted.begin(), sorted.end(), w[i]) - sorted.begin());
      double before = 0.0;
      for (std::size_t j = 0; j < k; ++j) before += sorted[j];
      const double expect = (before + static_cast<double>(n - k) * w[i]) / capacity;
      // Completions are whole ticks, rounded up (less a 1e-3 tick slack).
      CHECK(static_cast<double>(got[i]) >= expect - 2e-3);
      CHECK(static_cast<double>(got[i]) < expect + 1.0);
    }
  }
}

TEST_CASE("fair share: random staggered flows match a remaining-work simulation", "[fair]") {
  std::mt19937_64 rng(5);
  for (int round = 0; round < 200; ++round) {
    const double capacity = std::uniform_real_distribution<double>(0.05, 2.0)(rng);
    const std::size_t n = 1 + rng() % 10;
    std::vector<Arrival> arrivals(n);
    for (Arrival& a : arrivals) {
      a.at = rng() % 5000;
      a.amount = std::uniform_real_distribution<double>(1.0, 2000.0)(rng);
    }
    std::sort(arrivals.begin(), arrivals.end(), [](const Arrival& a, const Arrival& b) { return a.at < b.at; });
    FairShare s(capacity);
    const std::vector<FairShare::Tick> got = drive(s, arrivals);
    const std::vector<double> expect = ps_by_remaining_work(capacity, arrivals);
    double work = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      work += arrivals[i].amount;
      // Reported at the first whole tick at or after the exact completion
      // (less the server's 1e-3 tick slack); the server keeps fractional
      // time inside, so rounding never piles up.
      CHECK(static_cast<double>(got[i]) >= expect[i] - 2e-3);
      CHECK(static_cast<double>(got[i]) < expect[i] + 1.0);
    }
    CHECK(s.served() == Approx(work));
  }
}

}  // namespace test_fair_share
