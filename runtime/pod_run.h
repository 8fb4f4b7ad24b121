#pragma once
// A pod in one simulation: N chips, the ICI network between them, and one
// sequencer per chip running that chip's program. Communication ops (CommOp)
// join pod-wide collectives on the network, SendOp/RecvOp move point-to-point
// messages over it; everything else runs on the chip's engines. Overlap of
// communication and compute is whatever the programs' dependencies allow,
// measured from the ops' timings.
#include "runtime/pod_config.h"
#include "runtime/pod_program.h"
#include "runtime/pod_result.h"
#include "sim/trace.h"

namespace runtime {

// Runs the programs; throws sim::SimFailure on deadlock or runaway.
//
// Replicas: chips that share a program behave identically as long as every
// collective and point-to-point message they take part in ends at the same
// time on all of them (on a torus with wraparound it does, by symmetry).
// Unless config.simulate_every_chip, run_pod then simulates one
// representative per group, its lowest chip: the others join each
// collective, and send and receive each message (to and from their own
// peers, PodProgram::peers), on the network at the instant their
// representative does, so the network carries every chip's traffic. With
// point-to-point messages the groups must line up (each representative's
// peers the representatives of their groups, each peer-table entry taking
// one group one to one onto another); else every chip is simulated. After
// the run it checks that each collective and message ended at the same time
// on every member. Where a buffer does not divide evenly into ring chunks,
// end times differ by a few bytes' worth of link time; up to a summed 1e-2
// of the step (kReplicaSpreadTolerance) that is accepted and reported
// (replica_spread_s). Beyond it, or if replicas did not take part in the
// same collectives, it runs again with every chip.
//
// Symmetric pods: where the programs, peer tables and collective plans are
// invariant under translations along wrapping axes (a data-parallel step
// on a torus, the tensor and data axes of a 3D-parallel one; on several
// slices the slice shifts and the ICI axes that move hosts onto hosts),
// the network simulates one chip per orbit, each standing for its images
// (interconnect/translations.h), instead of every replica's traffic. A
// route that is not invariant (half way round an even ring) makes it run
// again without.
PodRunResult run_pod(const PodConfig& config, const PodProgram& program, const sim::TraceRequest& trace,
                     const Observers& observers = {});

// The host budget check (runtime/run_budget.h) run_pod makes before it
// simulates `program` without a trace, throwing as it would, but without
// simulating it: of its first attempt (one chip per group of replicas when
// it may), or with `every_chip` of the run with every chip that follows
// when that was not exact.
void check_pod_run_budget(const PodConfig& config, const PodProgram& program, bool every_chip);

}  // namespace runtime
