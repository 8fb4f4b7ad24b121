#pragma once
// Mixture-of-experts routing (docs/models.md#mixture-of-experts): how many
// of each chip's tokens its router sends to each expert in one layer of one
// step, drawn deterministically from the config, and how many of them the
// expert's capacity keeps.
//
//   uniform   every expert gets exactly its share: each source's t x top_k
//             assignments split evenly over the experts (largest remainder,
//             lower experts first); the ideal a load-balancing loss aims at.
//             No draw, the seed is not used.
//   zipf      expert popularity p ~ 1 / rank^skew (rank 1 the hottest),
//             the ranks dealt to the experts by a shuffle of the seed, per
//             layer; then each token picks top_k distinct experts, one after
//             another, each with probability p among those it has not
//             picked (sampling without replacement). The draws come from
//             SplitMix64 (Steele, Lea and Flood 2014; the generator of
//             java.util.SplittableRandom), seeded with
//             seed, layer and source chip, so a report is the same on any
//             platform and standard library.
//   measured  `loads` gives each expert's share of the assignments (as a
//             profile of a real router measured it), the same in every
//             layer, split exactly as uniform splits its equal shares.
//
// Capacity (GShard, Lepikhin et al. 2020, arXiv:2006.16668 s.2.2; Switch
// Transformer, Fedus et al. 2021, arXiv:2101.03961 s.2.2): with a capacity
// factor c > 0, each expert takes at most ceil(c x t x top_k / experts) of
// one source chip's t tokens (GShard's per-group capacity, a group being
// one chip's tokens); the rest are dropped (they skip the expert and pass
// on through the residual). c = 0: no capacity, nothing dropped (dropless,
// as Mixtral and MegaBlocks run).
#include <cstdint>
#include <string>
#include <vector>

namespace models {

struct RoutingConfig {
  std::string distribution = "uniform";  // uniform | zipf | measured
  double skew = 1.0;                     // zipf exponent
  std::uint64_t seed = 1;                // zipf draws
  std::vector<double> loads;             // measured: per expert, relative
};

// One layer's routing among `sources` chips of an expert group.
struct LayerRouting {
  std::uint32_t sources = 0, experts = 0;
  std::uint64_t capacity = 0;         // per source and expert; 0: none
  std::vector<std::uint64_t> routed;  // [source x experts + expert]: tokens the router picked
  std::vector<std::uint64_t> kept;    // the same after capacity
  // GShard's one-hot einsum dispatch (expert_matmul: einsum) fills buffers
  // of this many rows per source and expert, sent and computed however many
  // of them the router fills; 0: the kept tokens are what moves.
  std::uint64_t buffer_rows = 0;

  std::uint64_t routed_to(std::uint32_t expert) const;  // over the sources
  std::uint64_t kept_by(std::uint32_t expert) const;
  // The rows source `source` sends expert `expert` (its buffer, or the
  // tokens it keeps), and their sum over the sources: what the expert's
  // chip receives and computes.
  std::uint64_t rows(std::uint32_t source, std::uint32_t expert) const;
  std::uint64_t rows_for(std::uint32_t expert) const;
  std::uint64_t dropped() const;
  std::uint64_t assignments() const;  // tokens x top_k, over the sources
};

// The routing of layer `layer` (0-based block index) for `sources` chips of
// `tokens` tokens each. Throws std::invalid_argument on bad sizes (top_k
// above experts, measured loads not one per expert or an expert asked for
// more than every token once).
LayerRouting route_layer(const RoutingConfig& cfg, std::uint32_t experts, std::uint32_t top_k, double capacity_factor,
                         std::uint32_t sources, std::uint64_t tokens, std::uint64_t layer);

}  // namespace models
