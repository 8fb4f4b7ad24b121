#include "workloads/train/input.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include "sim/random.h"

namespace workloads {

namespace {

const sim::Range kTokens = sim::between(1, 1 << 24);
constexpr double kTwoPi = 6.283185307179586;  // 2 pi to double precision (M_PI is not ISO C++)

// A count of tokens that may be left out (none: model.seq_len).
void read_tokens(const sim::YamlNode& n, std::optional<std::uint64_t>& out) {
  out = sim::read_integer_as<std::uint64_t>(n, kTokens, "tokens");
}

}  // namespace

const sim::ParamTable<InputSpec>& input_params() {
  static const sim::ParamTable<InputSpec> t = [] {
    sim::ParamTable<InputSpec> p(
        "workload.input",
        "each data-parallel replica's tokens per sequence this step, drawn from a distribution (at most "
        "model.seq_len): replicas of different lengths are simulated apart and the gradient collectives wait for "
        "the slowest (workloads/train/input.h)");
    const sim::Doc tokens{"integer", "tokens", "model.seq_len", kTokens.str() + ", at most model.seq_len"};
    p.choice("distribution", &InputSpec::distribution, {"fixed", "uniform", "lognormal", "measured"},
             std::string("fixed"),
             "fixed: every replica `length` tokens; uniform: each replica a length in [min, max] from the seed; "
             "lognormal: median x exp(sigma z), z standard normal from the seed, clamped to [1, model.seq_len]; "
             "measured: `lengths`, one per replica")
        .custom("length", tokens, "fixed: every replica's tokens per sequence",
                [](const sim::YamlNode& n, InputSpec& s) { read_tokens(n, s.length); })
        .integer<std::uint64_t>("min", &InputSpec::min, "tokens", 1, kTokens, "uniform: the shortest length")
        .custom("max", tokens, "uniform: the longest length",
                [](const sim::YamlNode& n, InputSpec& s) { read_tokens(n, s.max); })
        .real("median", &InputSpec::median, "tokens", "none (required by lognormal)", sim::between(1, 1 << 24),
              "lognormal: the median length, exp(mu)")
        .real("sigma", &InputSpec::sigma, "", 0.5, sim::between(0, 4),
              "lognormal: the standard deviation of the length's logarithm")
        .list<std::uint64_t>("lengths", &InputSpec::lengths, sim::integer_item<std::uint64_t>("tokens", kTokens),
                             {1, 1 << 16, false}, "none",
                             "measured: each replica's length, in replica order (data rank x fsdp degree + fsdp rank)")
        .integer<std::uint64_t>("bucket", &InputSpec::bucket, "tokens", 1, kTokens,
                                "lengths rounded up to a multiple of this (length buckets), never above "
                                "model.seq_len; fewer distinct lengths, fewer programs to simulate")
        .integer<std::uint64_t>("seed", &InputSpec::seed, "", 1, sim::at_least(0),
                                "uniform and lognormal: the draws (std::mt19937_64); the same seed gives the same "
                                "report")
        .then([](const sim::YamlNode& node, InputSpec& s) {
          s.enabled = true;
          const std::pair<const char*, const char*> owner[] = {{"length", "fixed"},    {"min", "uniform"},
                                                               {"max", "uniform"},     {"median", "lognormal"},
                                                               {"sigma", "lognormal"}, {"lengths", "measured"}};
          for (const auto& [key, distribution] : owner)
            if (node[key].present() && s.distribution != distribution)
              node[key].fail(std::string(key) + " is read with distribution: " + distribution + " only (it is " +
                             s.distribution + ")");
          if (s.distribution == "lognormal" && !s.median)
            node["distribution"].fail("lognormal lengths need median: the median tokens per sequence");
          if (s.distribution == "measured" && s.lengths.empty())
            node["distribution"].fail("measured lengths need lengths: one per data-parallel replica");
          if (s.max && s.min > *s.max)
            node["min"].fail("min " + std::to_string(s.min) + " is above max " + std::to_string(*s.max));
        });
    return p;
  }();
  return t;
}

std::vector<std::uint64_t> replica_lengths(const InputSpec& spec, std::uint64_t seq_len, std::uint32_t replicas) {
  std::vector<std::uint64_t> out(replicas, seq_len);
  if (!spec.enabled) return out;
  const std::string& d = spec.distribution;
  if (d == "measured" && spec.lengths.size() != replicas)
    throw std::invalid_argument("replica_lengths: measured needs one length per replica");
  std::mt19937_64 rng(spec.seed);
  for (std::uint32_t r = 0; r < replicas; ++r) {
    std::uint64_t n = seq_len;
    if (d == "fixed") {
      n = spec.length.value_or(seq_len);
    } else if (d == "uniform") {
      const std::uint64_t hi = spec.max.value_or(seq_len);
      n = spec.min + static_cast<std::uint64_t>(sim::uniform01(rng) * double(hi - spec.min + 1));
    } else if (d == "lognormal") {
      // Box-Muller (1958): 1 - u1 is in (0, 1], so the logarithm is finite.
      const double u1 = sim::uniform01(rng), u2 = sim::uniform01(rng);
      const double z = std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(kTwoPi * u2);
      const double x = std::round(*spec.median * std::exp(spec.sigma * z));
      n = static_cast<std::uint64_t>(std::clamp(x, 1.0, double(seq_len)));
    } else if (d == "measured") {
      n = spec.lengths[r];
    } else {
      throw std::invalid_argument("replica_lengths: unknown distribution '" + d + "'");
    }
    if (n == 0 || n > seq_len) throw std::invalid_argument("replica_lengths: a length outside [1, seq_len]");
    out[r] = std::min(seq_len, (n + spec.bucket - 1) / spec.bucket * spec.bucket);
  }
  return out;
}

}  // namespace workloads
