#include "hw/hbm.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "hw/fair_share.h"
#include "sim/output.h"
#include "sim/sim_time.h"

namespace hw {

std::vector<std::uint64_t> bytes_per_channel(const HbmConfig& config, std::uint64_t address, std::uint64_t length) {
  const std::uint64_t g = config.interleave_bytes;
  const std::uint64_t n = config.channels;
  std::vector<std::uint64_t> out(n, 0);
  if (length == 0) return out;
  const std::uint64_t end = address + length;
  const std::uint64_t first = address / g;
  const std::uint64_t last = (end - 1) / g;
  if (first == last) {
    out[first % n] = length;
    return out;
  }
  out[first % n] += (first + 1) * g - address;
  out[last % n] += end - last * g;
  // Whole blocks first+1 .. last-1: full rounds over all channels, then a
  // partial round starting at channel (first+1) % n.
  const std::uint64_t whole = last - first - 1;
  for (std::uint64_t c = 0; c < n; ++c) out[c] += (whole / n) * g;
  for (std::uint64_t i = 0; i < whole % n; ++i) out[(first + 1 + i) % n] += g;
  return out;
}

namespace {
constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();
}  // namespace

struct Hbm::Channel {
  Channel(double bytes_per_tick, std::string channel_name) : server(bytes_per_tick), name(std::move(channel_name)) {}
  FairShare server;
  std::string name;             // for messages
  std::uint64_t next = kNever;  // server.next_completion() while pending
  std::uint64_t bytes = 0;

  void refresh() { next = server.pending() ? server.next_completion(name) : kNever; }
};

// Blocking: lives on the stack of the initiator's thread for the length of
// b_transport, which waits on `done`. Non-blocking: taken from the Hbm's
// pool at BEGIN_REQ and given back at BEGIN_RESP; `trans` and `initiator`
// say where the response goes.
struct Hbm::Transfer {
  std::uint32_t parts_left = 0;
  sc_core::sc_event* done = nullptr;          // set for blocking transfers only
  tlm::tlm_generic_payload* trans = nullptr;  // set for non-blocking transfers only
  int initiator = -1;
};

Hbm::Hbm(sc_core::sc_module_name name, const HbmConfig& config)
    : sc_core::sc_module(name), socket("socket"), config_(config), tick_(sc_core::sc_get_time_resolution()) {
  validate(config_);
  latency_ = sc_core::sc_time::from_value(sim::checked_ps(std::round(config_.latency_s * sim::kPsPerSecond),
                                                          [] { return std::string("the HBM access latency"); }));
  socket.register_b_transport(this, &Hbm::b_transport);
  socket.register_nb_transport_fw(this, &Hbm::nb_transport_fw);
  const double channel_bytes_per_s = config_.sustained_bytes_per_s() / config_.channels;
  for (std::uint32_t c = 0; c < config_.channels; ++c)
    channels_.push_back(std::make_unique<Channel>(channel_bytes_per_s * tick_.to_seconds(),
                                                  std::string(this->name()) + " channel " + std::to_string(c) + " (" +
                                                      sim::g3(channel_bytes_per_s, "B/s") + ")"));
  SC_METHOD(on_wake);
  sensitive << wake_;
  dont_initialize();
  SC_METHOD(on_respond);
  sensitive << respond_;
  dont_initialize();
}

// The pool owns every non-blocking transfer, in flight or not (a
// simulation stopped early leaves some behind); blocking ones live on
// thread stacks.
Hbm::~Hbm() = default;

Hbm::Transfer* Hbm::take_transfer() {
  if (spare_.empty()) {
    pool_.push_back(std::make_unique<Transfer>());
    return pool_.back().get();
  }
  Transfer* t = spare_.back();
  spare_.pop_back();
  return t;
}

std::uint64_t Hbm::now_ticks() const { return sc_core::sc_time_stamp().value(); }

std::uint64_t Hbm::channel_bytes(std::uint32_t channel) const { return channels_.at(channel)->bytes; }

sc_core::sc_time Hbm::channel_busy(std::uint32_t channel) const {
  return channels_.at(channel)->server.busy_ticks() * tick_;
}

void Hbm::schedule_wake() {
  std::uint64_t first = kNever;
  for (const auto& ch : channels_) first = std::min(first, ch->next);
  wake_.cancel();
  if (first != kNever) wake_.notify(sc_core::sc_time::from_value(sim::ps_until(first, now_ticks())));
}

void Hbm::on_wake() {
  const std::uint64_t now = now_ticks();
  for (const auto& ch : channels_) {
    if (ch->next > now) continue;
    for (FairShare::FlowId id : ch->server.finish(now)) {
      auto it = in_flight_.find(id);
      Transfer* t = it->second;
      if (--t->parts_left == 0) {
        in_flight_.erase(it);
        if (t->trans)
          respond_after_latency(t);
        else
          t->done->notify();
      }
    }
    ch->refresh();
  }
  schedule_wake();
}

std::uint32_t Hbm::accept(tlm::tlm_generic_payload& trans, std::uint64_t id) {
  const tlm::tlm_command cmd = trans.get_command();
  const std::uint64_t address = trans.get_address();
  const std::uint64_t length = trans.get_data_length();
  if (cmd == tlm::TLM_IGNORE_COMMAND) {
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
    return 0;
  }
  if (address >= config_.capacity_bytes || length > config_.capacity_bytes - address) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return 0;
  }
  // Timing-only target: it moves whole ranges and cannot honour byte masks.
  if (trans.get_byte_enable_ptr() != nullptr) {
    trans.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    return 0;
  }
  if (trans.get_streaming_width() < length) {
    trans.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return 0;
  }
  trans.set_response_status(tlm::TLM_OK_RESPONSE);

  ++transfers_;
  (cmd == tlm::TLM_WRITE_COMMAND ? bytes_written_ : bytes_read_) += length;

  std::uint32_t parts_count = 0;
  const std::uint64_t now = now_ticks();
  const std::vector<std::uint64_t> parts = bytes_per_channel(config_, address, length);
  for (std::uint32_t c = 0; c < config_.channels; ++c) {
    if (parts[c] == 0) continue;
    Channel& ch = *channels_[c];
    ch.server.add(now, static_cast<double>(parts[c]), id);
    ch.refresh();
    ch.bytes += parts[c];
    ++parts_count;
  }
  if (parts_count > 0) schedule_wake();
  return parts_count;
}

void Hbm::b_transport(int /*initiator*/, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  if (delay != sc_core::SC_ZERO_TIME) {
    wait(delay);
    delay = sc_core::SC_ZERO_TIME;
  }
  sc_core::sc_event done;
  Transfer transfer;
  transfer.done = &done;
  const std::uint64_t id = next_id_++;
  transfer.parts_left = accept(trans, id);
  if (!trans.is_response_ok() || trans.get_command() == tlm::TLM_IGNORE_COMMAND) return;
  if (transfer.parts_left > 0) {
    in_flight_.emplace(id, &transfer);
    wait(done);
  }
  if (latency_ != sc_core::SC_ZERO_TIME) wait(latency_);
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

tlm::tlm_sync_enum Hbm::nb_transport_fw(int initiator, tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                        sc_core::sc_time& delay) {
  // END_RESP never arrives (the initiator completes BEGIN_RESP) and there is
  // nothing else to receive.
  if (phase != tlm::BEGIN_REQ) return tlm::TLM_COMPLETED;
  // The fair-share servers take flows at the current time only; a request
  // annotated into the future would need a queue nobody uses (the DMA never
  // annotates), so it is refused rather than silently moved.
  if (delay != sc_core::SC_ZERO_TIME) {
    trans.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return tlm::TLM_COMPLETED;
  }
  const std::uint64_t id = next_id_++;
  const std::uint32_t parts = accept(trans, id);
  if (!trans.is_response_ok() || trans.get_command() == tlm::TLM_IGNORE_COMMAND) {
    phase = tlm::BEGIN_RESP;
    return tlm::TLM_COMPLETED;
  }
  Transfer* t = take_transfer();
  t->parts_left = parts;
  t->trans = &trans;
  t->initiator = initiator;
  if (parts > 0)
    in_flight_.emplace(id, t);
  else
    respond_after_latency(t);
  return tlm::TLM_ACCEPTED;
}

void Hbm::respond_after_latency(Transfer* t) {
  // Same time as the blocking path's wait(latency_) after the channels.
  const std::uint64_t due = now_ticks() + latency_.value();
  if (responding_.empty()) respond_.notify(latency_);
  responding_.emplace_back(due, t);
}

void Hbm::on_respond() {
  const std::uint64_t now = now_ticks();
  while (!responding_.empty() && responding_.front().first <= now) {
    Transfer* t = responding_.front().second;
    responding_.pop_front();
    tlm::tlm_generic_payload& trans = *t->trans;
    const int initiator = t->initiator;
    spare_.push_back(t);
    tlm::tlm_phase phase = tlm::BEGIN_RESP;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    // The initiator may start its next transfer from inside this call, which
    // can push onto responding_ (only behind the entries due now) and reuse t.
    socket[initiator]->nb_transport_bw(trans, phase, delay);
  }
  if (!responding_.empty())
    respond_.notify(sc_core::sc_time::from_value(sim::ps_until(responding_.front().first, now)));
}

}  // namespace hw
