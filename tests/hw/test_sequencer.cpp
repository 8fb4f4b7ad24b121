// hw::Sequencer: when each op starts and ends, to the picosecond and to the
// delta cycle, on a hand-worked dependency graph over six engines (with
// zero-duration ops and dependencies that finish together on different
// engines) and on random graphs (against the rule and against the broadcast
// sequencer, engine threads on one shared event, that it replaced);
// failures and what is left pending.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <systemc>
#include <vector>

#include "broadcast_sequencer.h"
#include "hw/program.h"
#include "hw/sequencer.h"
#include "sim/kernel.h"

namespace test_sequencer {

namespace {

using hw::EngineKind;
using hw::EngineRef;

constexpr std::uint64_t kNs = 1000;  // ps

const EngineRef kMxu0{EngineKind::mxu, 0}, kMxu1{EngineKind::mxu, 1}, kVector{EngineKind::vector, 0},
    kDma0{EngineKind::dma, 0}, kDma1{EngineKind::dma, 1}, kIci{EngineKind::ici, 0};

// A program whose ops take fixed durations.
struct TimedProgram {
  hw::Program program;
  std::vector<std::uint64_t> duration_ps;

  std::uint32_t add(const std::string& name, EngineRef engine, std::uint64_t ns, std::vector<std::uint32_t> deps) {
    duration_ps.push_back(ns * kNs);
    return program.add(hw::Op{name, engine, hw::VectorOp{}, std::move(deps), 0});
  }
};

// When an op ran: simulated time and the kernel's delta count.
struct Seen {
  std::uint64_t start_ps = 0, end_ps = 0;
  std::uint64_t start_delta = 0, end_delta = 0;
};

std::uint64_t now_ps() { return sc_core::sc_time_stamp().value(); }

// Runs the program's ops for the duration each is given, and records when
// they ran. For the sequencer, non-blocking: an op of no time completes
// inside start(), in the delta cycle it started in; the others complete
// from a timer of the recorder's own (one event, completions in order of
// due time, then of start). For the broadcast reference, blocking: run()
// waits the duration in the calling thread (not at all for no time).
struct Recorder : sc_core::sc_module, hw::OpExecutor {
  SC_HAS_PROCESS(Recorder);
  const TimedProgram& tp;
  std::vector<Seen> seen;
  std::string fail_on;        // start() of the op of this name throws
  std::string fail_later_on;  // this op fails when it would have completed

  Recorder(sc_core::sc_module_name name, const TimedProgram& p)
      : sc_core::sc_module(name), tp(p), seen(p.program.ops.size()) {
    SC_METHOD(on_timer);
    sensitive << timer_;
    dont_initialize();
  }

  std::size_t index(const hw::Op& op) const { return static_cast<std::size_t>(&op - tp.program.ops.data()); }
  void started(std::size_t i) {
    seen[i].start_ps = now_ps();
    seen[i].start_delta = sc_core::sc_delta_count();
  }
  void ended(std::size_t i) {
    seen[i].end_ps = now_ps();
    seen[i].end_delta = sc_core::sc_delta_count();
  }

  void run(const hw::Op& op) {
    const std::size_t i = index(op);
    started(i);
    if (tp.duration_ps[i] > 0) sc_core::wait(sc_core::sc_time::from_value(tp.duration_ps[i]));
    ended(i);
  }

  void start(const hw::Op& op, hw::Completion done) override {
    if (op.name == fail_on) throw std::runtime_error(op.name + " failed");
    const std::size_t i = index(op);
    started(i);
    if (tp.duration_ps[i] == 0 && op.name != fail_later_on) {
      ended(i);
      done();
      return;
    }
    const std::uint64_t due = now_ps() + tp.duration_ps[i];
    if (due_.empty() || due < due_.begin()->first.first) timer_.notify(sc_core::sc_time::from_value(due - now_ps()));
    due_.emplace(std::make_pair(due, seq_++), std::make_pair(i, done));
  }

 private:
  void on_timer() {
    while (!due_.empty() && due_.begin()->first.first <= now_ps()) {
      const auto [i, done] = due_.begin()->second;
      due_.erase(due_.begin());
      if (tp.program.ops[i].name == fail_later_on) {
        done.fail(std::make_exception_ptr(std::runtime_error(tp.program.ops[i].name + " failed later")));
        continue;
      }
      ended(i);
      done();
    }
    if (!due_.empty()) timer_.notify(sc_core::sc_time::from_value(due_.begin()->first.first - now_ps()));
  }

  std::map<std::pair<std::uint64_t, std::uint64_t>, std::pair<std::size_t, hw::Completion>> due_;  // (due, seq)
  std::uint64_t seq_ = 0;
  sc_core::sc_event timer_;
};

struct Result {
  std::vector<hw::OpTiming> timings;
  std::vector<Seen> seen;
  std::uint64_t end_ps = 0;
  bool finished = false;
};

Result run_sequencer(const TimedProgram& tp) {
  sim::reset_kernel();
  Recorder rec("recorder", tp);
  hw::Sequencer seq("seq", tp.program, rec);
  sc_core::sc_start();
  seq.rethrow_failure();
  return {seq.timings(), rec.seen, seq.end_ps(), seq.finished()};
}

// The sequencer before targeted wakeups: every engine thread sleeps on one
// event that every completion notifies, and re-checks its head op.
Result run_broadcast(const TimedProgram& tp) {
  sim::reset_kernel();
  Recorder rec("recorder", tp);
  const testing_hw::BroadcastRun b =
      testing_hw::run_broadcast_sequencer(tp.program, [&rec](const hw::Op& op) { rec.run(op); });
  return {b.timings, rec.seen, b.end_ps, b.finished};
}

// Six engines; durations in ns. Worked by hand:
//   ld0 (dma0) and ld1 (dma1) both end at 10; mm0 needs both: 10..30.
//   mm1 (mxu1) 10..15; z0 (vector, 0 ns) 15..15; z1 (ici, 0 ns) 15..15;
//   z3 (ici, no deps) right after z1 in the same delta; mm1b (mxu1) 15..30.
//   v1 (vector) needs mm0 and mm1b, which end together at 30 on two MXUs: 30..37.
//   z2 (mxu0, 0 ns, after mm0 on the same engine) 30..30, same delta as mm0's end.
//   st0 (dma0) 37..40. ld2 (dma1, no deps) 10..60. mm2 (mxu0) needs ld2: 60..70.
//   send (ici) needs st0 and mm2: 70..74. z4 (vector) 74..74, z5 (dma0) 74..74,
//   fin (dma1) 74..75.
TimedProgram hand_program() {
  TimedProgram tp;
  const auto ld0 = tp.add("ld0", kDma0, 10, {});
  const auto ld1 = tp.add("ld1", kDma1, 10, {});
  const auto mm0 = tp.add("mm0", kMxu0, 20, {ld0, ld1});
  const auto mm1 = tp.add("mm1", kMxu1, 5, {ld1});
  const auto z0 = tp.add("z0", kVector, 0, {mm1});
  const auto z1 = tp.add("z1", kIci, 0, {z0});
  const auto mm1b = tp.add("mm1b", kMxu1, 15, {z1});
  const auto v1 = tp.add("v1", kVector, 7, {mm0, mm1b});
  const auto st0 = tp.add("st0", kDma0, 3, {v1});
  const auto ld2 = tp.add("ld2", kDma1, 50, {});
  const auto z2 = tp.add("z2", kMxu0, 0, {mm0});
  const auto mm2 = tp.add("mm2", kMxu0, 10, {ld2, z2});
  const auto z3 = tp.add("z3", kIci, 0, {});
  const auto send = tp.add("send", kIci, 4, {st0, mm2});
  const auto z4 = tp.add("z4", kVector, 0, {send});
  const auto z5 = tp.add("z5", kDma0, 0, {z4, z3});
  tp.add("fin", kDma1, 1, {z5});
  return tp;
}

TimedProgram random_program(std::uint32_t seed, std::uint32_t ops) {
  std::mt19937 rng(seed);
  const EngineRef engines[] = {kMxu0, kMxu1, kVector, kDma0, kDma1, kIci};
  const std::uint64_t durations[] = {0, 0, 0, 1, 1, 2, 3, 5};  // ns: many ties and zero-time ops
  TimedProgram tp;
  for (std::uint32_t i = 0; i < ops; ++i) {
    std::vector<std::uint32_t> deps;
    const std::uint32_t count = i == 0 ? 0 : rng() % 4;
    for (std::uint32_t k = 0; k < count; ++k) {
      const std::uint32_t back = 1 + rng() % std::min<std::uint32_t>(i, 12);  // mostly recent ops
      deps.push_back(i - back);
    }
    tp.add("op" + std::to_string(i), engines[rng() % 6], durations[rng() % 8], deps);
  }
  return tp;
}

}  // namespace

TEST_CASE("sequencer: hand-worked start and end times over six engines", "[sequencer]") {
  const TimedProgram tp = hand_program();
  const Result r = run_sequencer(tp);
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> want = {
      {0, 10},  {0, 10},  {10, 30}, {10, 15}, {15, 15}, {15, 15}, {15, 30}, {30, 37}, {37, 40},
      {10, 60}, {30, 30}, {60, 70}, {15, 15}, {70, 74}, {74, 74}, {74, 74}, {74, 75}};
  REQUIRE(r.timings.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO("op " << tp.program.ops[i].name);
    CHECK(r.timings[i].start_ps == want[i].first * kNs);
    CHECK(r.timings[i].end_ps == want[i].second * kNs);
    // What the executor saw is what the sequencer reports.
    CHECK(r.seen[i].start_ps == r.timings[i].start_ps);
    CHECK(r.seen[i].end_ps == r.timings[i].end_ps);
  }
  CHECK(r.end_ps == 75 * kNs);
  CHECK(r.finished);

  // Delta cycles: an engine woken by another engine's completion starts one
  // delta cycle after it; an engine whose next op is already ready goes on in
  // the same delta cycle.
  const auto& s = r.seen;
  enum : std::size_t { ld0, ld1, mm0, mm1, z0, z1, mm1b, v1, st0, ld2, z2, mm2, z3, send, z4, z5, fin };
  CHECK(s[mm0].start_delta == s[ld0].end_delta + 1);
  CHECK(s[ld0].end_delta == s[ld1].end_delta);
  CHECK(s[ld2].start_delta == s[ld1].end_delta);  // same engine, no deps
  CHECK(s[z0].start_delta == s[mm1].end_delta + 1);
  CHECK(s[z0].end_delta == s[z0].start_delta);
  CHECK(s[z1].start_delta == s[z0].end_delta + 1);
  CHECK(s[z3].start_delta == s[z1].end_delta);
  CHECK(s[mm1b].start_delta == s[z1].end_delta + 1);
  CHECK(s[mm0].end_delta == s[mm1b].end_delta);
  CHECK(s[v1].start_delta == s[mm0].end_delta + 1);
  CHECK(s[z2].start_delta == s[mm0].end_delta);
  CHECK(s[z4].start_delta == s[send].end_delta + 1);
  CHECK(s[z5].start_delta == s[z4].end_delta + 1);
  CHECK(s[fin].start_delta == s[z5].end_delta + 1);
}

TEST_CASE("sequencer: random graphs: as soon as possible, one delta cycle after a wakeup, as the broadcast did",
          "[sequencer]") {
  for (std::uint32_t seed : {1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u}) {
    INFO("seed " << seed);
    const TimedProgram tp = random_program(seed, 400);
    const hw::Program& p = tp.program;
    const Result got = run_sequencer(tp);
    REQUIRE(got.finished);
    // Each op starts when its engine is free and its dependencies are done.
    // Delta cycles: an engine that had to wait starts one delta cycle after
    // the completion that woke it; one that finds its op ready goes on in
    // the delta cycle it got there. (When both happen in the same delta
    // cycle, which comes first depends on the kernel's order: either is right.)
    std::map<std::uint64_t, std::uint32_t> last_on_engine;  // engine key -> op
    std::size_t woken = 0, ties = 0, zero = 0;
    std::uint64_t end = 0;
    for (std::uint32_t i = 0; i < p.ops.size(); ++i) {
      INFO("op " << p.ops[i].name);
      const std::uint64_t key = std::uint64_t(p.ops[i].engine.kind) << 32 | p.ops[i].engine.index;
      const auto prev = last_on_engine.find(key);
      std::uint64_t free_ps = 0, ready_ps = 0, arrive_delta = 0, ready_delta = 0;
      if (prev != last_on_engine.end()) {
        free_ps = got.timings[prev->second].end_ps;
        arrive_delta = got.seen[prev->second].end_delta;
      }
      std::size_t at_start = 0;
      for (auto d : p.ops[i].deps) {
        ready_ps = std::max(ready_ps, got.timings[d].end_ps);
        ready_delta = std::max(ready_delta, got.seen[d].end_delta);
      }
      const std::uint64_t start_ps = std::max(free_ps, ready_ps);
      CHECK(got.timings[i].start_ps == start_ps);
      CHECK(got.timings[i].end_ps == start_ps + tp.duration_ps[i]);
      CHECK(got.seen[i].start_ps == got.timings[i].start_ps);
      CHECK(got.seen[i].end_ps == got.timings[i].end_ps);
      if (prev != last_on_engine.end() || !p.ops[i].deps.empty()) {
        if (ready_delta < arrive_delta)
          CHECK(got.seen[i].start_delta == arrive_delta);
        else if (ready_delta > arrive_delta)
          CHECK(got.seen[i].start_delta == ready_delta + 1);
        else
          CHECK((got.seen[i].start_delta == arrive_delta || got.seen[i].start_delta == arrive_delta + 1));
      }
      for (auto d : p.ops[i].deps)
        if (got.timings[d].end_ps == start_ps && !(p.ops[d].engine == p.ops[i].engine)) ++at_start;
      woken += at_start > 0;
      ties += at_start > 1;
      zero += tp.duration_ps[i] == 0;
      end = std::max(end, got.timings[i].end_ps);
      last_on_engine[key] = i;
    }
    CHECK(got.end_ps == end);
    // The graphs exercise what matters: ops that wait for a dependency on
    // another engine, several ending together, zero-time ops.
    CHECK(woken > 40);
    CHECK(ties > 5);
    CHECK(zero > 100);
    // The broadcast sequencer (every completion wakes every waiting thread)
    // gave the same times.
    const Result want = run_broadcast(tp);
    REQUIRE(want.finished);
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
      CHECK(got.timings[i].start_ps == want.timings[i].start_ps);
      CHECK(got.timings[i].end_ps == want.timings[i].end_ps);
    }
    CHECK(got.end_ps == want.end_ps);
  }
}

TEST_CASE("sequencer: an op's exception stops the run, the rest stays pending", "[sequencer]") {
  TimedProgram tp;
  const auto a = tp.add("a", kDma0, 5, {});
  const auto b = tp.add("b", kMxu0, 5, {a});
  tp.add("c", kVector, 1, {b});
  tp.add("d", kDma0, 100, {});
  // b fails as it starts, or (Completion::fail) when it would have ended.
  for (const bool later : {false, true}) {
    INFO((later ? "fails later" : "fails at start"));
    sim::reset_kernel();
    Recorder rec("recorder", tp);
    (later ? rec.fail_later_on : rec.fail_on) = "b";
    hw::Sequencer seq("seq", tp.program, rec);
    sc_core::sc_start();
    CHECK_THROWS_WITH(seq.rethrow_failure(), later ? "b failed later" : "b failed");
    CHECK_FALSE(seq.finished());
    CHECK(seq.pending_ops() == std::vector<std::uint32_t>{1, 2, 3});
    CHECK(sc_core::sc_time_stamp().value() == (later ? 10 : 5) * kNs);  // stopped when b failed
    CHECK(seq.timings()[0].end_ps == 5 * kNs);
    CHECK(seq.end_ps() == 5 * kNs);
  }
}

TEST_CASE("sequencer: an op that fails as it starts inside another op's completion stops the run there",
          "[sequencer]") {
  // b starts on a's engine inside a's completion, in the executor's own
  // process: the exception must reach the sequencer, not that process.
  TimedProgram tp;
  tp.add("a", kDma0, 5, {});
  tp.add("b", kDma0, 5, {});
  tp.add("c", kMxu0, 1, {0});
  sim::reset_kernel();
  Recorder rec("recorder", tp);
  rec.fail_on = "b";
  hw::Sequencer seq("seq", tp.program, rec);
  sc_core::sc_start();
  CHECK_THROWS_WITH(seq.rethrow_failure(), "b failed");
  CHECK(seq.pending_ops() == std::vector<std::uint32_t>{1, 2});
  CHECK(sc_core::sc_time_stamp().value() == 5 * kNs);
  CHECK(seq.timings()[0].end_ps == 5 * kNs);
}

TEST_CASE("sequencer: a run cut short leaves the unfinished ops and what needs them pending", "[sequencer]") {
  TimedProgram tp;
  const auto a = tp.add("a", kIci, 1000, {});  // still running when the run stops
  tp.add("b", kVector, 2, {});
  tp.add("c", kMxu0, 1, {a});
  tp.add("d", kIci, 1, {});
  sim::reset_kernel();
  Recorder rec("recorder", tp);
  hw::Sequencer seq("seq", tp.program, rec);
  sc_core::sc_start(sc_core::sc_time::from_value(50 * kNs));
  seq.rethrow_failure();
  CHECK_FALSE(seq.finished());
  CHECK(seq.pending_ops() == std::vector<std::uint32_t>{0, 2, 3});
  CHECK(seq.timings()[1].end_ps == 2 * kNs);
  CHECK(seq.end_ps() == 2 * kNs);
  sc_core::sc_start();
  CHECK(seq.finished());
  CHECK(seq.pending_ops().empty());
  CHECK(seq.timings()[3].end_ps == 1001 * kNs);
  CHECK(seq.end_ps() == 1001 * kNs);
}

TEST_CASE("sequencer: a dependency on a later op is refused", "[sequencer]") {
  TimedProgram tp;
  tp.add("a", kDma0, 1, {});
  tp.add("b", kMxu0, 1, {1});
  sim::reset_kernel();
  Recorder rec("recorder", tp);
  CHECK_THROWS_AS(hw::Sequencer("seq", tp.program, rec), std::logic_error);
}

}  // namespace test_sequencer
