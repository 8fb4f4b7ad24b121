#include "hw/sequencer.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace hw {

namespace {
std::uint64_t now_ps() { return static_cast<std::uint64_t>(sc_core::sc_time_stamp().value()); }
// Limits of the sequencer's state words: an op index must differ from its
// "no op" value, a dependency count must stay below its kWaitedOn bit.
constexpr std::uint32_t kNoOp = ~std::uint32_t{0};
constexpr std::uint32_t kMaxDeps = (std::uint32_t{1} << 31) - 1;
}  // namespace

ProgramGraph::ProgramGraph(const Program& program) : program_(program) {
  const std::size_t n = program_.ops.size();
  if (n >= kNoOp) throw std::logic_error("program has too many ops for a sequencer");
  deps_.resize(n);
  std::vector<std::uint32_t> queue_of(n);
  first_dependent_.assign(n + 1, 0);
  // One pass over the ops (they are large and scattered): engine queues in
  // order of first use, dependency counts, and the edges in a flat copy.
  // A dependency on a later op could never be met.
  std::vector<EngineRef> engines;
  std::vector<std::uint32_t> deps;
  for (std::uint32_t i = 0; i < n; ++i) {
    const Op& op = program_.ops[i];
    if (op.deps.size() >= kMaxDeps) throw std::logic_error("op '" + op.name + "' has too many dependencies");
    for (auto d : op.deps) {
      if (d >= i) throw std::logic_error("op '" + op.name + "' depends on a later op");
      ++first_dependent_[d + 1];
    }
    deps.insert(deps.end(), op.deps.begin(), op.deps.end());
    if (deps.size() > std::numeric_limits<std::uint32_t>::max())
      throw std::logic_error("program has too many dependencies for a sequencer");
    deps_[i] = static_cast<std::uint32_t>(op.deps.size());
    auto it = std::find(engines.begin(), engines.end(), op.engine);
    queue_of[i] = static_cast<std::uint32_t>(it - engines.begin());
    if (it == engines.end()) engines.push_back(op.engine);
  }

  // Dependents in CSR: counts -> starts; filling advances each start to the
  // next one's, and shifting back restores the starts.
  for (std::size_t i = 0; i < n; ++i) first_dependent_[i + 1] += first_dependent_[i];
  dependents_.resize(deps.size());
  for (std::uint32_t i = 0, e = 0; i < n; ++i)
    for (const std::uint32_t end = e + deps_[i]; e < end; ++e) dependents_[first_dependent_[deps[e]]++] = i;
  for (std::size_t i = n; i > 0; --i) first_dependent_[i] = first_dependent_[i - 1];
  first_dependent_[0] = 0;

  const auto queues = static_cast<std::uint32_t>(engines.size());
  queue_begin_.assign(queues + 1, 0);
  for (auto q : queue_of) ++queue_begin_[q + 1];
  for (std::size_t q = 0; q < queues; ++q) queue_begin_[q + 1] += queue_begin_[q];
  queue_ops_.resize(n);
  std::vector<std::uint32_t> next(queue_begin_.begin(), queue_begin_.end() - 1);
  for (std::uint32_t i = 0; i < n; ++i) queue_ops_[next[queue_of[i]]++] = i;
}

Sequencer::Sequencer(sc_core::sc_module_name name, const Program& program, OpExecutor& executor, std::uint32_t chip)
    : Sequencer(name, std::make_shared<const ProgramGraph>(program), executor, chip) {}

Sequencer::Sequencer(sc_core::sc_module_name name, std::shared_ptr<const ProgramGraph> graph, OpExecutor& executor,
                     std::uint32_t chip)
    : sc_core::sc_module(name),
      graph_(std::move(graph)),
      g_(*graph_),
      executor_(executor),
      state_(g_.deps_),
      next_(g_.queue_begin_.begin(), g_.queue_begin_.end() - 1),
      running_(next_.size(), kNone),
      start_(*this, sim::AlarmRank::chip(chip, sim::AlarmRank::Engine::start)),
      timings_(std::make_shared<std::vector<OpTiming>>(state_.size())) {
  // At time 0 every engine looks at its first op, in order of first use:
  // rung by the calendar, so that chips start in the order of their index,
  // not of their elaboration.
  for (std::uint32_t q = 0; q < next_.size(); ++q) woken_.push_back(q);
  start_.notify(0);
  SC_METHOD(on_wake);
  sensitive << wake_;
  dont_initialize();
}

void Sequencer::on_wake() {
  waking_.swap(woken_);  // engines woken from here on run in the next delta cycle
  for (const std::uint32_t q : waking_) run_queue(q);
  waking_.clear();
}

void Sequencer::run_queue(std::uint32_t queue) {
  const std::uint32_t last = g_.queue_begin_[queue + 1];
  while (running_[queue] == kNone && next_[queue] < last) {
    const std::uint32_t i = g_.queue_ops_[next_[queue]];
    if (state_[i] != 0) {
      // The completion that meets the last dependency wakes this engine,
      // for the next delta cycle (finish()).
      state_[i] |= kWaitedOn;
      return;
    }
    running_[queue] = i;
    (*timings_)[i].start_ps = now_ps();
    // A start may complete other engines' ops and run their queues (this
    // function, re-entered); the op under way is restored afterwards.
    const std::uint32_t outer = starting_;
    const bool outer_inside = completed_inside_;
    starting_ = i;
    completed_inside_ = false;
    try {
      executor_.start(g_.program_.ops[i], Completion{this, std::uint64_t{queue} << 32 | i});
    } catch (...) {
      // Exceptions must not unwind through the kernel (they would surface as
      // an untyped sc_report) nor through the process of another unit (an
      // op may start inside a DMA's or the network's completion). The op
      // keeps its engine and stays pending.
      starting_ = outer;
      completed_inside_ = outer_inside;
      fail(std::current_exception());
      return;
    }
    const bool inside = completed_inside_;
    starting_ = outer;
    completed_inside_ = outer_inside;
    if (!inside) return;  // completed() goes on from there
    running_[queue] = kNone;
    ++next_[queue];
  }
}

void Sequencer::completed(std::uint64_t token) {
  const auto op = static_cast<std::uint32_t>(token);
  finish(op);
  if (op == starting_) {
    // An op that took no time: run_queue() goes on with the next one.
    completed_inside_ = true;
    return;
  }
  // The engine is free: its next op goes on in this delta cycle if ready.
  const auto queue = static_cast<std::uint32_t>(token >> 32);
  running_[queue] = kNone;
  ++next_[queue];
  run_queue(queue);
}

void Sequencer::failed(std::uint64_t /*op*/, std::exception_ptr error) { fail(std::move(error)); }

void Sequencer::fail(std::exception_ptr error) {
  // Keep the first and stop the simulation.
  if (!failure_) failure_ = std::move(error);
  sc_core::sc_stop();
}

void Sequencer::finish(std::uint32_t op) {
  (*timings_)[op].end_ps = now_ps();
  state_[op] = kDone;
  ++completed_;
  end_ps_ = std::max(end_ps_, (*timings_)[op].end_ps);
  for (std::uint32_t e = g_.first_dependent_[op]; e < g_.first_dependent_[op + 1]; ++e) {
    const std::uint32_t j = g_.dependents_[e];
    if (--state_[j] != kWaitedOn) continue;
    // j was its idle engine's next op and is ready now: the engine takes it
    // in the next delta cycle (one activation for every engine woken in
    // this one, in the order they were woken).
    state_[j] = 0;
    if (woken_.empty()) wake_.notify(sc_core::SC_ZERO_TIME);
    // Few queues (one per engine instance), and only on a wakeup: the idle
    // one whose next op is j.
    for (std::uint32_t q = 0; q < running_.size(); ++q) {
      if (running_[q] != kNone || next_[q] == g_.queue_begin_[q + 1] || g_.queue_ops_[next_[q]] != j) continue;
      woken_.push_back(q);
      break;
    }
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
