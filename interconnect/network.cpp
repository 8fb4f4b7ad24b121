#include "interconnect/network.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "sim/kernel.h"
#include "sim/output.h"

namespace interconnect {

namespace {
std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}
}  // namespace

Network::Network(const sc_core::sc_module_name& name, const Topology& topology, const LinkConfig& link)
    : sc_core::sc_module(name),
      topology_(topology),
      link_(link),
      posted_(topology.chips()),
      unclaimed_(topology.chips()),
      links_(topology.link_slots()),
      bytes_out_(topology.chips(), 0),
      bytes_in_(topology.chips(), 0) {
  // About eight slots per chip (a torus collective's streams send to a
  // chip's 2k neighbours), a power of two.
  route_shift_ = 32 - 6;
  while (route_shift_ > 16 && (std::size_t{1} << (32 - route_shift_)) < 8 * static_cast<std::size_t>(topology.chips()))
    --route_shift_;
  routes_.resize(std::size_t{1} << (32 - route_shift_));
  SC_HAS_PROCESS(Network);
  // Runs at time 0, after every chip's start, so work queued during
  // elaboration and at time 0 starts; afterwards when wake_ fires or the
  // calendar rings.
  alarm_.notify(0);
  SC_METHOD(run_due);
  sensitive << wake_;
  dont_initialize();
}

Network::~Network() = default;

double Network::link_bytes_per_s(int link) const {
  const DcnConfig& d = link_.dcn;
  switch (topology_.link_class(link)) {
    case LinkClass::ici: return link_.bandwidth * topology_.link_fraction(link);
    case LinkClass::on_die: return link_.on_die_bandwidth;
    case LinkClass::host_up:
    case LinkClass::host_down: return d.host_bandwidth;
    case LinkClass::nic_out:
    case LinkClass::nic_in: return d.nic_bandwidth;
    case LinkClass::fabric_up:
    case LinkClass::fabric_down: {
      const double hosts = static_cast<double>(topology_.slice_chips() / topology_.chips_per_host());
      return hosts * d.nic_bandwidth / d.oversubscription;
    }
  }
  return link_.bandwidth;
}

double Network::link_latency_s(int link) const {
  switch (topology_.link_class(link)) {
    case LinkClass::ici: return link_.latency;
    case LinkClass::on_die: return link_.on_die_latency;
    case LinkClass::nic_out: return link_.dcn.latency;
    default: return 0.0;
  }
}

double Network::route_bytes_per_s(int src, int dst) const {
  // Without devices and degraded links every ICI link runs at the link rate
  // (and DCN servers do not count): no route to work out per receive.
  if (topology_.devices_per_chip() == 1 && topology_.uniform_links()) return link_.bandwidth;
  std::vector<int> route;
  topology_.route(src, dst, route);
  bool ici = false;
  double slowest = link_.bandwidth;
  for (int l : route) {
    const LinkClass c = topology_.link_class(l);
    if (c != LinkClass::ici && c != LinkClass::on_die) continue;
    slowest = ici ? std::min(slowest, link_bytes_per_s(l)) : link_bytes_per_s(l);
    ici = true;
  }
  return slowest;
}

std::uint64_t Network::dcn_bytes() const {
  std::uint64_t b = 0;
  for (int l = topology_.ici_link_slots(); l < topology_.link_slots(); ++l) {
    if (topology_.link_class(l) == LinkClass::nic_out) b += link_bytes(l);  // its orbit's, with translations
  }
  return b;
}

bool Network::quiet() const {
  // Model entries left in the queue with nothing in flight are superseded.
  if (live_ != 0 || client_entries_ != 0) return false;
  for (const auto& p : posted_)
    if (!p.empty()) return false;
  for (const auto& u : unclaimed_)
    if (!u.empty()) return false;
  return true;
}

Traffic Network::traffic() const {
  Traffic t{{}, {}, bytes_out_, bytes_in_, messages_, nonempty_messages_};
  t.link_bytes.reserve(links_.size());
  t.link_busy.reserve(links_.size());
  for (const LinkStats& l : links_) {
    t.link_bytes.push_back(l.bytes);
    t.link_busy.push_back(l.busy);
  }
  return t;
}

Traffic Traffic::minus(const Traffic& e) const {
  Traffic d = *this;
  for (std::size_t i = 0; i < d.link_bytes.size(); ++i) d.link_bytes[i] -= e.link_bytes[i];
  for (std::size_t i = 0; i < d.link_busy.size(); ++i) d.link_busy[i] -= e.link_busy[i];
  for (std::size_t i = 0; i < d.bytes_out.size(); ++i) d.bytes_out[i] -= e.bytes_out[i];
  for (std::size_t i = 0; i < d.bytes_in.size(); ++i) d.bytes_in[i] -= e.bytes_in[i];
  d.messages -= e.messages;
  d.nonempty_messages -= e.nonempty_messages;
  return d;
}

void Network::add_traffic(const Traffic& t) {
  for (std::size_t i = 0; i < t.link_bytes.size(); ++i) links_[i].bytes += t.link_bytes[i];
  for (std::size_t i = 0; i < t.link_busy.size(); ++i) links_[i].busy += t.link_busy[i];
  for (std::size_t i = 0; i < t.bytes_out.size(); ++i) bytes_out_[i] += t.bytes_out[i];
  for (std::size_t i = 0; i < t.bytes_in.size(); ++i) bytes_in_[i] += t.bytes_in[i];
  messages_ += t.messages;
  nonempty_messages_ += t.nonempty_messages;
}

void Network::use_translations(Translations t) {
  if (messages_ != 0 || live_ != 0) throw std::logic_error("Network::use_translations after traffic");
  translations_ = std::move(t);
}

void Network::fold(InFlight& f) {
  Message& m = f.message;
  if (!translations_.is_rep(m.src))
    throw std::logic_error("Network::send: chip " + std::to_string(m.src) + " stands for no orbit");
  if (translations_.ties(m.src, m.dst)) asymmetric_ = true;
  f.folded = false;
  for (std::size_t i = 0; i < f.path.size(); ++i) {
    int& l = f.path[i];
    l = translations_.link_rep(l);
    f.folded = f.folded || translations_.weight(l) > 1;
    for (std::size_t j = 0; j < i && !f.folded; ++j) f.folded = f.path[j] == l;
  }
  // The message its destination's orbit chip receives: the one moved by
  // the translation that takes the destination there.
  const int to = translations_.rep(m.dst);
  m.src = translations_.moved(m.src, m.dst, to);
  m.dst = to;
}

void Network::send(Message&& m, NetworkClient* client, std::uint64_t cookie) {
  const int chips = topology_.chips();
  if (m.src < 0 || m.src >= chips || m.dst < 0 || m.dst >= chips) {
    throw std::invalid_argument("Network::send: chip out of range (" + std::to_string(m.src) + " -> " +
                                std::to_string(m.dst) + ")");
  }
  int id;
  if (!free_slots_.empty()) {
    id = free_slots_.back();
    free_slots_.pop_back();
  } else {
    id = static_cast<int>(flight_.size());
    flight_.emplace_back();
  }
  InFlight& f = flight_[id];
  f.message = std::move(m);
  f.client = client;
  f.cookie = cookie;
  f.start = now();
  f.live = true;
  ++live_;
  f.arrived = false;
  f.from = f.message.src;
  f.to = f.message.dst;
  f.rate = 0;
  route(f.message.src, f.message.dst, f.path);
  const std::uint64_t bytes = f.message.bytes;
  bytes_out_[f.message.src] += bytes;
  if (!translations_.none()) fold(f);
  for (int l : f.path) links_[l].bytes += bytes * static_cast<std::uint64_t>(weight(l));
  ++messages_;
  if (bytes > 0) ++nonempty_messages_;
  transmit(id);
}

void Network::route(int src, int dst, std::vector<int>& out) {
  // Multiplicative hashing (Knuth): the top bits of the product.
  const std::uint32_t h =
      (static_cast<std::uint32_t>(src) * 0x9e3779b1u + static_cast<std::uint32_t>(dst)) * 0x85ebca6bu;
  CachedRoute& c = routes_[h >> route_shift_];
  if (c.src == src && c.dst == dst) {
    out.assign(c.links, c.links + c.hops);
    return;
  }
  topology_.route(src, dst, out);
  if (out.size() > static_cast<std::size_t>(kCachedHops)) return;
  c.src = src;
  c.dst = dst;
  c.hops = static_cast<int>(out.size());
  std::copy(out.begin(), out.end(), c.links);
}

void Network::set_rate(int id, double bytes_per_ps) {
  if (!log_rates_) return;
  InFlight& f = flight_[id];
  if (bytes_per_ps == f.rate) return;
  const double change = (bytes_per_ps - f.rate) * kPsPerSecond;
  f.rate = bytes_per_ps;
  const Ps t = now();
  for (int l : f.path) rate_log_.push_back({t, l, change * weight(l)});
}

void Network::add_link_rates(const std::vector<LinkRateChange>& changes, Ps start) {
  if (!log_rates_) return;
  for (LinkRateChange c : changes) {
    c.at += start;
    rate_log_.push_back(c);
  }
}

void Network::receive(int dst, int src, std::uint64_t tag, NetworkClient* client, std::uint64_t cookie) {
  if (!translations_.none() && !translations_.is_rep(dst))
    throw std::logic_error("Network::receive: chip " + std::to_string(dst) + " stands for no orbit");
  auto& waiting = unclaimed_.at(dst);
  for (std::size_t i = 0; i < waiting.size(); ++i) {
    const Message& m = flight_[waiting[i]].message;
    if (m.src == src && m.tag == tag) {
      const int id = waiting[i];
      waiting.erase(waiting.begin() + static_cast<std::ptrdiff_t>(i));
      // Handed over as an event, never from inside the caller's own call.
      ++client_entries_;
      enqueue(now(), {client, cookie, kMatched, static_cast<std::uint32_t>(id)});
      return;
    }
  }
  posted_[dst].push_back({src, tag, client, cookie});
}

void Network::schedule(Ps at, NetworkClient* client, std::uint64_t cookie) {
  ++client_entries_;
  enqueue(std::max(at, now()), {client, cookie, kTimer, 0});
}

void Network::push(Ps at, std::uint32_t kind, std::uint32_t id, std::uint64_t arg) {
  enqueue(std::max(at, now()), {nullptr, arg, kind, id});
}

void Network::enqueue(Ps at, const Entry& e) {
  queue_.push(at, e);
  wake_at(at);
}

void Network::wake_at(Ps at) {
  if (!can_notify_ || at >= wake_pending_) return;
  const Ps t = now();
  if (at > t) {
    alarm_.notify(at);
  } else {
    alarm_.cancel();
    wake_.notify(sc_core::SC_ZERO_TIME);
  }
  wake_pending_ = at;
}

void Network::run_due() {
  can_notify_ = false;  // pushes made while draining need no notification
  const Ps t = sc_core::sc_time_stamp().value();
  drain_now_ = t;
  draining_ = true;
  // One instant can hold millions of entries (every chip's step of a
  // collective on a big pod): the host-time deadline is polled every 4096
  // (sim/kernel.h), and past it the drain stops with the rest queued (the
  // run then ends as a runaway, exit 3).
  std::uint32_t polled = 0;
  for (bool stop = false; !stop;) {
    while (!queue_.empty() && queue_.top_time() <= t) {
      dispatch(queue_.pop());
      if ((++polled & 4095) == 0 && sim::host_deadline_passed()) {
        stop = true;
        break;
      }
    }
    if (stop) break;
    end_of_instant();
    if (queue_.empty() || queue_.top_time() > t) break;
  }
  draining_ = false;
  can_notify_ = true;
  wake_pending_ = ~Ps{0};
  if (!queue_.empty()) wake_at(queue_.top_time());
}

void Network::dispatch(const Entry& e) {
  switch (e.kind) {
    case kTimer:
      --client_entries_;
      ++events_;
      e.client->on_timer(e.arg);
      return;
    case kMatched:
      --client_entries_;
      ++events_;
      hand_over(static_cast<int>(e.id), e.client, e.arg);
      return;
    default:
      if (on_model_event(e.kind, e.id, e.arg)) ++events_;
  }
}

void Network::source_done(int id) {
  InFlight& f = flight_[id];
  if (f.client) f.client->on_sent(f.cookie);
}

void Network::delivered(int id, Ps first_byte) {
  InFlight& f = flight_[id];
  f.first_byte = first_byte;
  f.last_byte = now();
  f.arrived = true;
  bytes_in_[f.message.dst] += f.message.bytes;
  auto& posted = posted_[f.message.dst];
  for (std::size_t i = 0; i < posted.size(); ++i) {
    if (posted[i].src == f.message.src && posted[i].tag == f.message.tag) {
      const PostedReceive r = posted[i];
      posted.erase(posted.begin() + static_cast<std::ptrdiff_t>(i));
      hand_over(id, r.client, r.cookie);
      return;
    }
  }
  unclaimed_[f.message.dst].push_back(id);
}

void Network::hand_over(int id, NetworkClient* client, std::uint64_t cookie) {
  InFlight& f = flight_[id];
  Arrival a{std::move(f.message), f.first_byte, f.last_byte};
  f.live = false;
  --live_;
  f.message = Message{};
  free_slots_.push_back(id);
  // The slot is free before the client runs: it may send again at once.
  if (client) client->on_received(cookie, a);
}

Ps Network::transfer_ps(int id, double ps) const {
  return sim::duration_ps(ps, [&] {
    const InFlight& f = flight_[id];
    const Message& m = f.message;
    return "the ICI message from " + topology_.describe(f.from) + " to " + topology_.describe(f.to) + " (" +
           std::to_string(m.bytes) + " bytes at " + sim::g3(link_.bandwidth, "B/s") + " per link, tag " + hex(m.tag) +
           ")";
  });
}

std::vector<std::string> Network::pending() const {
  std::vector<std::string> out;
  for (int dst = 0; dst < topology_.chips(); ++dst) {
    for (const PostedReceive& r : posted_[dst]) {
      out.push_back(topology_.describe(dst) + " waits for a message from " + topology_.describe(r.src) + " (tag " +
                    hex(r.tag) + ") that was never sent");
    }
    for (int id : unclaimed_[dst]) {
      const Message& m = flight_[id].message;
      out.push_back("message from " + topology_.describe(m.src) + " to " + topology_.describe(m.dst) + " (tag " +
                    hex(m.tag) + ", " + std::to_string(m.bytes) + " bytes) was never received");
    }
  }
  for (const InFlight& f : flight_) {
    if (f.live && !f.arrived) {
      out.push_back("message from " + topology_.describe(f.message.src) + " to " + topology_.describe(f.message.dst) +
                    " (tag " + hex(f.message.tag) + ") is still in flight");
    }
  }
  return out;
}

}  // namespace interconnect
