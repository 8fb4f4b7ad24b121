#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "hw/sequencer.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace hw {

namespace {
std::uint64_t now_ps() { return static_cast<std::uint64_t>(sc_core::sc_time_stamp().value()); }
}  // namespace

Sequencer::Sequencer(sc_core::sc_module_name name, const Program& program, Executor execute)
    : sc_core::sc_module(name), program_(program), execute_(std::move(execute)) {
  const std::size_t n = program_.ops.size();
  if (n >= kNoOp) throw std::logic_error("program has too many ops for a sequencer");
  state_.resize(n);
  first_dependent_.assign(n + 1, 0);
  // One pass over the ops (they are large and scattered): engine queues in
  // order of first use, dependency counts, and the edges in a flat copy.
  // A dependency on a later op could never be met.
  std::vector<EngineRef> engines;
  std::vector<std::uint32_t> queue_of(n);
  std::vector<std::uint32_t> deps;
  for (std::uint32_t i = 0; i < n; ++i) {
    const Op& op = program_.ops[i];
    if (op.deps.size() >= kWaitedOn - 1) throw std::logic_error("op '" + op.name + "' has too many dependencies");
    for (auto d : op.deps) {
      if (d >= i) throw std::logic_error("op '" + op.name + "' depends on a later op");
      ++first_dependent_[d + 1];
    }
    deps.insert(deps.end(), op.deps.begin(), op.deps.end());
    if (deps.size() > std::numeric_limits<std::uint32_t>::max())
      throw std::logic_error("program has too many dependencies for a sequencer");
    state_[i] = static_cast<std::uint32_t>(op.deps.size());
    auto it = std::find(engines.begin(), engines.end(), op.engine);
    queue_of[i] = static_cast<std::uint32_t>(it - engines.begin());
    if (it == engines.end()) engines.push_back(op.engine);
  }

  // Dependents in CSR: counts -> starts; filling advances each start to the
  // next one's, and shifting back restores the starts.
  for (std::size_t i = 0; i < n; ++i) first_dependent_[i + 1] += first_dependent_[i];
  dependents_.resize(deps.size());
  for (std::uint32_t i = 0, e = 0; i < n; ++i)
    for (const std::uint32_t end = e + state_[i]; e < end; ++e) dependents_[first_dependent_[deps[e]]++] = i;
  for (std::size_t i = n; i > 0; --i) first_dependent_[i] = first_dependent_[i - 1];
  first_dependent_[0] = 0;

  const std::size_t queues = engines.size();
  queue_begin_.assign(queues + 1, 0);
  for (auto q : queue_of) ++queue_begin_[q + 1];
  for (std::size_t q = 0; q < queues; ++q) queue_begin_[q + 1] += queue_begin_[q];
  queue_ops_.resize(n);
  {
    std::vector<std::uint32_t> next(queue_begin_.begin(), queue_begin_.end() - 1);
    for (std::uint32_t i = 0; i < n; ++i) queue_ops_[next[queue_of[i]]++] = i;
  }
  waiting_for_.assign(queues, kNoOp);
  wake_ = std::make_unique<sc_core::sc_event[]>(queues);
  timings_.resize(n);

  for (std::uint32_t q = 0; q < queues; ++q) {
    std::string thread_name = std::string(engine_kind_name(engines[q].kind)) + std::to_string(engines[q].index);
    sc_core::sc_spawn_options opts;
    opts.set_stack_size(64 * 1024);
    sc_core::sc_spawn([this, q]() { run_engine(q); }, thread_name.c_str(), &opts);
  }
}

void Sequencer::run_engine(std::uint32_t queue) {
  const std::uint32_t last = queue_begin_[queue + 1];
  for (std::uint32_t k = queue_begin_[queue]; k < last; ++k) {
    const std::uint32_t i = queue_ops_[k];
    while (state_[i] != 0) {
      // Woken by the completion that meets the last dependency, in the next
      // delta cycle (wake()).
      state_[i] |= kWaitedOn;
      waiting_for_[queue] = i;
      wait(wake_[queue]);
    }
    timings_[i].start_ps = now_ps();
    try {
      execute_(program_.ops[i]);
    } catch (...) {
      // Exceptions must not unwind through the kernel (they would surface as
      // an untyped sc_report); keep the first and stop the simulation.
      if (!failure_) failure_ = std::current_exception();
      sc_core::sc_stop();
      return;
    }
    complete(i);
  }
}

void Sequencer::complete(std::uint32_t op) {
  timings_[op].end_ps = now_ps();
  state_[op] = kDone;
  ++completed_;
  end_ps_ = std::max(end_ps_, timings_[op].end_ps);
  for (std::uint32_t e = first_dependent_[op]; e < first_dependent_[op + 1]; ++e) {
    const std::uint32_t j = dependents_[e];
    if (--state_[j] == kWaitedOn) wake(j);
  }
}

void Sequencer::wake(std::uint32_t op) {
  // For the next delta cycle, as the event that every completion notified
  // and every waiting thread shared. (That also woke threads for nothing,
  // and one so woken could take up an op completed in zero time earlier in
  // the same delta cycle, by the luck of the kernel's order: such a start
  // now comes one delta cycle later, at the same simulated time.)
  state_[op] = 0;
  // Few queues (one per engine instance), and only on a wakeup.
  for (std::size_t q = 0; q < waiting_for_.size(); ++q) {
    if (waiting_for_[q] != op) continue;
    waiting_for_[q] = kNoOp;
    wake_[q].notify(sc_core::SC_ZERO_TIME);
    return;
  }
}

void Sequencer::rethrow_failure() const {
  if (failure_) std::rethrow_exception(failure_);
}

std::vector<std::uint32_t> Sequencer::pending_ops() const {
  std::vector<std::uint32_t> out;
  for (std::uint32_t i = 0; i < state_.size(); ++i)
    if (state_[i] != kDone) out.push_back(i);
  return out;
}

}  // namespace hw
