#pragma once
// The reference ICI model: every message is cut into packets that cross the
// route hop by hop. Each link direction sends one packet at a time and picks
// among the messages with a packet waiting round-robin (a message's own
// packets stay in order). Cut-through: a packet may start on the next link
// one hop latency after it started on this one (never finishing before its
// tail arrived); store-and-forward: only after it fully arrived plus the hop
// latency. Flow control: a message may hold at most window_ packets in the
// buffer of each router on its route (credits return as a packet moves on),
// so a message held up downstream paces its source instead of piling into
// the network, and one blocked message never blocks another (no
// head-of-line blocking). Slow (events per packet per hop); it exists to
// check IciNetwork.
#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "interconnect/network.h"

namespace interconnect {

class PacketNetwork : public Network {
 public:
  PacketNetwork(const sc_core::sc_module_name& name, const Topology& topology, const LinkConfig& link);
  const char* model() const override { return "packet"; }

 protected:
  void transmit(int id) override;
  bool on_model_event(std::uint32_t kind, std::uint32_t id, std::uint64_t arg) override;

 private:
  enum Kind : std::uint32_t { kPacketReady = kFirstModelKind, kLinkFree, kPacketLanded, kSourceDone, kLocal };
  struct Progress {  // of one message
    std::uint64_t packets = 0;
    std::uint64_t last_packet_bytes = 0;
    std::vector<std::uint64_t> waiting;  // per hop: packets ready to cross that hop's link
    std::vector<std::uint64_t> next;     // per hop: index of the next packet to cross it
    std::vector<char> queued;            // per hop: in that link's round-robin list
    std::vector<std::uint64_t> held;     // per hop: buffer slots taken before that hop's link
    std::uint64_t landed = 0;
    Ps first_byte = 0;
  };
  struct Port {
    double bytes_per_s = 0.0;
    bool busy = false;
    std::deque<std::pair<int, int>> turn;  // (message, hop) with packets waiting
  };

  // Packets of one message a router buffers for one hop: enough to cover the
  // hop latency plus two packet times, so credits never throttle a lone
  // message (credit return is taken as instantaneous).
  std::uint64_t window_;

  void enqueue(int id, int hop);
  bool blocked(int id, int hop) const;
  void try_send(int link);

  std::vector<Progress> progress_;
  std::vector<Port> ports_;
  Ps latency_ps_;
};

}  // namespace interconnect
