#include "interconnect/deadlock.h"

#include <cstdio>
#include <string>

#include "sim/error.h"

namespace interconnect {

void require_all_done(const Network& network, const std::vector<const Collective*>& collectives) {
  std::vector<std::string> lines;
  for (const Collective* c : collectives) {
    for (std::string& l : c->pending()) lines.push_back(std::move(l));
  }
  for (std::string& l : network.pending()) lines.push_back("network: " + std::move(l));
  if (lines.empty()) return;
  constexpr std::size_t kShown = 20;
  char when[32];
  std::snprintf(when, sizeof when, "%g", to_seconds(network.now()));
  std::string msg = std::string("deadlock: the simulation ran out of events at ") + when + " s with unfinished work:";
  for (std::size_t i = 0; i < lines.size() && i < kShown; ++i) msg += "\n  " + lines[i];
  if (lines.size() > kShown) msg += "\n  ... and " + std::to_string(lines.size() - kShown) + " more";
  throw sim::SimFailure(msg);
}

}  // namespace interconnect
