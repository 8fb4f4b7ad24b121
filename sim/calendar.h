#pragma once
// Timed wakes of many small processes on one SystemC event. Every chip of
// a pod has a timer and an HBM server that each wait for their next due
// time (hw::Chip, hw::HbmFluid); as sc_event timed notifications those cost
// SystemC an sc_event_timed allocated per notification, a binary heap of
// them compared through a function pointer, and a cancelled one stays in
// that heap until its time (about a fifth of a pod's simulation, measured,
// docs/performance.md "Every chip simulated"). Here each owner holds one
// Alarm, pending at one time at most, in a heap indexed by alarm, so a
// cancel or a move removes the old entry at once; SystemC sees one
// notification per distinct wake time of the whole pod.
//
// An Alarm behaves as an sc_event's timed notification: notify(at) keeps a
// pending wake that is no later, cancel() drops it, and the owner's ring()
// runs in the first delta cycle of `at`, as a method process woken by a
// timed notification would. Alarms due at one time ring in the order they
// were notified.
#include <cstdint>
#include <memory>
#include <systemc>
#include <vector>

namespace sim {

class Alarm;

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
    std::uint64_t at, seq;
    std::uint32_t alarm;
  };
  static bool earlier(const Slot& a, const Slot& b) { return a.at != b.at ? a.at < b.at : a.seq < b.seq; }

  std::uint32_t enroll(Alarm& a);
  void leave(std::uint32_t id);
  bool pending(std::uint32_t id) const { return slot_[id] != kNoSlot; }
  void set(std::uint32_t id, std::uint64_t at);  // id is not pending
  void remove(std::uint32_t id, bool rearm = true);  // id is pending
  void place(std::uint32_t i, const Slot& s) {
    heap_[i] = s;
    slot_[s.alarm] = i;
  }
  void sift_up(std::uint32_t i, Slot s);
  void arm();  // the kernel's notification at the earliest alarm's time
  void on_event();

  std::vector<Slot> heap_;
  std::vector<Alarm*> alarms_;        // by id
  std::vector<std::uint32_t> slot_;   // by id: its place in heap_, or kNoSlot
  std::vector<std::uint32_t> free_;   // ids of alarms gone
  std::uint64_t seq_ = 0;
  std::uint64_t armed_ = ~std::uint64_t{0};  // time of event_'s pending notification
  bool ringing_ = false;                     // on_event is ringing; it arms at its end
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
  explicit Alarm(Listener& listener);
  ~Alarm();
  Alarm(const Alarm&) = delete;
  Alarm& operator=(const Alarm&) = delete;

  // Rings at `at` (> now, in picoseconds), unless a wake no later is
  // pending (as sc_event::notify of a nonzero time).
  void notify(std::uint64_t at) {
    if (at_ <= at) return;
    if (at_ != kNever) calendar_->remove(id_);
    at_ = at;
    calendar_->set(id_, at);
  }
  void cancel() {
    if (at_ == kNever) return;
    at_ = kNever;
    calendar_->remove(id_);
  }

 private:
  friend class Calendar;
  static constexpr std::uint64_t kNever = ~std::uint64_t{0};
  std::shared_ptr<Calendar> calendar_;
  Listener& listener_;
  std::uint32_t id_;
  std::uint64_t at_ = kNever;  // of the pending wake
};

}  // namespace sim
