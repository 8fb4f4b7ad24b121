#pragma once
// What one simulated chip's sequencer runs its ops on: ICI ops (collectives,
// point-to-point messages) on the pod's network, everything else on the
// chip. An ICI op completes in the delta cycle after the network's
// callback, never inside the network's process, as an engine thread waiting
// on the network did.
#include <systemc>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <vector>

#include "hw/chip.h"
#include "hw/completion.h"
#include "runtime/collective_replay.h"
#include "runtime/pod_program.h"
#include "runtime/point_to_point.h"
#include "sim/units.h"

namespace runtime {

// Calls completions one delta cycle after they were handed in, in that
// order.
class NextDelta : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(NextDelta);
  explicit NextDelta(sc_core::sc_module_name name) : sc_core::sc_module(name) {
    SC_METHOD(run);
    sensitive << event_;
    dont_initialize();
  }
  void defer(hw::Completion c) {
    if (due_.empty()) event_.notify(sc_core::SC_ZERO_TIME);
    due_.push_back(c);
  }

 private:
  void run() {
    running_.swap(due_);  // completions deferred from here on run in the next delta cycle
    for (const hw::Completion& c : running_) c();
    running_.clear();
  }
  std::vector<hw::Completion> due_, running_;
  sc_core::sc_event event_;
};

// When a collective's chips joined it (before its launch cost): the first
// and the last, and the simulated chip that joined last (standing for its
// group); of chips that joined last at the same instant, the lowest, so
// that the order the kernel runs one instant's processes in does not
// decide it. The others waited for that one: its chips gated the
// collective.
struct JoinSpan {
  std::uint64_t first = UINT64_MAX, last = 0;  // ps
  int last_chip = -1;
  void join(std::uint64_t at, int chip) {
    first = std::min(first, at);
    if (last_chip < 0 || at > last || (at == last && chip < last_chip)) {
      last = at;
      last_chip = chip;
    }
  }
};

// One simulated chip's engines for its sequencer: ICI ops on the pod's
// network (collectives, point-to-point messages), the rest on the chip. An
// ICI op completes in the delta cycle after the network's callback, never
// inside the network's process, so what it sets going (the engine's next
// op; a delta cycle later, the ops that waited for it) comes after the
// network has taken that instant's events; or inside start(), if the
// network is done at once.
class ChipEngines final : public hw::OpExecutor, private hw::CompletionListener {
 public:
  ChipEngines(hw::Chip& chip, int c, const std::vector<int>& group, const PodProgram& pp, PodCollectives& collectives,
              PointToPoint& p2p, NextDelta& next_delta, std::vector<JoinSpan>& joins)
      : chip_(chip),
        c_(c),
        group_(group),
        pp_(pp),
        collectives_(collectives),
        p2p_(p2p),
        next_delta_(next_delta),
        joins_(joins) {}

  void start(const hw::Op& op, hw::Completion done) override {
    const auto* send = std::get_if<hw::SendOp>(&op.payload);
    const auto* recv = std::get_if<hw::RecvOp>(&op.payload);
    const auto* comm = std::get_if<hw::CommOp>(&op.payload);
    if (!send && !recv && !comm) {
      chip_.start(op, done);
      return;
    }
    const CollectiveData* data = nullptr;
    if (comm) {
      joins_[comm->collective].join(sc_core::sc_time_stamp().value(), c_);
      data = comm->collective < pp_.collective_data.size() ? &pp_.collective_data[comm->collective] : nullptr;
      // Functional collectives read the chip's input when it joins.
      if (data) collectives_.simulated(comm->collective).set_input(c_, data->input(c_));
    }
    const std::uint64_t slot = hold({done, comm ? comm->collective : 0, data});
    if (const std::uint64_t lead = comm ? launch_ps_ + comm->hold_ps : 0; lead > 0) {
      // The chip joins once the collective is launched: its fixed cost
      // (ici.collective_launch) and the op's own hold come before the first
      // transfer.
      chip_.delay(lead, {this, slot | kLaunched});
      return;
    }
    const std::uint64_t outer = starting_;
    const bool outer_inside = done_inside_;
    starting_ = slot;
    done_inside_ = false;
    try {
      // The replicas this chip stands for send, receive or join with it,
      // and it goes on when the slowest of them has finished.
      if (send) {
        p2p_.send(group_, *send, {this, slot});
      } else if (recv) {
        p2p_.receive(group_, *recv, {this, slot});
      } else {
        collectives_.join(comm->collective, group_, [this, slot] { completed(slot); });
      }
    } catch (...) {
      starting_ = outer;
      done_inside_ = outer_inside;
      throw;
    }
    const bool inside = done_inside_;
    starting_ = outer;
    done_inside_ = outer_inside;
    if (inside) finish(slot);
  }

 private:
  static constexpr std::uint64_t kLater = std::uint64_t{1} << 63;     // token bit: the next delta cycle has come
  static constexpr std::uint64_t kLaunched = std::uint64_t{1} << 62;  // token bit: a collective's launch is over
  static constexpr std::uint64_t kNone = ~std::uint64_t{0};

  struct InFlight {
    hw::Completion done;
    std::uint32_t collective = 0;
    const CollectiveData* data = nullptr;  // a functional collective's
  };

  // From the network's process (or inside start()): the op is done.
  void completed(std::uint64_t token) override {
    if (token & kLaunched) {
      join(token & ~kLaunched);
    } else if (token & kLater) {
      finish(token & ~kLater);
    } else if (token == starting_) {
      done_inside_ = true;
    } else {
      next_delta_.defer({this, token | kLater});
    }
  }
  // From the chip's timer: the collective of `slot` is launched; it joins
  // now, and completes in a later delta cycle at the earliest.
  void join(std::uint64_t slot) {
    try {
      collectives_.join(in_flight_[slot].collective, group_, [this, slot] { completed(slot); });
    } catch (...) {
      release(slot).done.fail(std::current_exception());
    }
  }
  void failed(std::uint64_t token, std::exception_ptr error) override {
    release(token & ~kLater).done.fail(std::move(error));
  }
  void finish(std::uint64_t slot) {
    const InFlight f = release(slot);
    try {
      // Functional collectives write the chip's output when it is done.
      if (f.data) f.data->output(c_, collectives_.simulated(f.collective).output(c_));
    } catch (...) {
      f.done.fail(std::current_exception());
      return;
    }
    f.done();
  }
  std::uint64_t hold(const InFlight& f) {
    if (free_.empty()) {
      in_flight_.push_back(f);
      return in_flight_.size() - 1;
    }
    const std::uint64_t slot = free_.back();
    free_.pop_back();
    in_flight_[slot] = f;
    return slot;
  }
  InFlight release(std::uint64_t slot) {
    free_.push_back(slot);
    return in_flight_[slot];
  }

  hw::Chip& chip_;
  const int c_;
  const std::vector<int>& group_;
  const PodProgram& pp_;
  PodCollectives& collectives_;
  PointToPoint& p2p_;
  NextDelta& next_delta_;
  std::vector<JoinSpan>& joins_;
  const std::uint64_t launch_ps_ =
      static_cast<std::uint64_t>(std::llround(chip_.config().ici.collective_launch * sim::kPsPerSecond));
  std::vector<InFlight> in_flight_;  // ICI ops in flight, by slot
  std::vector<std::uint64_t> free_;
  std::uint64_t starting_ = kNone;  // the slot of the op whose start() is under way
  bool done_inside_ = false;
};

}  // namespace runtime
