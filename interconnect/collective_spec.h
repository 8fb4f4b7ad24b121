#pragma once
// What collective to run: the fields of a `kind: collective` workload
// (docs/interface.md) as a plain struct. validate() throws sim::ConfigError naming
// the field ("workload.bytes").
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "interconnect/pod_config.h"

namespace interconnect {

enum class CollectiveOp { all_reduce, reduce_scatter, all_gather, all_to_all, permute, broadcast };

// automatic picks the op's default (AlgorithmInfo::default_for).
enum class Algorithm { automatic, ring, bidirectional_ring, torus, direct, dimension_ordered };

// One collective algorithm (algorithms.h has how each moves its data): the
// one place its word, its line of description and the ops it implements are
// spelled. algorithm_names(), algorithm_names_for(), resolve_algorithm() and
// CollectiveSpec::validate() derive from this table.
struct AlgorithmInfo {
  Algorithm algorithm;
  std::string name;                       // the YAML spelling
  std::string how;                        // a line shown beside the word in messages
  std::vector<CollectiveOp> ops;          // the ops it implements
  std::vector<CollectiveOp> default_for;  // the ops `auto` gives it
  bool functional = true;                 // moves real values (false: timing only)
};
// Every algorithm but automatic, in documentation order.
const std::vector<AlgorithmInfo>& collective_algorithms();
const AlgorithmInfo& algorithm_info(Algorithm a);  // not automatic
bool implements(Algorithm a, CollectiveOp op);     // auto: every op (it resolves to one that does)

// The YAML spellings (EnumNames::parse throws sim::ConfigError for other words).
const sim::EnumNames<CollectiveOp>& collective_op_names();
// auto and every algorithm, each described by the ops it implements and how.
const sim::EnumNames<Algorithm>& algorithm_names();
// The algorithms that implement `op` (not auto), each described by how: the
// words a key fixed to one op takes (a training step's expert all-to-alls).
const sim::EnumNames<Algorithm>& algorithm_names_for(CollectiveOp op);
const char* to_string(CollectiveOp op);
const char* to_string(Algorithm a);

Algorithm resolve_algorithm(CollectiveOp op, Algorithm requested);

// NCCL-tests busbw = algbw x factor (nccl-tests doc/PERFORMANCE.md, quoted in
// docs/reference/formulas.md §1); n = ranks in one group.
double bus_bandwidth_factor(CollectiveOp op, int n);

struct CollectiveSpec {
  CollectiveOp op = CollectiveOp::all_reduce;
  Algorithm algorithm = Algorithm::automatic;
  // Each participant's full buffer, as NCCL-tests counts it: the array
  // reduced (all_reduce), the input (reduce_scatter, all_to_all), the output
  // (all_gather), what is sent (permute, broadcast).
  std::uint64_t bytes = 0;
  int element_bytes = 4;          // 1, 2, 4 or 8
  std::vector<std::string> axes;  // mesh axes taking part; empty: all
  int root = 0;                   // broadcast: source, as an index in its group
  // permute: (source, destination) indices in the group, each source and
  // each destination at most once; empty: every chip sends to the next one
  // in group order (the last to the first).
  std::vector<std::pair<int, int>> pairs;
  // all_to_all with unequal blocks (a mixture of experts' dispatch):
  // elements chip of rank i sends to the chip of rank j at [i x n + j],
  // n x n for a group of n, the same in every group; empty: every block
  // bytes / n (timing only: not with functional).
  std::vector<std::uint64_t> pair_elements;
  int pipeline_chunks = 0;  // broadcast: pieces the data is pipelined in; 0: chosen from link latency
  bool functional = false;  // move real values and check the result
  // Driven by the chips' SparseCores (an offloaded collective, hw/sparsecore.h):
  // its reductions are their HBM flows, not the TensorCores' vector work
  // (runtime/chip_reduction.h). Timing and plan otherwise the same.
  bool sparsecore = false;

  // Checks the spec against a (valid) pod.
  void validate(const PodNetworkConfig& pod) const;
};

}  // namespace interconnect
