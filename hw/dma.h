#pragma once
// A DMA engine: moves byte ranges between HBM and on-chip memory through a
// TLM-2.0 socket bound to the chip's Hbm. It adds no time of its own; the
// bandwidth, sharing between engines and latency all come from the target.
#include <cstdint>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

namespace hw {

class DmaEngine : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<DmaEngine> socket;

  explicit DmaEngine(sc_core::sc_module_name name);

  // Blocking; call from an SC_THREAD. write = on-chip -> HBM. One transfer at
  // a time: a second caller waits until the engine is free. Throws
  // sim::SimFailure if the target rejects the range (e.g. beyond capacity).
  void transfer(std::uint64_t hbm_addr, std::uint64_t bytes, bool write);

  std::uint64_t transfers() const { return transfers_; }
  std::uint64_t bytes_read() const { return bytes_read_; }
  std::uint64_t bytes_written() const { return bytes_written_; }
  std::uint64_t bytes() const { return bytes_read_ + bytes_written_; }
  // Sum of the spans of the transfers (they never overlap on one engine).
  sc_core::sc_time busy() const { return busy_; }

 private:
  // Issues one payload and waits for it; returns the target's response.
  tlm::tlm_response_status issue(std::uint64_t addr, std::uint64_t bytes, bool write);

  sc_core::sc_mutex engine_;
  std::uint64_t transfers_ = 0;
  std::uint64_t bytes_read_ = 0;
  std::uint64_t bytes_written_ = 0;
  sc_core::sc_time busy_ = sc_core::SC_ZERO_TIME;
};

}  // namespace hw
