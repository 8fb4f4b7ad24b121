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
struct PodProgram {
  std::vector<hw::Program> programs;                      // the distinct programs
  std::vector<std::uint32_t> program_of;                  // per chip: its index in `programs`
  std::vector<interconnect::CollectiveSpec> collectives;  // referenced by CommOp index
  std::vector<std::string> collective_names;              // for reports and traces
  std::vector<CollectiveData> collective_data;            // functional runs: one per collective
  std::shared_ptr<void> buffers;                          // what functional ops point into

  std::uint32_t chip_count() const { return static_cast<std::uint32_t>(program_of.size()); }
  const hw::Program& chip(std::uint32_t c) const { return programs[program_of[c]]; }
  // A chip of its own, running `program`.
  void add_chip(hw::Program program);
  // `count` chips sharing one program.
  void add_replicas(hw::Program program, std::uint32_t count);
};

}  // namespace runtime
