#pragma once
// What a pod runs: one hw::Program per chip (identical ones shared), the
// pod-wide collectives their CommOps name, and, in functional runs, where
// each collective's values come from and go to.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hw/program.h"
#include "interconnect/collective_spec.h"

namespace runtime {

// Functional runs: where a collective's values come from on each chip
// (read when the chip joins) and where its result goes (when it is done).
struct CollectiveData {
  std::function<std::vector<double>(int chip)> input;
  std::function<void(int chip, const std::vector<double>& output)> output;
};

// Chips whose programs are identical share one: data-parallel replicas
// run the same program, and a 4096-chip pod then holds one copy, not 4096.
//
// Point-to-point messages name their peer relative to the chip: a SendOp's
// or RecvOp's `peer` is an index into the chip's own peer table (`peers`),
// which the runtime resolves to a chip. A pipeline stage's program says
// "the previous stage" (entry 0) and "the next stage" (entry 1) of the
// chip's pipeline, so the chips of one stage across data- and
// tensor-parallel ranks share one program, as collectives (named by stage
// and layer) already let them.
struct PodProgram {
  static constexpr std::uint32_t kNoPeer = ~std::uint32_t{0};  // a peer table entry that names no chip

  std::vector<hw::Program> programs;                      // the distinct programs
  std::vector<std::uint32_t> program_of;                  // per chip: its index in `programs`
  std::vector<std::vector<std::uint32_t>> peers;          // per chip (or empty: no messages): its peer table
  std::vector<interconnect::CollectiveSpec> collectives;  // referenced by CommOp index
  std::vector<std::string> collective_names;              // for reports and traces
  std::vector<CollectiveData> collective_data;            // functional runs: one per collective
  std::shared_ptr<void> buffers;                          // what functional ops point into

  std::uint32_t chip_count() const { return static_cast<std::uint32_t>(program_of.size()); }
  const hw::Program& chip(std::uint32_t c) const { return programs[program_of[c]]; }
  // The chip that entry `slot` of chip c's peer table names; throws
  // std::logic_error when there is none.
  std::uint32_t peer(std::uint32_t c, std::uint32_t slot) const;
  // A chip of its own, running `program`.
  void add_chip(hw::Program program);
  // `count` chips sharing one program.
  void add_replicas(hw::Program program, std::uint32_t count);
  // A program for chips to share, not yet given to any (set program_of);
  // returns its index.
  std::uint32_t add_program(hw::Program program);
};

}  // namespace runtime
