#pragma once
// The TensorCore sequencer of one chip: one thread per engine instance that
// issues the engine's ops in program order, each as soon as its dependencies
// are done. It never polls, and only a thread that can go on is woken: every
// op counts its unmet dependencies, and the completion that brings an op's
// count to zero while its engine's thread waits for it notifies that
// thread's event, for the next delta cycle.
#include <systemc>

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <vector>

#include "hw/program.h"

namespace hw {

class Sequencer : public sc_core::sc_module {
 public:
  using Executor = std::function<void(const Op&)>;  // blocking; called from the engine's thread

  // `program` must outlive the sequencer and stay unchanged; it is only read,
  // so several sequencers may share one. Throws std::logic_error when an op
  // depends on itself or a later op.
  Sequencer(sc_core::sc_module_name name, const Program& program, Executor execute);

  const Program& program() const { return program_; }
  const std::vector<OpTiming>& timings() const { return timings_; }
  bool finished() const { return completed_ == program_.ops.size(); }
  // Ops not completed, with what each still waits for (for deadlock reports).
  std::vector<std::uint32_t> pending_ops() const;
  std::uint64_t end_ps() const { return end_ps_; }  // completion of the last op
  // An exception thrown by an op (e.g. sim::SimFailure from a DMA) stops the
  // simulation; the caller rethrows it after sc_start() returns.
  void rethrow_failure() const;

 private:
  void run_engine(std::uint32_t queue);
  void complete(std::uint32_t op);
  void wake(std::uint32_t op);

  // state_[op]: dependencies not done yet (low 31 bits), kWaitedOn while the
  // op's engine thread sleeps until that count is zero, kDone once it ran.
  static constexpr std::uint32_t kWaitedOn = std::uint32_t{1} << 31;
  static constexpr std::uint32_t kDone = ~std::uint32_t{0};
  static constexpr std::uint32_t kNoOp = ~std::uint32_t{0};

  const Program& program_;
  Executor execute_;
  std::vector<std::uint32_t> state_;
  // The ops that depend on op i (CSR, in program order):
  // dependents_[first_dependent_[i] .. first_dependent_[i + 1]).
  std::vector<std::uint32_t> first_dependent_;
  std::vector<std::uint32_t> dependents_;
  // Queue q (one per engine instance) issues
  // queue_ops_[queue_begin_[q] .. queue_begin_[q + 1]) in that order.
  std::vector<std::uint32_t> queue_ops_;
  std::vector<std::uint32_t> queue_begin_;
  std::vector<std::uint32_t> waiting_for_;     // per queue: the op its thread sleeps on, or kNoOp
  std::unique_ptr<sc_core::sc_event[]> wake_;  // per queue
  std::vector<OpTiming> timings_;
  std::size_t completed_ = 0;
  std::uint64_t end_ps_ = 0;
  std::exception_ptr failure_;
};

}  // namespace hw
