#include "interconnect/reduction.h"

#include <algorithm>
#include <string>

#include "sim/output.h"

namespace interconnect {

double reducer_ps_per_byte(const ReductionConfig& config) {
  return std::max(1.0 / config.vector_bytes_per_s, config.hbm_bytes_per_reduced_byte / config.hbm_bytes_per_s) *
         kPsPerSecond;
}

double uneven_ps(const Invariance& uneven, const Topology& topology, const LinkConfig& link,
                 const ReductionConfig& reduction) {
  double bandwidth = link.bandwidth, latency = link.latency;
  if (topology.slices() > 1) {
    const DcnConfig& d = link.dcn;
    bandwidth = std::min({bandwidth, d.host_bandwidth, d.nic_bandwidth / std::max(1.0, d.oversubscription)});
    latency = std::max(latency, d.latency);
  }
  return static_cast<double>(uneven.uneven_bytes) * (kPsPerSecond / bandwidth + reducer_ps_per_byte(reduction)) +
         static_cast<double>(uneven.uneven_hops) * latency * kPsPerSecond;
}

VectorUnitReduction::VectorUnitReduction(Network& network, const ReductionConfig& config)
    : net_(network),
      config_(config),
      packet_bytes_(network.link_config().packet_bytes),
      ps_per_byte_(reducer_ps_per_byte(config)),
      chips_(network.topology().chips()) {}

void VectorUnitReduction::reduce(int chip, std::uint64_t bytes, Ps data_start, Ps data_end, ReductionListener& listener,
                                 std::uint64_t token) {
  Reducer& r = chips_[chip];
  auto what = [&] {
    return "the reduction of " + std::to_string(bytes) + " bytes on " + net_.topology().describe(chip) + " (" +
           sim::g3(config_.vector_bytes_per_s, "B/s") + " vector units, " + sim::g3(config_.hbm_bytes_per_s, "B/s") +
           " HBM)";
  };
  const Ps work = sim::duration_ps(static_cast<double>(bytes) * ps_per_byte_, what);
  Ps finish;
  if (config_.streaming) {
    const Ps start = std::max(r.booked_until, data_start);
    r.booked_until = start + work;
    const Ps tail = sim::duration_ps(static_cast<double>(std::min(bytes, packet_bytes_)) * ps_per_byte_, what);
    finish = std::max(start + work, data_end + tail);
  } else {
    const Ps start = std::max(r.booked_until, data_end);
    r.booked_until = start + work;
    finish = start + work;
  }
  r.vector_busy_s += static_cast<double>(bytes) / config_.vector_bytes_per_s;
  r.hbm_bytes += static_cast<double>(bytes) * config_.hbm_bytes_per_reduced_byte;
  ++r.reductions;
  net_.schedule(finish, this, pending_.hold(listener, token));
}

void VectorUnitReduction::on_timer(std::uint64_t slot) { pending_.answer(slot); }

}  // namespace interconnect
