#pragma once
// The narrow interface between chips and an ICI model: send, receive,
// schedule. One SystemC module stands for the whole network; inside it an
// event queue of plain C++ entries wakes one SC_METHOD only at instants where
// something changes (docs/architecture.md). Models (IciNetwork: fluid fair share;
// PacketNetwork: packet by packet) implement transmit() and their own events;
// message matching, statistics and the pending-work report live here, so any
// model that moves bytes from chip to chip can replace another.
#include <cstdint>
#include <string>
#include <systemc>
#include <vector>

#include "interconnect/event_queue.h"
#include "interconnect/pod_config.h"
#include "interconnect/time.h"
#include "interconnect/topology.h"
#include "interconnect/translations.h"
#include "sim/calendar.h"

namespace interconnect {

struct Message {
  int src = 0;
  int dst = 0;
  std::uint64_t tag = 0;  // matched with the receive's (src, tag)
  std::uint64_t bytes = 0;
  std::vector<double> payload;  // functional runs only; empty otherwise
};

struct Arrival {
  Message message;
  Ps first_byte = 0;  // the head reached dst
  Ps last_byte = 0;   // the tail reached dst
};

// A change of the bytes per second a link direction carries, at `at`
// (Network::log_link_rates).
struct LinkRateChange {
  Ps at = 0;
  int link = 0;
  double bytes_per_s = 0;  // added to the link's rate from `at` on (negative: taken off)
};

// Who hears back from the network. The cookie is the caller's own tag for
// the operation; callbacks run inside the network's process at the time of
// the event and may call send/receive/schedule.
class NetworkClient {
 public:
  virtual ~NetworkClient() = default;
  // The source has put the message's last byte on its first link.
  virtual void on_sent(std::uint64_t /*cookie*/) {}
  // The matched message has fully arrived (the payload may be moved out).
  virtual void on_received(std::uint64_t /*cookie*/, Arrival& /*arrival*/) {}
  virtual void on_timer(std::uint64_t /*cookie*/) {}
};

// What the network has carried so far: the statistics a run reports.
struct Traffic {
  std::vector<std::uint64_t> link_bytes;
  std::vector<Ps> link_busy;
  std::vector<std::uint64_t> bytes_out, bytes_in;  // per chip
  std::uint64_t messages = 0, nonempty_messages = 0;
  Traffic minus(const Traffic& earlier) const;
};

class Network : public sc_core::sc_module, private sim::Alarm::Listener {
 public:
  Network(const sc_core::sc_module_name& name, const Topology& topology, const LinkConfig& link);
  ~Network() override;

  // Starts moving `m` from m.src to m.dst now, along the dimension-order route.
  void send(Message&& m, NetworkClient* client, std::uint64_t cookie);
  // Receives the message (src -> dst, tag): client->on_received when it has
  // fully arrived, or at once (as an event now) if it already has.
  void receive(int dst, int src, std::uint64_t tag, NetworkClient* client, std::uint64_t cookie);
  // client->on_timer(cookie) at absolute time `at` (>= now).
  void schedule(Ps at, NetworkClient* client, std::uint64_t cookie);

  // Inside the network's process the time of the instant it drains, read
  // once per activation; elsewhere the kernel's.
  Ps now() const { return draining_ ? drain_now_ : static_cast<Ps>(sc_core::sc_time_stamp().value()); }
  const Topology& topology() const { return topology_; }
  // From now on only the orbit chips of `t` send and receive, each for its
  // whole orbit (translations.h); before any traffic. A message whose route
  // is not the image of its orbit's (Translations::ties) marks the run
  // asymmetric: its results stand for nothing and the caller runs again
  // without translations.
  void use_translations(Translations t);
  const Translations& translations() const { return translations_; }
  bool asymmetric() const { return asymmetric_; }
  const LinkConfig& link_config() const { return link_; }
  virtual const char* model() const = 0;

  // The server a link id stands for: an ICI link direction (LinkConfig), or
  // a DCN server of a multislice pod (DcnConfig): a chip's host link, a
  // host's NICs, a slice's share of the fabric core.
  double link_bytes_per_s(int link) const;
  double link_latency_s(int link) const;  // DCN: the whole route's latency sits on the NIC out
  // The slowest ICI link or on-die path on the route from src to dst: the
  // rate a message arrives at, uncontended. DCN servers are left out (a
  // reduction of a message between slices is paced at the ICI link rate).
  double route_bytes_per_s(int src, int dst) const;
  // Bytes of the messages between slices (each crosses one NIC out).
  std::uint64_t dcn_bytes() const;

  // Statistics. Link busy time is the time the link direction spent
  // serializing bytes, so utilization = busy / elapsed.
  // With translations each link and chip reads its orbit's.
  std::uint64_t link_bytes(int link) const { return links_[stand_in(link)].bytes; }
  Ps link_busy(int link) const { return links_[stand_in(link)].busy; }
  std::uint64_t chip_bytes_out(int chip) const { return bytes_out_[translations_.rep(chip)]; }
  std::uint64_t chip_bytes_in(int chip) const { return bytes_in_[translations_.rep(chip)]; }
  std::uint64_t messages() const { return messages_; }  // simulated (one per orbit with translations)
  // Messages the pod's links carried: each simulated one stands for its orbit's.
  // (An empty one, sent only with translations, carries nothing.)
  std::uint64_t messages_carried() const {
    return nonempty_messages_ * static_cast<std::uint64_t>(translations_.order());
  }
  std::uint64_t events() const { return events_; }  // queue entries acted on

  // No message in flight or waiting to be received, no receive posted,
  // nothing scheduled: what happens next depends only on what is sent next.
  bool quiet() const;
  Traffic traffic() const;
  // Books traffic that a replayed collective would have carried (the
  // caller has shown it equals a run it simulated before).
  void add_traffic(const Traffic& t);

  // From now on, log every change of a link direction's rate in use: the
  // sum of its flows' rates, each weighted as link_bytes counts its bytes
  // (so the rate's integral over the run is link_bytes), for trace
  // counters. With translations, orbit links, as link_bytes reads them.
  // Models that know their flows' rates log (the fluid model); the packet
  // model logs nothing.
  void log_link_rates() { log_rates_ = true; }
  bool logs_link_rates() const { return log_rates_; }
  const std::vector<LinkRateChange>& link_rate_log() const { return rate_log_; }
  // Books rate changes a replayed collective would have made (times
  // relative to its start) from `start` on, as add_traffic its bytes.
  void add_link_rates(const std::vector<LinkRateChange>& changes, Ps start);

  // Receives never matched, messages never received, transfers in flight:
  // one line each, for deadlock reports. Empty when the network is quiet.
  std::vector<std::string> pending() const;

 protected:
  // The model starts moving in-flight message `id` now; it calls
  // source_done(id) when the last byte left the source and delivered(id, ..)
  // when it reached the destination.
  virtual void transmit(int id) = 0;
  // An entry the model pushed with kind >= kFirstModelKind is due. Returns
  // false for an entry that no longer applies (superseded), which is not
  // counted as an event.
  virtual bool on_model_event(std::uint32_t kind, std::uint32_t id, std::uint64_t arg) = 0;
  // Every event of the current instant has run; the model may settle state
  // (and push entries at now or later).
  virtual void end_of_instant() {}

  static constexpr std::uint32_t kFirstModelKind = 8;
  void push(Ps at, std::uint32_t kind, std::uint32_t id, std::uint64_t arg);
  // Link ids of the message's route (with translations, each link's orbit
  // link, and a link may come twice, or weigh more than one flow:
  // folded(id)).
  const std::vector<int>& path(int id) const { return flight_[id].path; }
  bool folded(int id) const { return flight_[id].folded; }
  // Flows of the pod a simulated flow stands for on `link` (its orbit
  // link): Translations::weight.
  int weight(int link) const { return translations_.weight(link); }
  std::uint64_t bytes_of(int id) const { return flight_[id].message.bytes; }
  Ps started(int id) const { return flight_[id].start; }
  // `ps` of message `id`'s transfer as whole picoseconds, rounded up; one
  // beyond simulated time ends the run naming the message (sim::duration_ps).
  Ps transfer_ps(int id, double ps) const;
  void source_done(int id);
  void delivered(int id, Ps first_byte);
  void add_busy(int link, Ps t) { links_[link].busy += t; }
  // Message `id` is serialized at `bytes_per_ps` from now on (0: done),
  // for log_link_rates.
  void set_rate(int id, double bytes_per_ps);

 private:
  enum Kind : std::uint32_t { kTimer = 0, kMatched = 1 };
  struct Entry {
    NetworkClient* client;
    std::uint64_t arg;
    std::uint32_t kind;
    std::uint32_t id;
  };
  struct InFlight {
    Message message;
    NetworkClient* client = nullptr;
    std::uint64_t cookie = 0;
    std::vector<int> path;
    Ps start = 0;
    Ps first_byte = 0;
    Ps last_byte = 0;
    bool live = false;
    bool arrived = false;
    bool folded = false;   // path holds a link twice, or one of weight > 1
    int from = 0, to = 0;  // as sent (before fold moved the message)
    double rate = 0;       // bytes per ps, as logged (log_link_rates)
  };
  struct PostedReceive {
    int src;
    std::uint64_t tag;
    NetworkClient* client;
    std::uint64_t cookie;
  };

  void run_due();
  void ring() override { run_due(); }
  void wake_at(Ps at);
  void dispatch(const Entry& e);
  void enqueue(Ps at, const Entry& e);
  void hand_over(int id, NetworkClient* client, std::uint64_t cookie);
  // Moves a message of an orbit chip onto its destination's orbit chip (its
  // path onto orbit links); notes a route that is not invariant.
  void fold(InFlight& f);
  // topology_.route(src, dst, out), from a cache: a collective's chips send
  // to the same few peers step after step, and working a route out
  // (coordinates axis by axis) cost more than a look-up.
  void route(int src, int dst, std::vector<int>& out);
  int stand_in(int link) const { return translations_.none() ? link : translations_.link_rep(link); }

  Topology topology_;
  LinkConfig link_;
  EventQueue<Entry> queue_;
  Ps wake_pending_ = ~Ps{0};  // time of the notification of wake_ in force
  bool can_notify_ = false;   // false during elaboration and while run_due drains the queue
  bool draining_ = false;     // run_due is draining the queue at drain_now_
  Ps drain_now_ = 0;
  sc_core::sc_event wake_;  // an entry due now, in the next delta cycle
  // The next instant after now (and time 0, for what elaboration queued).
  sim::Alarm alarm_{*this, sim::AlarmRank::network()};

  // Routes of up to kCachedHops links by (src, dst), direct-mapped: a
  // slot holds the last route whose pair hashes to it.
  static constexpr int kCachedHops = 6;
  struct CachedRoute {
    int src = -1, dst = -1;
    int hops = 0;
    int links[kCachedHops] = {};
  };
  std::vector<CachedRoute> routes_;
  int route_shift_ = 0;  // 32 - log2(slots)

  std::vector<InFlight> flight_;
  std::vector<int> free_slots_;
  std::size_t live_ = 0;                            // messages in flight
  std::size_t client_entries_ = 0;                  // timers and matched receives queued
  std::vector<std::vector<PostedReceive>> posted_;  // per destination chip
  std::vector<std::vector<int>> unclaimed_;         // per destination chip: arrived, not yet received

  struct LinkStats {  // one link direction: the bytes it carried, the time it spent serializing
    std::uint64_t bytes = 0;
    Ps busy = 0;
  };
  std::vector<LinkStats> links_;
  std::vector<std::uint64_t> bytes_out_, bytes_in_;
  std::uint64_t messages_ = 0, nonempty_messages_ = 0;
  std::uint64_t events_ = 0;
  Translations translations_;
  bool asymmetric_ = false;
  bool log_rates_ = false;
  std::vector<LinkRateChange> rate_log_;
};

}  // namespace interconnect
