#include "hw/dma.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/error.h"

namespace hw {

namespace {
// tlm_generic_payload::data_length is 32-bit, so a longer transfer travels as
// several payloads. They are all outstanding at once, as a real engine keeps
// many requests in flight, so splitting adds no latency; a power of two keeps
// every chunk spread evenly over power-of-two interleaves.
constexpr std::uint64_t kMaxPayloadBytes = std::uint64_t{1} << 30;
}  // namespace

DmaEngine::DmaEngine(sc_core::sc_module_name name) : sc_core::sc_module(name), socket("socket") {
  socket.register_nb_transport_bw(this, &DmaEngine::nb_transport_bw);
}

void DmaEngine::reject(std::uint64_t hbm_addr, std::uint64_t bytes, bool write) const {
  throw sim::SimFailure(std::string(name()) + ": HBM rejected " + (write ? "write" : "read") + " of " +
                        std::to_string(bytes) + " bytes at address " + std::to_string(hbm_addr));
}

void DmaEngine::start(std::uint64_t hbm_addr, std::uint64_t bytes, bool write, Completion done) {
  if (left_ != 0) throw std::logic_error(std::string(name()) + ": start() while a transfer is in flight");
  if (bytes > std::numeric_limits<std::uint64_t>::max() - hbm_addr) reject(hbm_addr, bytes, write);
  const std::uint64_t chunks = bytes == 0 ? 1 : (bytes + kMaxPayloadBytes - 1) / kMaxPayloadBytes;
  while (payloads_.size() < chunks) payloads_.push_back(std::make_unique<tlm::tlm_generic_payload>());
  for (std::uint64_t i = 0; i < chunks; ++i) {
    const std::uint64_t offset = i * kMaxPayloadBytes;
    const std::uint64_t len = std::min(kMaxPayloadBytes, bytes - offset);
    tlm::tlm_generic_payload& trans = *payloads_[i];
    trans.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    trans.set_address(hbm_addr + offset);
    trans.set_data_ptr(nullptr);  // timing only
    trans.set_data_length(static_cast<unsigned int>(len));
    trans.set_streaming_width(static_cast<unsigned int>(len));
    trans.set_byte_enable_ptr(nullptr);
    trans.set_dmi_allowed(false);
    trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  }
  chunks_ = chunks;
  left_ = chunks;
  bytes_ = bytes;
  write_ = write;
  start_ = sc_core::sc_time_stamp();
  done_ = done;
  // All chunks outstanding at once.
  for (std::uint64_t i = 0; i < chunks; ++i) {
    tlm::tlm_generic_payload& trans = *payloads_[i];
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    const tlm::tlm_sync_enum r = socket->nb_transport_fw(trans, phase, delay);
    if (r == tlm::TLM_COMPLETED && !trans.is_response_ok()) {
      // Chunks already accepted still answer later; they find no transfer
      // of theirs pending and are dropped, so their payloads must outlive them.
      for (std::uint64_t k = 0; k < i; ++k) abandoned_.push_back(std::move(payloads_[k]));
      payloads_.erase(payloads_.begin(), payloads_.begin() + static_cast<std::ptrdiff_t>(i));
      chunks_ = 0;
      left_ = 0;
      reject(hbm_addr, bytes, write);
    }
    if (r == tlm::TLM_COMPLETED) {
      // Served without a response phase (a target may do that): count it
      // now. The last chunk's may call `done`, which may start the next
      // transfer: nothing of this one is touched after it.
      phase = tlm::BEGIN_RESP;
      nb_transport_bw(trans, phase, delay);
    }
  }
}

tlm::tlm_sync_enum DmaEngine::nb_transport_bw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                              sc_core::sc_time& /*delay*/) {
  if (phase != tlm::BEGIN_RESP) return tlm::TLM_ACCEPTED;  // END_REQ: nothing to do
  // A chunk of an abandoned transfer belongs to none in flight.
  bool ours = false;
  for (std::size_t i = 0; i < chunks_ && !ours; ++i) ours = payloads_[i].get() == &trans;
  if (!ours || left_ == 0) return tlm::TLM_COMPLETED;
  if (--left_ > 0) return tlm::TLM_COMPLETED;
  chunks_ = 0;
  ++transfers_;
  (write_ ? bytes_written_ : bytes_read_) += bytes_;
  busy_ += sc_core::sc_time_stamp() - start_;
  // The engine is free before `done` runs: it may start the next transfer.
  const Completion done = done_;
  done();
  return tlm::TLM_COMPLETED;
}

}  // namespace hw
