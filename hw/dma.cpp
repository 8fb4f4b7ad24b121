#define SC_INCLUDE_DYNAMIC_PROCESSES  // sc_spawn: chunks of one long transfer in flight together
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

DmaEngine::DmaEngine(sc_core::sc_module_name name) : sc_core::sc_module(name), socket("socket"), engine_("engine") {
  socket.register_nb_transport_bw(this, &DmaEngine::nb_transport_bw);
}

void DmaEngine::reject(std::uint64_t hbm_addr, std::uint64_t bytes, bool write) const {
  throw sim::SimFailure(std::string(name()) + ": HBM rejected " + (write ? "write" : "read") + " of " +
                        std::to_string(bytes) + " bytes at address " + std::to_string(hbm_addr));
}

void DmaEngine::start(std::uint64_t hbm_addr, std::uint64_t bytes, bool write, std::function<void()> done) {
  if (pending_) throw std::logic_error(std::string(name()) + ": start() while a transfer is in flight");
  if (bytes > std::numeric_limits<std::uint64_t>::max() - hbm_addr) reject(hbm_addr, bytes, write);
  auto p = std::make_unique<Pending>();
  p->bytes = bytes;
  p->write = write;
  p->start = sc_core::sc_time_stamp();
  p->done = std::move(done);
  // Same chunks as transfer(), all outstanding at once.
  const std::uint64_t chunks = bytes == 0 ? 1 : (bytes + kMaxPayloadBytes - 1) / kMaxPayloadBytes;
  for (std::uint64_t i = 0; i < chunks; ++i) {
    const std::uint64_t offset = i * kMaxPayloadBytes;
    const std::uint64_t len = std::min(kMaxPayloadBytes, bytes - offset);
    auto trans = std::make_unique<tlm::tlm_generic_payload>();
    trans->set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    trans->set_address(hbm_addr + offset);
    trans->set_data_ptr(nullptr);  // timing only
    trans->set_data_length(static_cast<unsigned int>(len));
    trans->set_streaming_width(static_cast<unsigned int>(len));
    trans->set_byte_enable_ptr(nullptr);
    trans->set_dmi_allowed(false);
    trans->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    p->payloads.push_back(std::move(trans));
  }
  p->left = p->payloads.size();
  Pending* state = p.get();
  pending_ = std::move(p);
  for (auto& trans : state->payloads) {
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    const tlm::tlm_sync_enum r = socket->nb_transport_fw(*trans, phase, delay);
    if (r == tlm::TLM_COMPLETED && !trans->is_response_ok()) {
      // Chunks already accepted still answer later; they find no transfer
      // pending and are dropped, so the payloads must outlive them.
      abandoned_.push_back(std::move(pending_));
      reject(hbm_addr, bytes, write);
    }
    if (r == tlm::TLM_COMPLETED) {
      // Served without a response phase (a target may do that): count it now.
      phase = tlm::BEGIN_RESP;
      nb_transport_bw(*trans, phase, delay);
      if (!pending_) return;  // that was the last chunk and `done` ran
    }
  }
}

tlm::tlm_sync_enum DmaEngine::nb_transport_bw(tlm::tlm_generic_payload& /*trans*/, tlm::tlm_phase& phase,
                                              sc_core::sc_time& /*delay*/) {
  if (phase != tlm::BEGIN_RESP) return tlm::TLM_ACCEPTED;           // END_REQ: nothing to do
  if (!pending_ || pending_->left == 0) return tlm::TLM_COMPLETED;  // chunk of an abandoned transfer
  if (--pending_->left > 0) return tlm::TLM_COMPLETED;
  std::unique_ptr<Pending> p = std::move(pending_);
  ++transfers_;
  (p->write ? bytes_written_ : bytes_read_) += p->bytes;
  busy_ += sc_core::sc_time_stamp() - p->start;
  // The engine is free before `done` runs: it may start the next transfer.
  p->done();
  return tlm::TLM_COMPLETED;
}

tlm::tlm_response_status DmaEngine::issue(std::uint64_t addr, std::uint64_t bytes, bool write) {
  tlm::tlm_generic_payload p;
  p.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
  p.set_address(addr);
  p.set_data_ptr(nullptr);  // timing only
  p.set_data_length(static_cast<unsigned int>(bytes));
  p.set_streaming_width(static_cast<unsigned int>(bytes));
  p.set_byte_enable_ptr(nullptr);
  p.set_dmi_allowed(false);
  p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  socket->b_transport(p, delay);
  if (delay != sc_core::SC_ZERO_TIME) wait(delay);
  return p.get_response_status();
}

void DmaEngine::transfer(std::uint64_t hbm_addr, std::uint64_t bytes, bool write) {
  engine_.lock();
  const sc_core::sc_time start = sc_core::sc_time_stamp();
  tlm::tlm_response_status status = tlm::TLM_OK_RESPONSE;
  if (bytes > std::numeric_limits<std::uint64_t>::max() - hbm_addr) {
    status = tlm::TLM_ADDRESS_ERROR_RESPONSE;
  } else if (bytes <= kMaxPayloadBytes) {
    status = issue(hbm_addr, bytes, write);
  } else {
    const std::uint64_t chunks = (bytes + kMaxPayloadBytes - 1) / kMaxPayloadBytes;
    std::vector<tlm::tlm_response_status> results(chunks);
    sc_core::sc_event_and_list all_done;
    std::vector<sc_core::sc_process_handle> in_flight;
    for (std::uint64_t i = 0; i < chunks; ++i) {
      const std::uint64_t offset = i * kMaxPayloadBytes;
      const std::uint64_t len = std::min(kMaxPayloadBytes, bytes - offset);
      in_flight.push_back(sc_core::sc_spawn(
          [this, &results, i, addr = hbm_addr + offset, len, write] { results[i] = issue(addr, len, write); },
          sc_core::sc_gen_unique_name("chunk")));
      all_done &= in_flight.back().terminated_event();
    }
    wait(all_done);
    for (tlm::tlm_response_status r : results)
      if (r != tlm::TLM_OK_RESPONSE) status = r;
  }
  if (status == tlm::TLM_OK_RESPONSE) {
    ++transfers_;
    (write ? bytes_written_ : bytes_read_) += bytes;
    busy_ += sc_core::sc_time_stamp() - start;
  }
  engine_.unlock();
  if (status != tlm::TLM_OK_RESPONSE) reject(hbm_addr, bytes, write);
}

}  // namespace hw
