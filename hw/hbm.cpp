#include "hw/hbm.h"

#include <algorithm>
#include <limits>

#include "hw/fair_share.h"

namespace hw {

std::vector<std::uint64_t> bytes_per_channel(const HbmConfig& config, std::uint64_t address,
                                             std::uint64_t length) {
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
  explicit Channel(double bytes_per_tick) : server(bytes_per_tick) {}
  FairShare server;
  std::uint64_t next = kNever;  // server.next_completion() while pending
  std::uint64_t bytes = 0;

  void refresh() { next = server.pending() ? server.next_completion() : kNever; }
};

// Lives on the stack of the initiator's thread for the length of b_transport.
struct Hbm::Transfer {
  std::uint32_t parts_left = 0;
  sc_core::sc_event done;
};

Hbm::Hbm(sc_core::sc_module_name name, const HbmConfig& config)
    : sc_core::sc_module(name),
      socket("socket"),
      config_(config),
      tick_(sc_core::sc_get_time_resolution()) {
  validate(config_);
  latency_ = sc_core::sc_time(config_.latency_s, sc_core::SC_SEC);
  socket.register_b_transport(this, &Hbm::b_transport);
  const double channel_bytes_per_s = config_.bandwidth_bytes_per_s / config_.channels;
  for (std::uint32_t c = 0; c < config_.channels; ++c)
    channels_.push_back(std::make_unique<Channel>(channel_bytes_per_s * tick_.to_seconds()));
  SC_METHOD(on_wake);
  sensitive << wake_;
  dont_initialize();
}

Hbm::~Hbm() = default;

std::uint64_t Hbm::now_ticks() const { return sc_core::sc_time_stamp().value(); }

std::uint64_t Hbm::channel_bytes(std::uint32_t channel) const {
  return channels_.at(channel)->bytes;
}

sc_core::sc_time Hbm::channel_busy(std::uint32_t channel) const {
  return channels_.at(channel)->server.busy_ticks() * tick_;
}

void Hbm::schedule_wake() {
  std::uint64_t first = kNever;
  for (const auto& ch : channels_) first = std::min(first, ch->next);
  wake_.cancel();
  if (first != kNever) wake_.notify(sc_core::sc_time::from_value(first - now_ticks()));
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
        t->done.notify();
      }
    }
    ch->refresh();
  }
  schedule_wake();
}

void Hbm::b_transport(int /*initiator*/, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  if (delay != sc_core::SC_ZERO_TIME) {
    wait(delay);
    delay = sc_core::SC_ZERO_TIME;
  }
  const tlm::tlm_command cmd = trans.get_command();
  const std::uint64_t address = trans.get_address();
  const std::uint64_t length = trans.get_data_length();
  if (cmd == tlm::TLM_IGNORE_COMMAND) {
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  if (address >= config_.capacity_bytes || length > config_.capacity_bytes - address) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  // Timing-only target: it moves whole ranges and cannot honour byte masks.
  if (trans.get_byte_enable_ptr() != nullptr) {
    trans.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    return;
  }
  if (trans.get_streaming_width() < length) {
    trans.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return;
  }

  ++transfers_;
  (cmd == tlm::TLM_WRITE_COMMAND ? bytes_written_ : bytes_read_) += length;

  Transfer transfer;
  const std::uint64_t id = next_id_++;
  const std::uint64_t now = now_ticks();
  const std::vector<std::uint64_t> parts = bytes_per_channel(config_, address, length);
  for (std::uint32_t c = 0; c < config_.channels; ++c) {
    if (parts[c] == 0) continue;
    Channel& ch = *channels_[c];
    ch.server.add(now, static_cast<double>(parts[c]), id);
    ch.refresh();
    ch.bytes += parts[c];
    ++transfer.parts_left;
  }
  if (transfer.parts_left > 0) {
    schedule_wake();
    in_flight_.emplace(id, &transfer);
    wait(transfer.done);
  }
  if (latency_ != sc_core::SC_ZERO_TIME) wait(latency_);
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

}  // namespace hw
