#pragma once
// The TensorCore sequencer of one chip, event-driven: it keeps each engine
// instance's ops in program order and starts an op, through a non-blocking
// executor, when its dependencies are done and its engine is free; it hears
// of completions through hw::Completion callbacks. No thread, no polling:
// every op counts its unmet dependencies, and only the completion that
// brings the count of an engine's next op to zero while the engine is idle
// wakes that engine, for the next delta cycle (one method activation for
// all engines woken in a delta cycle). An engine whose op completes goes on
// with its next op at once, in the same delta cycle, if that op is ready.
#include <systemc>

#include <cstdint>
#include <exception>
#include <memory>
#include <vector>

#include "hw/completion.h"
#include "hw/program.h"
#include "sim/calendar.h"

namespace hw {

// Runs ops for a sequencer (hw::Chip, or a pod's runtime in front of one).
class OpExecutor {
 public:
  // Starts `op` now and returns without waiting; `done` is called once when
  // it completes: from a later process activation, or from inside start()
  // for an op that takes no time (it then completes in the delta cycle it
  // started in). The sequencer runs one op per engine instance at a time.
  // An op that cannot start throws from start(); the sequencer stops the run.
  virtual void start(const Op& op, Completion done) = 0;

 protected:
  ~OpExecutor() = default;
};

// What a sequencer reads of a program, worked out once: each engine
// instance's ops in program order and each op's dependents. Sequencers of
// chips that run one program share it; only their progress is their own.
class ProgramGraph {
 public:
  // `program` must outlive the graph and stay unchanged. Throws
  // std::logic_error when an op depends on itself or a later op.
  explicit ProgramGraph(const Program& program);
  const Program& program() const { return program_; }

 private:
  friend class Sequencer;
  const Program& program_;
  std::vector<std::uint32_t> deps_;  // per op: how many it depends on
  // The ops that depend on op i (CSR, in program order):
  // dependents_[first_dependent_[i] .. first_dependent_[i + 1]).
  std::vector<std::uint32_t> first_dependent_;
  std::vector<std::uint32_t> dependents_;
  // Queue q (one per engine instance, in order of first use) issues
  // queue_ops_[queue_begin_[q] .. queue_begin_[q + 1]) in that order.
  std::vector<std::uint32_t> queue_ops_;
  std::vector<std::uint32_t> queue_begin_;
};

class Sequencer : public sc_core::sc_module, private CompletionListener, private sim::Alarm::Listener {
 public:
  SC_HAS_PROCESS(Sequencer);
  // `executor` (and the program) must outlive the sequencer. Ops start from
  // time 0, after elaboration, from the calendar in the order of `chip`, the
  // index of the chip it runs (sim/calendar.h). The first form works out the
  // program's graph for itself (and throws std::logic_error as ProgramGraph
  // does).
  Sequencer(sc_core::sc_module_name name, const Program& program, OpExecutor& executor, std::uint32_t chip = 0);
  Sequencer(sc_core::sc_module_name name, std::shared_ptr<const ProgramGraph> graph, OpExecutor& executor,
            std::uint32_t chip = 0);

  const Program& program() const { return graph_->program(); }
  const std::vector<OpTiming>& timings() const { return *timings_; }
  // The same, kept alive for as long as the caller needs it (no copy).
  std::shared_ptr<const std::vector<OpTiming>> shared_timings() const { return timings_; }
  bool finished() const { return completed_ == state_.size(); }
  // Ops not completed, in program order (for deadlock reports: the first of
  // a chip is what it waits in).
  std::vector<std::uint32_t> pending_ops() const;
  std::uint64_t end_ps() const { return end_ps_; }  // completion of the last op
  // An exception thrown by an op (from the executor's start, or reported
  // through Completion::fail, e.g. sim::SimFailure from a DMA) stops the
  // simulation; the caller rethrows it after sc_start() returns.
  void rethrow_failure() const;

 private:
  void completed(std::uint64_t op) override;
  void failed(std::uint64_t op, std::exception_ptr error) override;
  void fail(std::exception_ptr error);
  // Marks `op` done and wakes the idle engines whose next op it made ready.
  void finish(std::uint32_t op);
  // Engine `queue` is free: starts its ops in order while they are ready
  // (ops that take no time complete inside), then leaves the next one
  // waited on.
  void run_queue(std::uint32_t queue);
  void on_wake();
  void ring() override { on_wake(); }  // the start, at time 0

  // state_[op]: dependencies not done yet (low 31 bits), kWaitedOn while it
  // is its idle engine's next op, kDone once it completed.
  static constexpr std::uint32_t kWaitedOn = std::uint32_t{1} << 31;
  static constexpr std::uint32_t kDone = ~std::uint32_t{0};
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};

  const std::shared_ptr<const ProgramGraph> graph_;
  const ProgramGraph& g_;
  OpExecutor& executor_;
  std::vector<std::uint32_t> state_;
  // Per queue: the position (in g_.queue_ops_) of its next op, and the op
  // it runs (kNone while idle). A completion's token carries its op's queue.
  std::vector<std::uint32_t> next_;
  std::vector<std::uint32_t> running_;
  // Engines woken for the next delta cycle, in the order they were woken
  // (all of them at time 0); on_wake runs them.
  std::vector<std::uint32_t> woken_, waking_;
  sc_core::sc_event wake_;
  sim::Alarm start_;  // at time 0
  // The op whose start() is under way, and whether it completed inside it.
  std::uint32_t starting_ = kNone;
  bool completed_inside_ = false;
  std::shared_ptr<std::vector<OpTiming>> timings_;
  std::size_t completed_ = 0;
  std::uint64_t end_ps_ = 0;
  std::exception_ptr failure_;
};

}  // namespace hw
