#pragma once
// The order of one instant (docs/hardening.md, "Determinism"): every wake of
// a simulation that is due at a picosecond and has no cause earlier in that
// picosecond rings from this calendar, in an order the simulator defines
// from stable identities, not in SystemC's.
//
// What rings here, one Alarm each, pending at one time at most:
//   - each chip's timer (hw::Chip: MXU and vector completions, HBM access
//     latencies, launch costs);
//   - each chip's fluid HBM server (hw::HbmFluid: its earliest flow done);
//   - each chip's sequencer, once, at time 0 (hw::Sequencer: the first op
//     of every engine);
//   - the ICI network's queue (interconnect::Network: its next instant, and
//     its first drain at time 0 of what elaboration queued).
// Alarms due at one picosecond ring in the first delta cycle of it, inside
// one method process, by rank (AlarmRank): chips by index, and within a
// chip its sequencer's start, its timer, then its HBM server (flows the
// timer's completions start settle in the server's activation of the same
// instant); the network after every chip (it takes in one drain the
// messages the chips' wakes of that instant sent). Ranks are unique in a
// simulation and do not depend on the order modules were built in or
// alarms were notified in (tests/sim/test_calendar.cpp,
// tests/app/test_same_instant.cpp).
//
// What still goes through SystemC, and why its order is defined too:
//   - delta notifications (SC_ZERO_TIME): a chip timer's wake of no span,
//     an HBM server's settle in the next delta cycle, the sequencer's engine
//     wakes, runtime::NextDelta, the network's wake for an entry due now.
//     SystemC 2.3 triggers one delta cycle's notifications in an order that
//     follows from the order of the notify() calls (the reverse of it) and
//     runs the processes so made runnable in that order; each event here
//     wakes one process. The first delta cycle of every instant is the
//     calendar's one activation, so every later one follows from the
//     simulator's own code. The standard leaves this order unspecified: a
//     SystemC release that changed it could move the results by what
//     same-instant order moves (1 ps here and there, docs/performance.md).
//   - the network's own queue (interconnect/event_queue.h): plain entries
//     ordered by (time, push order); the pushes come from code whose order
//     the two points above fix.
//   - at tile and pe fidelity, the per-channel HBM (hw::Hbm's wake and
//     respond events), DMA transactions (threads waiting in b_transport)
//     and an MXU op stepped cycle by cycle (--vcd) still wake by SystemC
//     timed notifications: at one instant they run in SystemC's heap order
//     among themselves and against the calendar. The contract covers
//     kernel fidelity (every pod the shipped experiments run).
//
// It is also cheaper than the sc_event timed notifications it replaces:
// SystemC allocates an sc_event_timed per notification, keeps them in a
// binary heap compared through a function pointer, and leaves a cancelled
// one there until its time; here a cancel or a move removes the alarm's
// entry at once, and SystemC sees one notification per distinct wake time
// of the whole simulation (docs/performance.md, "Every chip simulated").
#include <cstdint>
#include <memory>
#include <systemc>
#include <unordered_set>
#include <vector>

namespace sim {

class Alarm;

// An alarm's place among the alarms due at one picosecond: lower rings first.
class AlarmRank {
 public:
  // A chip's engines, in the order they ring.
  enum class Engine : std::uint8_t { start = 0, timer = 1, hbm = 2 };
  static AlarmRank chip(std::uint32_t index, Engine engine) {
    return AlarmRank((std::uint64_t{index} << 2) | static_cast<std::uint64_t>(engine));
  }
  // The pod's network: after every chip.
  static AlarmRank network() { return AlarmRank(~std::uint64_t{0}); }
  std::uint64_t key() const { return key_; }

 private:
  explicit AlarmRank(std::uint64_t key) : key_(key) {}
  std::uint64_t key_;
};

class Calendar : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Calendar);
  explicit Calendar(sc_core::sc_module_name name);

  // The calendar of the current simulation (SystemC context), made on first
  // use; it lives while an alarm holds it. Call during elaboration.
  static std::shared_ptr<Calendar> current();

 private:
  friend class Alarm;
  static constexpr std::uint32_t kNoSlot = ~std::uint32_t{0};
  // Positions live in the calendar, by alarm id, so that moving an entry
  // touches the calendar's memory only, not its owner's.
  struct Slot {
    std::uint64_t at, rank;
    std::uint32_t alarm;
  };
  static bool earlier(const Slot& a, const Slot& b) { return a.at != b.at ? a.at < b.at : a.rank < b.rank; }

  std::uint32_t enroll(Alarm& a, AlarmRank rank);  // throws std::logic_error if the rank is taken
  void leave(std::uint32_t id);
  void set(std::uint32_t id, std::uint64_t at);      // id is not pending
  void remove(std::uint32_t id, bool rearm = true);  // id is pending
  void place(std::uint32_t i, const Slot& s) {
    heap_[i] = s;
    slot_[s.alarm] = i;
  }
  void sift_up(std::uint32_t i, Slot s);
  void arm();  // the kernel's notification at the earliest alarm's time
  void on_event();

  std::vector<Slot> heap_;
  std::vector<Alarm*> alarms_;       // by id
  std::vector<std::uint64_t> rank_;  // by id
  std::vector<std::uint32_t> slot_;  // by id: its place in heap_, or kNoSlot
  std::vector<std::uint32_t> free_;  // ids of alarms gone
  std::unordered_set<std::uint64_t> ranks_;
  std::uint64_t armed_ = ~std::uint64_t{0};  // time of event_'s pending notification
  // on_event is ringing (it arms at its end), or has not run yet: it runs
  // once at time 0, ringing what elaboration set for then, and arms.
  bool ringing_ = true;
  sc_core::sc_event event_;
};

// One owner's pending timed wake on the current simulation's calendar.
class Alarm {
 public:
  class Listener {
   public:
    virtual ~Listener() = default;
    virtual void ring() = 0;
  };
  Alarm(Listener& listener, AlarmRank rank);
  ~Alarm();
  Alarm(const Alarm&) = delete;
  Alarm& operator=(const Alarm&) = delete;

  // Rings at `at` (in picoseconds, after now; or 0 during elaboration),
  // unless a wake no later is pending (as sc_event::notify of a time: an
  // earlier one replaces a later one).
  void notify(std::uint64_t at) {
    if (at_ <= at) return;
    if (at_ != kNever) calendar_->remove(id_);
    at_ = kNever;
    calendar_->set(id_, at);  // may throw: then nothing is pending
    at_ = at;
  }
  void cancel() {
    if (at_ == kNever) return;
    at_ = kNever;
    calendar_->remove(id_);
  }
  bool pending() const { return at_ != kNever; }

 private:
  friend class Calendar;
  static constexpr std::uint64_t kNever = ~std::uint64_t{0};
  std::shared_ptr<Calendar> calendar_;
  Listener& listener_;
  std::uint32_t id_;
  std::uint64_t at_ = kNever;  // of the pending wake
};

}  // namespace sim
