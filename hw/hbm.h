#pragma once
// One chip's HBM as a TLM-2.0 target (docs/hbm.md). Addresses are interleaved
// over channels; each channel is a fluid fair-share server, so concurrent
// transfers share bandwidth and the kernel only sees an event when the set of
// transfers on some channel changes. Timing only: no data is stored.
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <cstdint>
#include <deque>
#include <memory>
#include <systemc>
#include <tlm>
#include <unordered_map>
#include <vector>

#include "hw/hbm_config.h"

namespace hw {

// Bytes of [address, address + length) on each channel: interleave block b
// lives on channel b % channels. O(channels), whatever the length.
std::vector<std::uint64_t> bytes_per_channel(const HbmConfig& config, std::uint64_t address, std::uint64_t length);

class Hbm : public sc_core::sc_module {
 public:
  // Any number of initiators (DMA engines) bind here. b_transport waits,
  // inside the caller's thread, for the incoming delay, then until every
  // channel has served its part, then one access latency. nb_transport_fw
  // (TLM-2.0 AT, base protocol) serves the same request without a thread:
  // BEGIN_REQ is accepted at once (TLM_ACCEPTED; END_REQ is implicit in
  // the response) or rejected with TLM_COMPLETED and an error status, and
  // BEGIN_RESP comes back through nb_transport_bw at the same time the
  // blocking call would return. The initiator answers BEGIN_RESP with
  // TLM_COMPLETED and keeps the payload alive until then.
  tlm_utils::multi_passthrough_target_socket<Hbm> socket;

  SC_HAS_PROCESS(Hbm);
  Hbm(sc_core::sc_module_name name, const HbmConfig& config);
  ~Hbm() override;

  const HbmConfig& config() const { return config_; }

  // Counters for reports; bytes are counted when a transfer is accepted.
  std::uint64_t transfers() const { return transfers_; }
  std::uint64_t bytes_read() const { return bytes_read_; }
  std::uint64_t bytes_written() const { return bytes_written_; }
  std::uint64_t channel_bytes(std::uint32_t channel) const;
  // Time the channel spent serving at least one transfer.
  sc_core::sc_time channel_busy(std::uint32_t channel) const;

 private:
  struct Channel;
  struct Transfer;

  void b_transport(int initiator, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_fw(int initiator, tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                     sc_core::sc_time& delay);
  // Checks a request and, when it is valid, counts it and hands its bytes to
  // the channels; returns the number of channel parts (0: nothing to serve,
  // or rejected with the error in trans' response status).
  std::uint32_t accept(tlm::tlm_generic_payload& trans, std::uint64_t id);
  // Sends BEGIN_RESP for the non-blocking transfers whose latency has run.
  void on_respond();
  // A served non-blocking transfer: BEGIN_RESP goes out after the latency.
  void respond_after_latency(Transfer* t);
  // Collects the channels' completions due now and wakes their transfers.
  void on_wake();
  // Sets wake_ to the earliest channel completion.
  void schedule_wake();
  std::uint64_t now_ticks() const;
  Transfer* take_transfer();  // for a non-blocking request

  HbmConfig config_;
  sc_core::sc_time tick_;  // kernel time resolution; FairShare counts in it
  sc_core::sc_time latency_;
  std::vector<std::unique_ptr<Channel>> channels_;
  // One event for all channels: transfers usually cover every channel, so
  // their completions coincide and one activation serves them all.
  sc_core::sc_event wake_;
  std::unordered_map<std::uint64_t, Transfer*> in_flight_;  // by transfer id
  // Non-blocking transfers served, waiting out the access latency. The
  // latency is the same for all, so the queue is in response-time order
  // and one event (for its head) serves it.
  std::deque<std::pair<std::uint64_t, Transfer*>> responding_;  // (due tick, transfer)
  sc_core::sc_event respond_;
  // Non-blocking transfers, reused: no allocation per request.
  std::vector<std::unique_ptr<Transfer>> pool_;
  std::vector<Transfer*> spare_;
  std::uint64_t next_id_ = 0;
  std::uint64_t transfers_ = 0;
  std::uint64_t bytes_read_ = 0;
  std::uint64_t bytes_written_ = 0;
};

}  // namespace hw
