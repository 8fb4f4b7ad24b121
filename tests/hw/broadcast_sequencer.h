#pragma once
// A reference for hw::Sequencer in tests: the sequencer as it was before
// targeted wakeups, kept simple on purpose. One SystemC thread per engine
// runs that engine's ops in program order; every waiting thread sleeps on
// one event that every completion notifies, and re-checks its head op.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <systemc>
#include <utility>
#include <vector>

#include "hw/program.h"

namespace testing_hw {

using EngineQueues = std::vector<std::pair<hw::EngineRef, std::vector<std::uint32_t>>>;

// A program's ops by engine, in order of first use; each engine's in program order.
inline EngineQueues engine_queues(const hw::Program& p) {
  EngineQueues queues;
  for (std::uint32_t i = 0; i < p.ops.size(); ++i) {
    auto it = std::find_if(queues.begin(), queues.end(), [&](const auto& q) { return q.first == p.ops[i].engine; });
    if (it == queues.end()) {
      queues.push_back({p.ops[i].engine, {}});
      it = queues.end() - 1;
    }
    it->second.push_back(i);
  }
  return queues;
}

struct BroadcastRun {
  std::vector<hw::OpTiming> timings;
  std::uint64_t end_ps = 0;
  bool finished = false;  // every op ran
};

// Spawns the threads, each calling `execute` for its ops, and runs the
// kernel until nothing is left (modules of the run are the caller's).
inline BroadcastRun run_broadcast_sequencer(const hw::Program& p, const std::function<void(const hw::Op&)>& execute) {
  BroadcastRun r;
  r.timings.resize(p.ops.size());
  std::vector<char> done(p.ops.size(), 0);
  sc_core::sc_event progress;
  for (auto& q : engine_queues(p))
    sc_core::sc_spawn([&, queue = q.second] {
      for (auto i : queue) {
        auto ready = [&] {
          for (auto d : p.ops[i].deps)
            if (!done[d]) return false;
          return true;
        };
        while (!ready()) sc_core::wait(progress);
        r.timings[i].start_ps = sc_core::sc_time_stamp().value();
        execute(p.ops[i]);
        r.timings[i].end_ps = sc_core::sc_time_stamp().value();
        done[i] = 1;
        r.end_ps = std::max(r.end_ps, r.timings[i].end_ps);
        progress.notify(sc_core::SC_ZERO_TIME);
      }
    });
  sc_core::sc_start();
  r.finished = std::all_of(done.begin(), done.end(), [](char d) { return d != 0; });
  return r;
}

}  // namespace testing_hw
