#pragma once
// A DMA engine: moves byte ranges between HBM and on-chip memory through a
// TLM-2.0 socket bound to the chip's Hbm. It adds no time of its own; the
// bandwidth, sharing between engines and latency all come from the target.
#include <tlm_utils/simple_initiator_socket.h>
#include <cstdint>
#include <functional>
#include <memory>
#include <systemc>
#include <tlm>
#include <vector>

namespace hw {

class DmaEngine : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<DmaEngine> socket;

  explicit DmaEngine(sc_core::sc_module_name name);

  // Blocking; call from an SC_THREAD. write = on-chip -> HBM. One transfer at
  // a time: a second caller waits until the engine is free. Throws
  // sim::SimFailure if the target rejects the range (e.g. beyond capacity).
  void transfer(std::uint64_t hbm_addr, std::uint64_t bytes, bool write);

  // Non-blocking (TLM-2.0 AT), from any process after elaboration (the
  // multi-socket's callbacks are bound only then): issues the transfer now
  // and returns; `done` runs (inside the Hbm's process) when it completes,
  // at the time transfer() would have returned. The caller keeps the engine to one
  // transfer at a time (std::logic_error otherwise). Throws sim::SimFailure
  // at once if the target rejects the range; the transfer is then abandoned
  // and `done` never runs (the caller stops the simulation).
  void start(std::uint64_t hbm_addr, std::uint64_t bytes, bool write, std::function<void()> done);

  std::uint64_t transfers() const { return transfers_; }
  std::uint64_t bytes_read() const { return bytes_read_; }
  std::uint64_t bytes_written() const { return bytes_written_; }
  std::uint64_t bytes() const { return bytes_read_ + bytes_written_; }
  // Sum of the spans of the transfers (they never overlap on one engine).
  sc_core::sc_time busy() const { return busy_; }

 private:
  // Issues one payload and waits for it; returns the target's response.
  tlm::tlm_response_status issue(std::uint64_t addr, std::uint64_t bytes, bool write);

  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  [[noreturn]] void reject(std::uint64_t hbm_addr, std::uint64_t bytes, bool write) const;

  sc_core::sc_mutex engine_;
  // The non-blocking transfer in flight: its payloads (one per chunk, alive
  // until their BEGIN_RESP), the responses still due, and what to call then.
  struct Pending {
    std::vector<std::unique_ptr<tlm::tlm_generic_payload>> payloads;
    std::size_t left = 0;
    std::uint64_t bytes = 0;
    bool write = false;
    sc_core::sc_time start;
    std::function<void()> done;
  };
  std::unique_ptr<Pending> pending_;
  std::vector<std::unique_ptr<Pending>> abandoned_;  // rejected, chunks possibly still in the Hbm
  std::uint64_t transfers_ = 0;
  std::uint64_t bytes_read_ = 0;
  std::uint64_t bytes_written_ = 0;
  sc_core::sc_time busy_ = sc_core::SC_ZERO_TIME;
};

}  // namespace hw
