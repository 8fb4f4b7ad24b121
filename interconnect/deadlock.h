#pragma once
// After sc_start() returns, the simulation has run out of events. If any
// collective is unfinished or any message or receive is left unmatched, the
// simulated system is deadlocked: report which chips wait for what.
#include <vector>

#include "interconnect/collective.h"
#include "interconnect/network.h"

namespace interconnect {

// Throws sim::SimFailure (exit 3) naming the chips and their pending
// operations; returns quietly when everything finished.
void require_all_done(const Network& network, const std::vector<const Collective*>& collectives);

}  // namespace interconnect
