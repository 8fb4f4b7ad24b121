#pragma once
// Puts one chip's executed program into a Perfetto trace: a track per
// engine instance, an event per op, with its energy (docs/mxu.md#energy).
#include <cstddef>
#include <string>
#include <vector>

#include "hw/chip_config.h"
#include "hw/program.h"
#include "interconnect/collective_spec.h"
#include "runtime/pod_program.h"
#include "runtime/pod_result.h"
#include "sim/trace.h"

namespace runtime {

// `chip` is written as a process "chip5 (represented_note)" ("chip5" when
// it stands for itself alone), with
// trace_counters; returns each op's event (sim::TraceWriter::op).
std::vector<std::size_t> trace_program(sim::TraceWriter& trace, std::uint32_t chip, const hw::Program& program,
                                       const std::vector<hw::OpTiming>& timings, const hw::EnergyParams& energy,
                                       const std::vector<std::uint32_t>& representative,
                                       const std::vector<interconnect::CollectiveSpec>* collectives,
                                       double hbm_bytes_per_s);

// Counter tracks of `chip`: the HBM bandwidth and the ICI bandwidth its ops
// use (each op's bytes spread evenly over its duration, HBM's clipped at the
// chip's `hbm_bytes_per_s`; a collective's or a send's bytes for ICI). Memory
// in use is the training workload's counter (workloads::memory_in_use).
void trace_counters(sim::TraceWriter& trace, std::uint32_t chip, const hw::Program& program,
                    const std::vector<hw::OpTiming>& timings,
                    const std::vector<interconnect::CollectiveSpec>* collectives, double hbm_bytes_per_s);

// Counter tracks "ICI link x+ utilization" of each link in `links` (on its
// chip's process): the fraction of the link's bandwidth in use, at each
// change of the rate the network gave its flows.
void trace_link_rates(sim::TraceWriter& trace, const std::vector<PodRunResult::LinkRates>& links);

// Flow arrows between written chips: from each SendOp to the RecvOp that
// takes its message, and for each collective from the chip that joined it
// last to the others; events[k] and timings[k] are chips[k]'s op events
// and op timings.
void trace_messages(sim::TraceWriter& trace, const PodProgram& pod, const std::vector<std::uint32_t>& chips,
                    const std::vector<std::uint32_t>& representative,
                    const std::vector<std::vector<std::size_t>>& events,
                    const std::vector<const std::vector<hw::OpTiming>*>& timings);

// The bin the trace of the chips whose op timings are `timings` is
// aggregated in, 0 for op by op (sim::TraceWriter::aggregate_bin_ps): about
// three events an op (its slice and the HBM and ICI counters' samples) and
// each sample of `links`, over the span to the last op's end.
std::uint64_t trace_bin_ps(const sim::TraceRequest& request,
                           const std::vector<const std::vector<hw::OpTiming>*>& timings,
                           const std::vector<PodRunResult::LinkRates>& links);

// An op's slice args: "bytes" for a send (its message) and a collective (its
// payload, from `collectives` by the CommOp's index), "flops" when the op has
// useful FLOPs, and its hw::op_work (macs, vmem_bytes, hbm_bytes) with
// energy_j at `energy`'s figures when it has such work.
std::vector<sim::TraceArg> op_energy_args(const hw::Op& op, const hw::EnergyParams& energy,
                                          const std::vector<interconnect::CollectiveSpec>* collectives = nullptr);

// "represents 512 chips" for a simulated chip, which stands for the chips
// whose representative it is (their ops are its ops), "replica of chip0"
// for one of those (docs/report.md#traces); representative[c] is chip c's
// representative.
std::string represented_note(std::uint32_t chip, const std::vector<std::uint32_t>& representative);

}  // namespace runtime
