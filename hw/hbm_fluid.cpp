#include "hw/hbm_fluid.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "sim/output.h"
#include "sim/sim_time.h"

namespace hw {

namespace {

using sim::kPsPerSecond;

std::uint64_t now_ps() { return static_cast<std::uint64_t>(sc_core::sc_time_stamp().value()); }

}  // namespace

HbmFluid::HbmFluid(sc_core::sc_module_name name, const HbmConfig& config, double vector_bytes_per_s,
                   double sparsecore_bytes_per_s, std::uint32_t chip)
    : sc_core::sc_module(name),
      config_(config),
      alarm_(*this, sim::AlarmRank::chip(chip, sim::AlarmRank::Engine::hbm)) {
  validate(config_);
  if (sc_core::sc_get_time_resolution() != sc_core::sc_time(1, sc_core::SC_PS))
    throw std::logic_error("HbmFluid counts in picoseconds: the kernel's resolution must be 1 ps");
  hbm_ = share_.add_resource(config_.sustained_bytes_per_s() / kPsPerSecond);
  if (vector_bytes_per_s > 0) {
    has_vector_ = true;
    vector_ = share_.add_resource(vector_bytes_per_s / kPsPerSecond);
  }
  if (sparsecore_bytes_per_s > 0) {
    has_sparsecore_ = true;
    sparsecore_ = share_.add_resource(sparsecore_bytes_per_s / kPsPerSecond);
  }
  SC_METHOD(on_wake);
  sensitive << wake_;
  dont_initialize();
}

HbmFluid::Handle HbmFluid::start(const Demand& d, Listener* listener, std::uint64_t token) {
  if (!(d.amount >= 0) || !std::isfinite(d.amount)) throw std::invalid_argument("HbmFluid: a flow's work must be >= 0");
  std::vector<sim::FluidShare::Use>& uses = uses_;
  uses.clear();
  if (d.hbm_per_unit > 0) uses.push_back({hbm_, d.hbm_per_unit});
  if (d.vector_per_unit > 0) {
    if (!has_vector_) throw std::logic_error("HbmFluid: a flow asks for vector units this server does not model");
    uses.push_back({vector_, d.vector_per_unit});
  }
  if (d.sparsecore_per_unit > 0 && has_sparsecore_) uses.push_back({sparsecore_, d.sparsecore_per_unit});
  if (uses.empty() && !std::isfinite(d.cap_per_s))
    throw std::logic_error("HbmFluid: a flow that touches neither HBM nor the vector units needs a finite cap");
  const std::uint64_t now = now_ps();
  account_busy(now);
  const std::uint32_t id = share_.start(now, d.amount, uses, d.cap_per_s / kPsPerSecond);
  if (id >= owners_.size()) owners_.resize(id + 1);
  Owner& o = owners_[id];
  o.listener = listener;
  o.token = token;
  o.collective = d.collective;
  if (!d.collective) {
    ++own_active_;
    ++own_started_;
  }
  ++o.gen;
  bytes_ += d.amount * d.hbm_per_unit;
  o.serial = ++started_;
  wake_this_delta(now);
  return {id, o.serial};
}

bool HbmFluid::uncap(Handle flow) {
  if (!share_.active(flow.flow) || owners_[flow.flow].serial != flow.serial) return false;
  const std::uint64_t now = now_ps();
  share_.set_cap(flow.flow, now, sim::FluidShare::kNoCap);
  wake_this_delta(now);
  return true;
}

void HbmFluid::wake_this_delta(std::uint64_t now) {
  // Rates are settled once per delta cycle, for every flow that started (or
  // changed its cap) in it.
  if (wake_at_ != now) {
    alarm_.cancel();
    wake_.notify(sc_core::SC_ZERO_TIME);
    wake_at_ = now;
  }
}

void HbmFluid::account_busy(std::uint64_t now) {
  const bool busy = share_.active_flows() > 0;
  if (busy_) busy_ps_ += now - busy_since_;
  busy_since_ = now;
  busy_ = busy;
}

void HbmFluid::settle(std::uint64_t now) {
  if (!share_.dirty()) return;
  for (std::uint32_t f : share_.settle(now)) {
    const double rate = share_.rate(f);
    if (!(rate > 0)) throw std::logic_error("HbmFluid: a flow was given no bandwidth");
    Owner& o = owners_[f];
    ++o.gen;
    const std::uint64_t span = sim::duration_ps(share_.remaining(f) / rate, [&] {
      return std::string(name()) + ": an HBM transfer of " + sim::g3(share_.remaining(f), "B") + " at " +
             sim::g3(rate * kPsPerSecond, "B/s");
    });
    due_.push(Due{now + span, seq_++, f, o.gen});
  }
}

void HbmFluid::schedule_wake(std::uint64_t now) {
  while (!due_.empty() && (!share_.active(due_.top().flow) || owners_[due_.top().flow].gen != due_.top().gen))
    due_.pop();  // superseded completions
  if (due_.empty()) {
    wake_at_ = ~std::uint64_t{0};
    return;
  }
  wake_at_ = due_.top().at;
  if (sim::ps_until(wake_at_, now) == 0)
    wake_.notify(sc_core::SC_ZERO_TIME);
  else
    alarm_.notify(wake_at_);
}

void HbmFluid::on_wake() {
  const std::uint64_t now = now_ps();
  account_busy(now);
  // Flows whose work is done: they leave before rates are settled again.
  std::vector<Owner>& done = done_;
  done.clear();
  while (!due_.empty() && due_.top().at <= now) {
    const Due d = due_.top();
    due_.pop();
    if (!share_.active(d.flow) || owners_[d.flow].gen != d.gen) continue;
    share_.finish(d.flow, now);
    if (!owners_[d.flow].collective) --own_active_;
    done.push_back(owners_[d.flow]);
  }
  settle(now);
  account_busy(now);
  schedule_wake(now);
  // Last: a listener may start flows at once (they settle in the next delta).
  for (const Owner& o : done) o.listener->flow_done(o.token);
}

}  // namespace hw
