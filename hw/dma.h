#pragma once
// A DMA engine: moves byte ranges between HBM and on-chip memory through a
// TLM-2.0 socket bound to the chip's Hbm. It adds no time of its own; the
// bandwidth, sharing between engines and latency all come from the target.
#include <tlm_utils/simple_initiator_socket.h>
#include <cstdint>
#include <memory>
#include <systemc>
#include <tlm>
#include <vector>

#include "hw/completion.h"

namespace hw {

class DmaEngine : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<DmaEngine> socket;

  explicit DmaEngine(sc_core::sc_module_name name);

  // Non-blocking (TLM-2.0 AT), from any process after elaboration (the
  // multi-socket's callbacks are bound only then): issues the transfer now
  // (write = on-chip -> HBM) and returns; `done` is called (inside the Hbm's
  // process) when it completes. One transfer at a time: the caller starts
  // the next after `done` (std::logic_error otherwise). Throws
  // sim::SimFailure at once if the target rejects the range (e.g. beyond
  // capacity); the transfer is then abandoned, `done` is never called and
  // the engine is free again.
  void start(std::uint64_t hbm_addr, std::uint64_t bytes, bool write, Completion done);

  std::uint64_t transfers() const { return transfers_; }
  std::uint64_t bytes_read() const { return bytes_read_; }
  std::uint64_t bytes_written() const { return bytes_written_; }
  std::uint64_t bytes() const { return bytes_read_ + bytes_written_; }
  // Sum of the spans of the transfers (they never overlap on one engine).
  sc_core::sc_time busy() const { return busy_; }

 private:
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  [[noreturn]] void reject(std::uint64_t hbm_addr, std::uint64_t bytes, bool write) const;

  // The transfer in flight: its payloads (one per chunk; kept from one
  // transfer to the next, each alive until its BEGIN_RESP), the responses
  // still due, and whom to tell.
  std::vector<std::unique_ptr<tlm::tlm_generic_payload>> payloads_;
  std::size_t chunks_ = 0;  // payloads_ in use
  std::size_t left_ = 0;    // responses still due; 0: the engine is free
  std::uint64_t bytes_ = 0;
  bool write_ = false;
  sc_core::sc_time start_;
  Completion done_;
  // Payloads of a rejected transfer, whose accepted chunks may still be in the Hbm.
  std::vector<std::unique_ptr<tlm::tlm_generic_payload>> abandoned_;
  std::uint64_t transfers_ = 0;
  std::uint64_t bytes_read_ = 0;
  std::uint64_t bytes_written_ = 0;
  sc_core::sc_time busy_ = sc_core::SC_ZERO_TIME;
};

}  // namespace hw
