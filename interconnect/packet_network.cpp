#include "interconnect/packet_network.h"

#include <algorithm>
#include <string>

namespace interconnect {

PacketNetwork::PacketNetwork(const sc_core::sc_module_name& name, const Topology& topology, const LinkConfig& link)
    : Network(name, topology, link),
      ports_(topology.link_slots()),
      latency_ps_(sim::duration_from_seconds(link.latency, [] { return std::string("the ICI link latency"); })) {
  // A degraded link (pod.links) serializes at its share of the bandwidth.
  for (int l = 0; l < topology.link_slots(); ++l) ports_[l].bytes_per_s = link_bytes_per_s(l);
  const Ps packet_ps =
      std::max<Ps>(1, sim::duration_from_seconds(static_cast<double>(link.packet_bytes) / link.bandwidth, [&] {
                     return "one ICI packet (" + std::to_string(link.packet_bytes) + " bytes at " +
                            std::to_string(link.bandwidth) + " B/s)";
                   }));
  window_ = (latency_ps_ + packet_ps - 1) / packet_ps + 2;
}

void PacketNetwork::transmit(int id) {
  if (id >= static_cast<int>(progress_.size())) progress_.resize(static_cast<std::size_t>(id) + 1);
  const std::uint64_t bytes = bytes_of(id);
  const std::uint64_t size = link_config().packet_bytes;
  Progress& p = progress_[id];
  p.packets = bytes == 0 ? 1 : (bytes + size - 1) / size;  // an empty message still sends a header
  p.last_packet_bytes = bytes - (p.packets - 1) * size;
  const std::size_t hops = path(id).size();
  p.waiting.assign(hops, 0);
  p.next.assign(hops, 0);
  p.queued.assign(hops, 0);
  p.held.assign(hops, 0);
  p.landed = 0;
  if (hops == 0) {
    push(now(), kLocal, static_cast<std::uint32_t>(id), 0);
    return;
  }
  p.waiting[0] = p.packets;  // the whole message is in the source's memory
  enqueue(id, 0);
  try_send(path(id)[0]);
}

void PacketNetwork::enqueue(int id, int hop) {
  Progress& p = progress_[id];
  if (p.queued[hop]) return;
  p.queued[hop] = 1;
  ports_[path(id)[hop]].turn.emplace_back(id, hop);
}

bool PacketNetwork::blocked(int id, int hop) const {
  const Progress& p = progress_[id];
  return hop + 1 < static_cast<int>(p.held.size()) && p.held[hop + 1] >= window_;
}

void PacketNetwork::try_send(int link) {
  Port& port = ports_[link];
  if (port.busy) return;
  // Round-robin over the messages with a packet waiting, skipping those
  // whose next router has no room for them.
  std::size_t tries = port.turn.size();
  while (tries-- > 0 && blocked(port.turn.front().first, port.turn.front().second)) {
    port.turn.push_back(port.turn.front());
    port.turn.pop_front();
  }
  if (port.turn.empty() || blocked(port.turn.front().first, port.turn.front().second)) return;
  const auto [id, hop] = port.turn.front();
  port.turn.pop_front();
  Progress& p = progress_[id];
  const std::uint64_t index = p.next[hop]++;
  --p.waiting[hop];
  if (p.waiting[hop] > 0) {
    port.turn.emplace_back(id, hop);  // round-robin: back of the line
  } else {
    p.queued[hop] = 0;
  }
  const std::vector<int>& route = path(id);
  if (hop + 1 < static_cast<int>(route.size())) ++p.held[hop + 1];
  if (hop > 0) {
    // The packet leaves this router's buffer: room for one more from upstream.
    --p.held[hop];
  }
  const std::uint64_t size = index + 1 == p.packets ? p.last_packet_bytes : link_config().packet_bytes;
  const Ps t = now();
  const Ps tx = transfer_ps(id, static_cast<double>(size) / port.bytes_per_s * kPsPerSecond);
  port.busy = true;
  add_busy(link, tx);
  push(t + tx, kLinkFree, static_cast<std::uint32_t>(link), 0);
  if (hop == 0 && index + 1 == p.packets) push(t + tx, kSourceDone, static_cast<std::uint32_t>(id), 0);
  if (hop + 1 < static_cast<int>(route.size())) {
    Ps ready;
    if (link_config().switching == Switching::cut_through) {
      const Ps tx_next = transfer_ps(id, static_cast<double>(size) / ports_[route[hop + 1]].bytes_per_s * kPsPerSecond);
      ready = t + latency_ps_ + (tx > tx_next ? tx - tx_next : 0);
    } else {
      ready = t + tx + latency_ps_;
    }
    push(ready, kPacketReady, static_cast<std::uint32_t>(id), static_cast<std::uint64_t>(hop + 1));
  } else {
    // arg: when this packet's head reached the destination
    push(t + tx + latency_ps_, kPacketLanded, static_cast<std::uint32_t>(id), t + latency_ps_);
  }
  if (hop > 0) try_send(route[hop - 1]);  // the upstream link may have been waiting for that room
}

bool PacketNetwork::on_model_event(std::uint32_t kind, std::uint32_t id, std::uint64_t arg) {
  switch (kind) {
    case kPacketReady: {
      const int hop = static_cast<int>(arg);
      ++progress_[id].waiting[hop];
      enqueue(static_cast<int>(id), hop);
      try_send(path(static_cast<int>(id))[hop]);
      return true;
    }
    case kLinkFree:
      ports_[id].busy = false;
      try_send(static_cast<int>(id));
      return true;
    case kPacketLanded: {
      Progress& p = progress_[id];
      if (p.landed++ == 0) p.first_byte = arg;
      if (p.landed == p.packets) delivered(static_cast<int>(id), p.first_byte);
      return true;
    }
    case kSourceDone: source_done(static_cast<int>(id)); return true;
    case kLocal:
      source_done(static_cast<int>(id));
      delivered(static_cast<int>(id), now());
      return true;
    default: return false;
  }
}

}  // namespace interconnect
