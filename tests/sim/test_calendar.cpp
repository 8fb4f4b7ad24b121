// sim::Calendar: alarms due at one picosecond ring in the order of their
// ranks (chips by index, a chip's start, timer and HBM server in that
// order, the network last), whatever order they were notified or built in;
// and an alarm keeps, moves and drops its wake as an sc_event's timed
// notification does (SystemC's own event is the reference).
#include <catch2/catch.hpp>
#include <systemc>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "sim/calendar.h"
#include "sim/kernel.h"

namespace test_calendar {

namespace {

using sim::AlarmRank;
using Engine = sim::AlarmRank::Engine;

// Rings are logged as (time, owner's label).
using Log = std::vector<std::pair<std::uint64_t, int>>;

std::uint64_t now_ps() { return static_cast<std::uint64_t>(sc_core::sc_time_stamp().value()); }

struct Owner : sim::Alarm::Listener {
  Owner(int label, AlarmRank rank, Log& log) : label(label), alarm(*this, rank), log(log) {}
  void ring() override { log.emplace_back(now_ps(), label); }
  int label;
  sim::Alarm alarm;
  Log& log;
};

// Runs `script` in a thread of its own from time 0.
struct Driver : sc_core::sc_module {
  SC_HAS_PROCESS(Driver);
  Driver(sc_core::sc_module_name name, std::function<void()> script)
      : sc_core::sc_module(name), script_(std::move(script)) {
    SC_THREAD(run);
  }
  void run() { script_(); }
  std::function<void()> script_;
};

void wait_until(std::uint64_t at) { sc_core::wait(sc_core::sc_time::from_value(at - now_ps())); }

// The ranks of the test, in the order they must ring, labelled 0, 1, ...
std::vector<AlarmRank> ranks_in_order() {
  return {AlarmRank::chip(0, Engine::start), AlarmRank::chip(0, Engine::timer),   AlarmRank::chip(0, Engine::hbm),
          AlarmRank::chip(1, Engine::timer), AlarmRank::chip(1, Engine::hbm),     AlarmRank::chip(7, Engine::start),
          AlarmRank::chip(7, Engine::hbm),   AlarmRank::chip(300, Engine::timer), AlarmRank::network()};
}

// Builds the owners in `build` order (a permutation of the labels).
std::vector<std::unique_ptr<Owner>> owners(const std::vector<int>& build, Log& log) {
  const std::vector<AlarmRank> ranks = ranks_in_order();
  std::vector<std::unique_ptr<Owner>> out(ranks.size());
  for (const int label : build) out[label] = std::make_unique<Owner>(label, ranks[label], log);
  return out;
}

Log labels_at(const Log& log, std::uint64_t at) {
  Log out;
  std::copy_if(log.begin(), log.end(), std::back_inserter(out), [&](const auto& r) { return r.first == at; });
  return out;
}

Log expected_at(std::uint64_t at, std::size_t n) {
  Log out;
  for (std::size_t i = 0; i < n; ++i) out.emplace_back(at, static_cast<int>(i));
  return out;
}

}  // namespace

TEST_CASE("calendar: alarms due at one picosecond ring by rank whatever order they were notified in",
          "[sim][calendar]") {
  const std::size_t n = ranks_in_order().size();
  std::mt19937_64 rng(44);
  for (int round = 0; round < 6; ++round) {
    std::vector<int> build(n), notify(n);
    for (std::size_t i = 0; i < n; ++i) build[i] = notify[i] = static_cast<int>(i);
    if (round == 1) std::reverse(notify.begin(), notify.end());
    if (round == 2) std::reverse(build.begin(), build.end());
    if (round >= 3) {
      std::shuffle(build.begin(), build.end(), rng);
      std::shuffle(notify.begin(), notify.end(), rng);
    }
    sim::reset_kernel();
    Log log;
    auto own = owners(build, log);
    Driver d("driver", [&] {
      // From one instant, then each from an instant of its own: an alarm
      // notified earlier in time rings no earlier for it.
      wait_until(10);
      for (const int label : notify) own[label]->alarm.notify(100);
      for (std::size_t i = 0; i < n; ++i) {
        wait_until(110 + i);
        own[notify[i]]->alarm.notify(200);
      }
      // Moved earlier onto an instant others are due at: ranks still decide.
      wait_until(210);
      for (std::size_t i = 0; i < n; ++i) own[notify[i]]->alarm.notify(i % 2 ? 300 : 400);
      for (std::size_t i = 0; i < n; ++i) own[notify[i]]->alarm.notify(300);
    });
    sc_core::sc_start();
    CHECK(labels_at(log, 100) == expected_at(100, n));
    CHECK(labels_at(log, 200) == expected_at(200, n));
    CHECK(labels_at(log, 300) == expected_at(300, n));
    CHECK(labels_at(log, 400).empty());
    CHECK(log.size() == 3 * n);
  }
}

TEST_CASE("calendar: alarms set while elaborating ring at time 0 by rank", "[sim][calendar]") {
  const std::size_t n = ranks_in_order().size();
  std::vector<int> build(n);
  for (std::size_t i = 0; i < n; ++i) build[i] = static_cast<int>(n - 1 - i);
  sim::reset_kernel();
  Log log;
  auto own = owners(build, log);
  for (const int label : build) own[label]->alarm.notify(0);
  own[3]->alarm.notify(50);  // a later time does not replace a pending earlier one
  sc_core::sc_start();
  CHECK(log == expected_at(0, n));
}

TEST_CASE("calendar: two alarms of one rank are refused", "[sim][calendar]") {
  sim::reset_kernel();
  Log log;
  Owner a(0, AlarmRank::chip(3, Engine::timer), log);
  CHECK_THROWS_AS(Owner(1, AlarmRank::chip(3, Engine::timer), log), std::logic_error);
  Owner b(1, AlarmRank::chip(3, Engine::hbm), log);  // the rank of one gone is free again after it
  { Owner c(2, AlarmRank::network(), log); }
  Owner d(3, AlarmRank::network(), log);
}

TEST_CASE("calendar: an alarm keeps moves and drops its wake as an sc_event timed notification does",
          "[sim][calendar]") {
  // One random script of notifications and cancels, applied at the same
  // instants to an sc_event (a method process sensitive to it) and to an
  // alarm: both must wake at the same times.
  struct Step {
    std::uint64_t at;    // when the script acts
    std::uint64_t span;  // notify `span` ps from then; 0: cancel
  };
  std::mt19937_64 rng(7);
  for (int round = 0; round < 20; ++round) {
    std::vector<Step> script;
    std::uint64_t t = 0;
    for (int i = 0; i < 40; ++i) {
      t += std::uniform_int_distribution<std::uint64_t>(0, 30)(rng);
      const bool cancel = std::uniform_int_distribution<int>(0, 5)(rng) == 0;
      script.push_back({t, cancel ? 0 : std::uniform_int_distribution<std::uint64_t>(1, 60)(rng)});
    }
    sim::reset_kernel();
    Log log;
    Owner alarm(0, AlarmRank::chip(0, Engine::timer), log);
    struct Reference : sc_core::sc_module {
      SC_HAS_PROCESS(Reference);
      explicit Reference(sc_core::sc_module_name name, Log& log) : sc_core::sc_module(name), log(log) {
        SC_METHOD(woken);
        sensitive << event;
        dont_initialize();
      }
      void woken() { log.emplace_back(now_ps(), 1); }
      sc_core::sc_event event;
      Log& log;
    } reference("reference", log);
    Driver d("driver", [&] {
      for (const Step& s : script) {
        if (s.at > now_ps()) wait_until(s.at);
        if (s.span == 0) {
          alarm.alarm.cancel();
          reference.event.cancel();
        } else {
          alarm.alarm.notify(s.at + s.span);
          reference.event.notify(sc_core::sc_time::from_value(s.span));
        }
      }
    });
    sc_core::sc_start();
    std::vector<std::uint64_t> by_alarm, by_event;
    for (const auto& [at, who] : log) (who == 0 ? by_alarm : by_event).push_back(at);
    CHECK(by_alarm == by_event);
    CHECK(!by_event.empty());
  }
}

TEST_CASE("calendar: an alarm may not ring at or before now once the simulation runs", "[sim][calendar]") {
  sim::reset_kernel();
  Log log;
  Owner a(0, AlarmRank::chip(0, Engine::timer), log);
  bool refused = false;
  Driver d("driver", [&] {
    wait_until(20);
    try {
      a.alarm.notify(20);
    } catch (const std::logic_error&) {
      refused = true;
    }
  });
  sc_core::sc_start();
  CHECK(refused);
  CHECK(log.empty());
}

}  // namespace test_calendar
