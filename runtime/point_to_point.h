#pragma once
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "hw/completion.h"
#include "hw/program.h"
#include "interconnect/network.h"

namespace runtime {

// Point-to-point messages (hw::SendOp, hw::RecvOp) between chips, over the
// network, without blocking: a send or receive starts now and its
// completion is called from the network's process when the send's last byte
// has left the chip or the whole message has arrived. Tags live above every
// collective's (those put the collective id, < kTagSpace, in bits 48..63),
// so the two never match each other's messages.
class PointToPoint : public interconnect::NetworkClient {
 public:
  static constexpr std::uint64_t kTagSpace = 0xFFFF;
  explicit PointToPoint(interconnect::Network& net) : net_(net) {}

  void send(int chip, const hw::SendOp& op, hw::Completion done) {
    interconnect::Message m;
    m.src = chip;
    m.dst = static_cast<int>(op.peer);
    m.tag = tag(op.tag);
    m.bytes = op.bytes;
    net_.send(std::move(m), this, hold(done));
  }
  void receive(int chip, const hw::RecvOp& op, hw::Completion done) {
    const std::uint64_t t = tag(op.tag);
    net_.receive(chip, static_cast<int>(op.peer), t, this, hold(done));
  }
  void on_sent(std::uint64_t cookie) override { release(cookie)(); }
  void on_received(std::uint64_t cookie, interconnect::Arrival&) override { release(cookie)(); }

 private:
  static std::uint64_t tag(std::uint64_t t) {
    if (t >> 48) throw std::logic_error("point-to-point tag above 2^48");
    return kTagSpace << 48 | t;
  }
  // The completions of messages in flight, by cookie; slots are reused.
  std::uint64_t hold(hw::Completion done) {
    if (free_.empty()) {
      waiting_.push_back(done);
      return waiting_.size() - 1;
    }
    const std::uint64_t cookie = free_.back();
    free_.pop_back();
    waiting_[cookie] = done;
    return cookie;
  }
  hw::Completion release(std::uint64_t cookie) {
    free_.push_back(cookie);
    return waiting_[cookie];
  }

  interconnect::Network& net_;
  std::vector<hw::Completion> waiting_;
  std::vector<std::uint64_t> free_;
};

}  // namespace runtime
