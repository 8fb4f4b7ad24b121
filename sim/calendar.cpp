#include "sim/calendar.h"

#include <stdexcept>
#include <string>

namespace sim {

namespace {
std::uint64_t now_ps() { return static_cast<std::uint64_t>(sc_core::sc_time_stamp().value()); }
}  // namespace

Calendar::Calendar(sc_core::sc_module_name name) : sc_core::sc_module(name) {
  // Runs once at time 0 without a trigger (the alarms elaboration set for
  // then), afterwards when event_ fires.
  SC_METHOD(on_event);
  sensitive << event_;
}

std::shared_ptr<Calendar> Calendar::current() {
  // One per simulation: a new SystemC context (sim::reset_kernel) gets its
  // own once the last simulation's modules, and with them its alarms, are
  // gone.
  static const sc_core::sc_simcontext* context = nullptr;
  static std::weak_ptr<Calendar> calendar;
  const sc_core::sc_simcontext* now = sc_core::sc_get_curr_simcontext();
  std::shared_ptr<Calendar> c = context == now ? calendar.lock() : nullptr;
  if (!c) {
    c = std::make_shared<Calendar>(sc_core::sc_gen_unique_name("calendar"));
    calendar = c;
    context = now;
  }
  return c;
}

std::uint32_t Calendar::enroll(Alarm& a, AlarmRank rank) {
  // Two alarms of one rank would ring in an order nothing defines.
  if (!ranks_.insert(rank.key()).second)
    throw std::logic_error("Calendar: two alarms of rank " + std::to_string(rank.key()));
  std::uint32_t id;
  if (free_.empty()) {
    id = static_cast<std::uint32_t>(alarms_.size());
    alarms_.push_back(&a);
    rank_.push_back(rank.key());
    slot_.push_back(kNoSlot);
  } else {
    id = free_.back();
    free_.pop_back();
    alarms_[id] = &a;
    rank_[id] = rank.key();
  }
  return id;
}

void Calendar::leave(std::uint32_t id) {
  ranks_.erase(rank_[id]);
  alarms_[id] = nullptr;
  free_.push_back(id);
}

void Calendar::sift_up(std::uint32_t i, Slot s) {
  while (i > 0) {
    const std::uint32_t parent = (i - 1) / 2;
    if (!earlier(s, heap_[parent])) break;
    place(i, heap_[parent]);
    i = parent;
  }
  place(i, s);
}

void Calendar::set(std::uint32_t id, std::uint64_t at) {
  if (at <= now_ps() && !(at == 0 && sc_core::sc_get_status() == sc_core::SC_ELABORATION))
    throw std::logic_error("Calendar: an alarm must ring after now (or at 0, set during elaboration)");
  heap_.push_back(Slot{at, rank_[id], id});
  sift_up(static_cast<std::uint32_t>(heap_.size() - 1), heap_.back());
  if (!ringing_ && at < armed_) arm();
}

void Calendar::remove(std::uint32_t id, bool rearm) {
  std::uint32_t hole = slot_[id];
  slot_[id] = kNoSlot;
  const Slot last = heap_.back();
  heap_.pop_back();
  const auto n = static_cast<std::uint32_t>(heap_.size());
  if (hole < n) {
    // The hole sinks to a leaf along the earlier children (one comparison
    // a level), and the last entry rises from there (Floyd's heap pop).
    for (std::uint32_t child = 2 * hole + 1; child < n; child = 2 * hole + 1) {
      if (child + 1 < n && earlier(heap_[child + 1], heap_[child])) ++child;
      place(hole, heap_[child]);
      hole = child;
    }
    sift_up(hole, last);
  }
  if (rearm && !ringing_) arm();
}

void Calendar::arm() {
  const std::uint64_t target = heap_.empty() ? ~std::uint64_t{0} : heap_.front().at;
  if (target == armed_) return;
  // A later time does not replace a pending notification (sc_event::notify):
  // cancel it first, as the alarm it stood for was.
  if (target > armed_) event_.cancel();
  armed_ = target;
  if (!heap_.empty()) event_.notify(sc_core::sc_time::from_value(target - now_ps()));
}

void Calendar::on_event() {
  const std::uint64_t now = now_ps();
  armed_ = ~std::uint64_t{0};  // the notification has fired
  ringing_ = true;
  try {
    while (!heap_.empty() && heap_.front().at <= now) {
      Alarm& a = *alarms_[heap_.front().alarm];
      a.at_ = Alarm::kNever;
      remove(a.id_);
      a.listener_.ring();
    }
  } catch (...) {
    ringing_ = false;
    throw;
  }
  ringing_ = false;
  arm();
}

Alarm::Alarm(Listener& listener, AlarmRank rank)
    : calendar_(Calendar::current()), listener_(listener), id_(calendar_->enroll(*this, rank)) {}

Alarm::~Alarm() {
  // The simulation is over: no notification to move.
  if (at_ != kNever) calendar_->remove(id_, false);
  calendar_->leave(id_);
}

}  // namespace sim
