#define SC_INCLUDE_DYNAMIC_PROCESSES  // sc_spawn: chunks of one long transfer in flight together
#include "hw/dma.h"

#include <algorithm>
#include <limits>
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

DmaEngine::DmaEngine(sc_core::sc_module_name name)
    : sc_core::sc_module(name), socket("socket"), engine_("engine") {}

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
  if (status != tlm::TLM_OK_RESPONSE)
    throw sim::SimFailure(std::string(name()) + ": HBM rejected " + (write ? "write" : "read") + " of " +
                          std::to_string(bytes) + " bytes at address " + std::to_string(hbm_addr));
}

}  // namespace hw
