#pragma once
// The hand-built pod programs the runtime's tests share: a wrapping ring
// of v5e chips, and every chip running a matmul followed by all-reduces.
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/pod_run.h"
#include "workloads/experiment.h"

namespace testing_runtime {

// The shipped all-gather experiment's chip on a wrapping ring of `chips`.
inline workloads::Experiment ring_experiment(int chips) {
  return workloads::load_experiment(std::string(TPUSIM_SOURCE_DIR) + "/configs/experiments/allgather-ring-v5e-16.yaml",
                                    {"pod={topology: ring, shape: [" + std::to_string(chips) + "], wraparound: true}",
                                     "mesh={x: " + std::to_string(chips) + "}"});
}

// Every one of `chips` chips runs the same program: a 512^3 matmul, then
// all-reduces of `bytes` on the ICI queues given (one per entry), each
// after the previous op of its queue.
inline runtime::PodProgram replicated_all_reduces(std::uint32_t chips, const std::vector<std::uint32_t>& queues,
                                                  std::uint64_t bytes) {
  runtime::PodProgram pp;
  hw::Program prog;
  hw::MatmulOp mm;
  mm.m = mm.k = mm.n = 512;
  const std::uint32_t first = prog.add({"matmul", {hw::EngineKind::mxu, 0}, mm, {}, 2.0 * 512 * 512 * 512});
  std::vector<std::uint32_t> last_on_queue(4, first);
  for (std::size_t i = 0; i < queues.size(); ++i) {
    interconnect::CollectiveSpec c;
    c.op = interconnect::CollectiveOp::all_reduce;
    c.bytes = bytes;
    c.element_bytes = 2;
    pp.collectives.push_back(c);
    pp.collective_names.push_back("all-reduce " + std::to_string(i));
    const std::uint32_t q = queues[i];
    last_on_queue[q] = prog.add({"all-reduce " + std::to_string(i),
                                 {hw::EngineKind::ici, q},
                                 hw::CommOp{static_cast<std::uint32_t>(i)},
                                 {last_on_queue[q]},
                                 0});
  }
  pp.add_replicas(std::move(prog), chips);
  return pp;
}

}  // namespace testing_runtime
