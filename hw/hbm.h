#pragma once
// One chip's HBM as a TLM-2.0 target (docs/hbm.md). Addresses are interleaved
// over channels; each channel is a fluid fair-share server, so concurrent
// transfers share bandwidth and the kernel only sees an event when the set of
// transfers on some channel changes. Timing only: no data is stored.
#include <cstdint>
#include <memory>
#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <unordered_map>
#include <vector>

#include "hw/hbm_config.h"

namespace hw {

// Bytes of [address, address + length) on each channel: interleave block b
// lives on channel b % channels. O(channels), whatever the length.
std::vector<std::uint64_t> bytes_per_channel(const HbmConfig& config, std::uint64_t address,
                                             std::uint64_t length);

class Hbm : public sc_core::sc_module {
 public:
  // Any number of initiators (DMA engines) bind here. b_transport waits,
  // inside the caller's thread, for the incoming delay, then until every
  // channel has served its part, then one access latency.
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
  // Collects the channels' completions due now and wakes their transfers.
  void on_wake();
  // Sets wake_ to the earliest channel completion.
  void schedule_wake();
  std::uint64_t now_ticks() const;

  HbmConfig config_;
  sc_core::sc_time tick_;  // kernel time resolution; FairShare counts in it
  sc_core::sc_time latency_;
  std::vector<std::unique_ptr<Channel>> channels_;
  // One event for all channels: transfers usually cover every channel, so
  // their completions coincide and one activation serves them all.
  sc_core::sc_event wake_;
  std::unordered_map<std::uint64_t, Transfer*> in_flight_;  // by transfer id
  std::uint64_t next_id_ = 0;
  std::uint64_t transfers_ = 0;
  std::uint64_t bytes_read_ = 0;
  std::uint64_t bytes_written_ = 0;
};

}  // namespace hw
