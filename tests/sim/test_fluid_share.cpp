// sim::FluidShare against hand-worked max-min fair allocations, and on
// random networks against the definition of max-min fairness itself: every
// allocation is feasible, and every flow is either at its cap or crosses a
// saturated resource on which no flow gets more than it does (so no rate
// could rise without lowering one that is no larger).
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "sim/fluid_share.h"

namespace test_fluid_share {

using sim::FluidShare;

TEST_CASE("fluid share: flows on one resource split it equally", "[fluid]") {
  FluidShare s;
  const auto hbm = s.add_resource(12.0);
  const auto a = s.start(0, 100, {{hbm}});
  const auto b = s.start(0, 100, {{hbm}});
  const auto c = s.start(0, 100, {{hbm}});
  CHECK(s.settle(0).size() == 3);
  for (auto f : {a, b, c}) CHECK(s.rate(f) == Approx(4.0));
  s.finish(c, 10);
  s.settle(10);
  CHECK(s.rate(a) == Approx(6.0));
  CHECK(s.remaining(a) == Approx(60.0));  // 100 - 4 * 10
}

TEST_CASE("fluid share: the classic two-link case", "[fluid]") {
  // Link 1 (capacity 1) carries A and B, link 2 (capacity 2) carries A and
  // C. Link 1 is the bottleneck: A = B = 0.5; C takes what A leaves of
  // link 2: 1.5.
  FluidShare s;
  const auto l1 = s.add_resource(1.0), l2 = s.add_resource(2.0);
  const auto a = s.start(0, 10, {{l1}, {l2}});
  const auto b = s.start(0, 10, {{l1}});
  const auto c = s.start(0, 10, {{l2}});
  s.settle(0);
  CHECK(s.rate(a) == Approx(0.5));
  CHECK(s.rate(b) == Approx(0.5));
  CHECK(s.rate(c) == Approx(1.5));
}

TEST_CASE("fluid share: a capped flow keeps its cap, the others share the rest", "[fluid]") {
  FluidShare s;
  const auto hbm = s.add_resource(10.0);
  const auto kernel = s.start(0, 100, {{hbm}}, 1.0);  // compute-bound: cannot use more than 1
  const auto dma = s.start(0, 100, {{hbm}});
  const auto dma2 = s.start(0, 100, {{hbm}});
  s.settle(0);
  CHECK(s.rate(kernel) == Approx(1.0));
  CHECK(s.rate(dma) == Approx(4.5));
  CHECK(s.rate(dma2) == Approx(4.5));
  // A cap above the fair share does not bind: three equal shares.
  FluidShare t;
  const auto r = t.add_resource(9.0);
  const auto k = t.start(0, 100, {{r}}, 5.0);
  t.start(0, 100, {{r}});
  t.start(0, 100, {{r}});
  t.settle(0);
  CHECK(t.rate(k) == Approx(3.0));
}

TEST_CASE("fluid share: weights take a resource's capacity per unit of rate", "[fluid]") {
  // A reduction moves 3 bytes of HBM per byte reduced: with a plain copy on
  // the same HBM (capacity 8), both rise together until 3r + r = 8: r = 2.
  FluidShare s;
  const auto hbm = s.add_resource(8.0);
  const auto reduce = s.start(0, 10, {{hbm, 3.0}});
  const auto copy = s.start(0, 10, {{hbm, 1.0}});
  s.settle(0);
  CHECK(s.rate(reduce) == Approx(2.0));
  CHECK(s.rate(copy) == Approx(2.0));
}

TEST_CASE("fluid share: a flow on no resource runs at its cap", "[fluid]") {
  FluidShare s;
  const auto f = s.start(5, 10, {}, 2.5);
  s.settle(5);
  CHECK(s.rate(f) == Approx(2.5));
  CHECK(s.remaining_at(f, 7) == Approx(5.0));
  CHECK_THROWS(s.start(5, 10, {}));  // no resource and no cap: no rate
}

TEST_CASE("fluid share: only rates that moved are reported", "[fluid]") {
  FluidShare s;
  const auto l1 = s.add_resource(1.0), l2 = s.add_resource(1.0);
  const auto a = s.start(0, 10, {{l1}});
  s.start(0, 10, {{l2}});
  CHECK(s.settle(0).size() == 2);
  CHECK_FALSE(s.dirty());
  s.start(1, 10, {{l2}});  // another flow on l2: a's component is untouched
  const auto& changed = s.settle(1);
  CHECK(changed.size() == 2);
  for (auto f : changed) CHECK(f != a);
  CHECK(s.rate(a) == Approx(1.0));
}

TEST_CASE("fluid share: random networks are max-min fair", "[fluid]") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    FluidShare s;
    const int resources = 1 + int(rng() % 6), flows = 1 + int(rng() % 12);
    std::vector<double> capacity;
    for (int r = 0; r < resources; ++r) {
      capacity.push_back(0.5 + (rng() % 100) / 10.0);
      s.add_resource(capacity.back());
    }
    struct F {
      std::uint32_t id;
      std::vector<FluidShare::Use> uses;
      double cap;
    };
    std::vector<F> fs;
    for (int i = 0; i < flows; ++i) {
      std::vector<FluidShare::Use> uses;
      for (int r = 0; r < resources; ++r)
        if (rng() % 3 == 0) uses.push_back({std::uint32_t(r), 0.25 + (rng() % 16) / 4.0});
      const double cap = (rng() % 3 == 0 || uses.empty()) ? 0.1 + (rng() % 50) / 10.0 : FluidShare::kNoCap;
      fs.push_back({s.start(0, 1000, uses, cap), uses, cap});
    }
    s.settle(0);
    std::vector<double> load(resources, 0.0);
    for (const F& f : fs)
      for (const auto& u : f.uses) load[u.resource] += u.weight * s.rate(f.id);
    for (int r = 0; r < resources; ++r) CHECK(load[r] <= capacity[r] * (1 + 1e-9));
    for (const F& f : fs) {
      const double rate = s.rate(f.id);
      CHECK(rate > 0);
      CHECK(rate <= f.cap * (1 + 1e-9));
      if (rate >= f.cap * (1 - 1e-9)) continue;  // at its cap
      bool bottleneck = false;
      for (const auto& u : f.uses) {
        if (load[u.resource] < capacity[u.resource] * (1 - 1e-9)) continue;  // not saturated
        bool largest = true;
        for (const F& g : fs)
          for (const auto& v : g.uses)
            if (v.resource == u.resource && s.rate(g.id) > rate * (1 + 1e-9)) largest = false;
        bottleneck = bottleneck || largest;
      }
      INFO("trial " << trial << " flow " << f.id << " rate " << rate);
      CHECK(bottleneck);
    }
  }
}

}  // namespace test_fluid_share
