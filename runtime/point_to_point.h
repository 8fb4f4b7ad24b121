#pragma once
#include <cstdint>
#include <stdexcept>
#include <systemc>

#include "hw/program.h"
#include "interconnect/network.h"

namespace runtime {

// Point-to-point messages (hw::SendOp, hw::RecvOp) between chips' engine
// threads and the network: the calling thread sleeps until the network's
// callback says its send left the chip or its message arrived. Tags live
// above every collective's (those put the collective id, < kTagSpace, in
// bits 48..63), so the two never match each other's messages.
class PointToPoint : public interconnect::NetworkClient {
 public:
  static constexpr std::uint64_t kTagSpace = 0xFFFF;
  explicit PointToPoint(interconnect::Network& net) : net_(net) {}

  void send(int chip, const hw::SendOp& op) {
    Waiter w;
    interconnect::Message m;
    m.src = chip;
    m.dst = static_cast<int>(op.peer);
    m.tag = tag(op.tag);
    m.bytes = op.bytes;
    net_.send(std::move(m), this, cookie(w));
    w.wait();
  }
  void receive(int chip, const hw::RecvOp& op) {
    Waiter w;
    net_.receive(chip, static_cast<int>(op.peer), tag(op.tag), this, cookie(w));
    w.wait();
  }
  void on_sent(std::uint64_t c) override { waiter(c).wake(); }
  void on_received(std::uint64_t c, interconnect::Arrival&) override { waiter(c).wake(); }

 private:
  struct Waiter {
    bool done = false;
    sc_core::sc_event event;
    void wake() {
      done = true;
      event.notify(sc_core::SC_ZERO_TIME);
    }
    void wait() {
      if (!done) sc_core::wait(event);
    }
  };
  static std::uint64_t tag(std::uint64_t t) {
    if (t >> 48) throw std::logic_error("point-to-point tag above 2^48");
    return kTagSpace << 48 | t;
  }
  // The waiter lives on the blocked thread's stack until its callback ran.
  static std::uint64_t cookie(Waiter& w) { return reinterpret_cast<std::uintptr_t>(&w); }
  static Waiter& waiter(std::uint64_t c) { return *reinterpret_cast<Waiter*>(static_cast<std::uintptr_t>(c)); }

  interconnect::Network& net_;
};

}  // namespace runtime
