#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "hw/sequencer.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace hw {

namespace {
std::uint64_t now_ps() {
  return static_cast<std::uint64_t>(sc_core::sc_time_stamp().value());
}
}  // namespace

Sequencer::Sequencer(sc_core::sc_module_name name, const Program& program, Executor execute)
    : sc_core::sc_module(name), program_(program), execute_(std::move(execute)),
      done_(program.ops.size(), 0), timings_(program.ops.size()) {
  // Program order per engine; a dependency on a later op could never be met.
  std::vector<std::pair<EngineRef, std::vector<std::uint32_t>>> queues;
  for (std::uint32_t i = 0; i < program_.ops.size(); ++i) {
    const Op& op = program_.ops[i];
    for (auto d : op.deps)
      if (d >= i) throw std::logic_error("op '" + op.name + "' depends on a later op");
    auto it = std::find_if(queues.begin(), queues.end(),
                           [&](const auto& q) { return q.first == op.engine; });
    if (it == queues.end()) {
      queues.push_back({op.engine, {}});
      it = queues.end() - 1;
    }
    it->second.push_back(i);
  }
  for (auto& q : queues) {
    std::string thread_name = std::string(engine_kind_name(q.first.kind)) + std::to_string(q.first.index);
    sc_core::sc_spawn_options opts;
    opts.set_stack_size(64 * 1024);
    sc_core::sc_spawn([this, queue = q.second]() { run_engine(queue); }, thread_name.c_str(), &opts);
  }
}

bool Sequencer::ready(const Op& op) const {
  for (auto d : op.deps)
    if (!done_[d]) return false;
  return true;
}

void Sequencer::run_engine(std::vector<std::uint32_t> queue) {
  for (std::uint32_t i : queue) {
    const Op& op = program_.ops[i];
    while (!ready(op)) wait(progress_);
    timings_[i].start_ps = now_ps();
    try {
      execute_(op);
    } catch (...) {
      // Exceptions must not unwind through the kernel (they would surface as
      // an untyped sc_report); keep the first and stop the simulation.
      if (!failure_) failure_ = std::current_exception();
      sc_core::sc_stop();
      return;
    }
    timings_[i].end_ps = now_ps();
    done_[i] = 1;
    ++completed_;
    end_ps_ = std::max(end_ps_, timings_[i].end_ps);
    progress_.notify(sc_core::SC_ZERO_TIME);
  }
}

void Sequencer::rethrow_failure() const {
  if (failure_) std::rethrow_exception(failure_);
}

std::vector<std::uint32_t> Sequencer::pending_ops() const {
  std::vector<std::uint32_t> out;
  for (std::uint32_t i = 0; i < done_.size(); ++i)
    if (!done_[i]) out.push_back(i);
  return out;
}

}  // namespace hw
