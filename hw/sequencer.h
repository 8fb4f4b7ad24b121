#pragma once
// The TensorCore sequencer of one chip: one thread per engine instance that
// issues the engine's ops in program order, each as soon as its dependencies
// are done. It never polls: threads sleep on a completion event.
#include <systemc>

#include <exception>
#include <functional>
#include <vector>

#include "hw/program.h"

namespace hw {

class Sequencer : public sc_core::sc_module {
 public:
  using Executor = std::function<void(const Op&)>;  // blocking; called from the engine's thread

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
  void run_engine(std::vector<std::uint32_t> queue);
  bool ready(const Op& op) const;

  const Program& program_;
  Executor execute_;
  std::vector<char> done_;
  std::vector<OpTiming> timings_;
  std::size_t completed_ = 0;
  std::uint64_t end_ps_ = 0;
  sc_core::sc_event progress_;
  std::exception_ptr failure_;
};

}  // namespace hw
