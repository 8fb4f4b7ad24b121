#include "interconnect/collective_spec.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include "interconnect/mesh.h"
#include "sim/error.h"
#include "sim/params.h"

namespace interconnect {

namespace {
// Ceiling on functional buffers: every chip's values are held in memory.
constexpr std::uint64_t kMaxFunctionalElements = std::uint64_t{1} << 27;

std::string op_list(const std::vector<CollectiveOp>& ops) {
  std::string s;
  for (CollectiveOp op : ops) s += (s.empty() ? "" : ", ") + std::string(to_string(op));
  return s;
}
}  // namespace

const std::vector<AlgorithmInfo>& collective_algorithms() {
  using Op = CollectiveOp;
  static const std::vector<AlgorithmInfo> table = [] {
    const std::vector<Op> reductions = {Op::all_reduce, Op::reduce_scatter, Op::all_gather};
    std::vector<Op> rings = reductions;
    rings.push_back(Op::broadcast);  // a pipelined chain along the ring from the root
    return std::vector<AlgorithmInfo>{
        {Algorithm::ring, "ring", "one ring through the group", rings, {}},
        {Algorithm::bidirectional_ring,
         "bidirectional_ring",
         "the ring both ways, half the data each way",
         rings,
         {Op::broadcast}},
        // On one axis the torus is the bidirectional ring (or, on a mesh
        // axis, the bidirectional line).
        {Algorithm::torus, "torus", "streams along every axis in both directions at once", reductions, reductions},
        {Algorithm::direct,
         "direct",
         "every block straight to its chip",
         {Op::all_to_all, Op::permute},
         {Op::all_to_all, Op::permute}},
        {Algorithm::dimension_ordered,
         "dimension_ordered",
         "one phase per axis, blocks aggregated and forwarded",
         {Op::all_to_all},
         {},
         false}};
  }();
  return table;
}

const AlgorithmInfo& algorithm_info(Algorithm a) {
  for (const AlgorithmInfo& info : collective_algorithms())
    if (info.algorithm == a) return info;
  throw std::logic_error("algorithm_info: auto is no algorithm of its own");
}

bool implements(Algorithm a, CollectiveOp op) {
  if (a == Algorithm::automatic) return true;
  const std::vector<CollectiveOp>& ops = algorithm_info(a).ops;
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

const sim::EnumNames<CollectiveOp>& collective_op_names() {
  static const sim::EnumNames<CollectiveOp> names("collective", {{CollectiveOp::all_reduce, "all_reduce", ""},
                                                                 {CollectiveOp::reduce_scatter, "reduce_scatter", ""},
                                                                 {CollectiveOp::all_gather, "all_gather", ""},
                                                                 {CollectiveOp::all_to_all, "all_to_all", ""},
                                                                 {CollectiveOp::permute, "permute", ""},
                                                                 {CollectiveOp::broadcast, "broadcast", ""}});
  return names;
}

const sim::EnumNames<Algorithm>& algorithm_names() {
  static const sim::EnumNames<Algorithm> names = [] {
    std::vector<sim::EnumChoice<Algorithm>> choices = {{Algorithm::automatic, "auto", "the op's default"}};
    for (const AlgorithmInfo& a : collective_algorithms())
      choices.push_back({a.algorithm, a.name, op_list(a.ops) + ": " + a.how});
    return sim::EnumNames<Algorithm>("algorithm", std::move(choices));
  }();
  return names;
}

const sim::EnumNames<Algorithm>& algorithm_names_for(CollectiveOp op) {
  static const std::map<CollectiveOp, sim::EnumNames<Algorithm>> per_op = [] {
    std::map<CollectiveOp, sim::EnumNames<Algorithm>> out;
    for (const auto& o : collective_op_names().choices()) {
      std::vector<sim::EnumChoice<Algorithm>> choices;
      for (const AlgorithmInfo& a : collective_algorithms())
        if (implements(a.algorithm, o.value)) choices.push_back({a.algorithm, a.name, a.how});
      out.emplace(o.value, sim::EnumNames<Algorithm>(o.name + " algorithm", std::move(choices)));
    }
    return out;
  }();
  return per_op.at(op);
}

const char* to_string(CollectiveOp op) { return collective_op_names().name(op); }

const char* to_string(Algorithm a) { return algorithm_names().name(a); }

Algorithm resolve_algorithm(CollectiveOp op, Algorithm requested) {
  if (requested != Algorithm::automatic) return requested;
  for (const AlgorithmInfo& a : collective_algorithms())
    if (std::find(a.default_for.begin(), a.default_for.end(), op) != a.default_for.end()) return a.algorithm;
  throw std::logic_error(std::string("resolve_algorithm: no default algorithm for ") + to_string(op));
}

double bus_bandwidth_factor(CollectiveOp op, int n) {
  const double r = n;
  switch (op) {
    case CollectiveOp::all_reduce: return 2.0 * (r - 1.0) / r;
    case CollectiveOp::reduce_scatter:
    case CollectiveOp::all_gather:
    case CollectiveOp::all_to_all: return (r - 1.0) / r;
    case CollectiveOp::permute:
    case CollectiveOp::broadcast: return 1.0;
  }
  return 1.0;
}

void CollectiveSpec::validate(const PodNetworkConfig& pod) const {
  const Algorithm algo = resolve_algorithm(op, algorithm);
  if (!implements(algo, op)) {
    sim::reject("workload.algorithm",
                std::string("algorithm ") + to_string(algo) + " does not implement " + to_string(op));
  }
  if (element_bytes != 1 && element_bytes != 2 && element_bytes != 4 && element_bytes != 8) {
    sim::reject("workload.element_bytes", "must be 1, 2, 4 or 8, got " + std::to_string(element_bytes));
  }
  if (bytes == 0) sim::reject("workload.bytes", "must be > 0");
  if (bytes % static_cast<std::uint64_t>(element_bytes) != 0) {
    sim::reject("workload.bytes", std::to_string(bytes) + " is not a whole number of " + std::to_string(element_bytes) +
                                      "-byte elements");
  }
  const Topology topology = pod.make_topology();
  const Mesh mesh(topology, pod.mesh);
  int n = 1;
  for (const AxisPart& a : mesh.resolve(axes, "workload.axes")) n *= a.size;
  const std::uint64_t elements = bytes / static_cast<std::uint64_t>(element_bytes);
  // Padding rule: none. Shard-shaped ops need the buffer to split into equal
  // whole-element shards; all_reduce, permute and broadcast take any size.
  if (!pair_elements.empty()) {
    if (op != CollectiveOp::all_to_all) sim::reject("workload.pair_elements", "only an all_to_all has blocks per pair");
    if (pair_elements.size() != static_cast<std::size_t>(n) * static_cast<std::size_t>(n))
      sim::reject("workload.pair_elements", "expected " + std::to_string(n) + " x " + std::to_string(n) +
                                                " blocks, got " + std::to_string(pair_elements.size()));
    if (functional) sim::reject("functional", "an all_to_all with blocks per pair runs for its timing only");
  } else if (functional && !algorithm_info(algo).functional) {
    // A dimension-ordered all-to-all forwards, in each phase, blocks that sit
    // at strided slots of the buffer; the schedule moves them as one message
    // per peer, so it has no element layout to check.
    sim::reject("functional", std::string("a ") + to_string(algo) + " " + to_string(op) + " runs for its timing only");
  } else if ((op == CollectiveOp::reduce_scatter || op == CollectiveOp::all_gather || op == CollectiveOp::all_to_all) &&
             elements % static_cast<std::uint64_t>(n) != 0) {
    sim::reject("workload.bytes", std::to_string(bytes) + " bytes (" + std::to_string(elements) + " elements of " +
                                      std::to_string(element_bytes) + " bytes) do not divide among " +
                                      std::to_string(n) + " participants; use a multiple of " +
                                      std::to_string(static_cast<std::uint64_t>(n) * element_bytes) + " bytes");
  }
  if (op == CollectiveOp::broadcast && (root < 0 || root >= n)) {
    sim::reject("workload.root", "must be in [0, " + std::to_string(n) + "), got " + std::to_string(root));
  }
  if (pipeline_chunks < 0) sim::reject("workload.pipeline_chunks", "must be >= 0");
  if (op == CollectiveOp::permute) {
    std::set<int> sources, destinations;
    for (const auto& [s, d] : pairs) {
      if (s < 0 || s >= n || d < 0 || d >= n) {
        sim::reject("workload.pairs", "pair (" + std::to_string(s) + ", " + std::to_string(d) +
                                          ") is outside the group of " + std::to_string(n) + " chips");
      }
      if (!sources.insert(s).second) sim::reject("workload.pairs", "source " + std::to_string(s) + " appears twice");
      if (!destinations.insert(d).second)
        sim::reject("workload.pairs", "destination " + std::to_string(d) + " appears twice");
    }
  }
  if (functional && elements * static_cast<std::uint64_t>(topology.chips()) > kMaxFunctionalElements) {
    sim::reject("functional", "a functional run holds every chip's buffer; " + std::to_string(topology.chips()) +
                                  " x " + std::to_string(elements) + " elements exceeds " +
                                  std::to_string(kMaxFunctionalElements));
  }
}

}  // namespace interconnect
