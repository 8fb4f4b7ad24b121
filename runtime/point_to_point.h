#pragma once
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "hw/completion.h"
#include "hw/program.h"
#include "interconnect/collective.h"
#include "interconnect/network.h"
#include "runtime/pod_program.h"

namespace runtime {

// Point-to-point messages (hw::SendOp, hw::RecvOp) between chips, over the
// network, without blocking: a send or receive starts now and its
// completion is called from the network's process when the send's last byte
// has left the chip or the whole message has arrived. A message's peer is an
// entry of the chip's peer table (PodProgram::peers). Tags live above every
// collective's (those put the collective id, < kTagSpace, in bits 40..63),
// so the two never match each other's messages.
//
// A simulated chip may stand for a group of replicas (pod_run.h): each
// member then sends its own message to its own peer, along its own route,
// or posts its own receive, at the instant the representative does, so the
// network carries every chip's messages; the op completes when the slowest
// member is done. How far members' completions lie from their
// representative's, per op, summed over ops, is spread_ps(): the premise
// check of one chip per group (pod_simulation.h).
class PointToPoint : public interconnect::NetworkClient {
 public:
  static constexpr std::uint64_t kTagSpace = interconnect::Collective::kMaxCollectives;
  PointToPoint(interconnect::Network& net, const PodProgram& pp) : net_(net), pp_(pp) {}

  // `members` are the representative (members.front()) and its replicas.
  void send(const std::vector<int>& members, const hw::SendOp& op, hw::Completion done) {
    const std::uint64_t t = tag(op.tag);
    const std::uint64_t slot = hold(done, members.size());
    for (std::size_t i = 0; i < members.size(); ++i) {
      interconnect::Message m;
      m.src = members[i];
      m.dst = static_cast<int>(pp_.peer(static_cast<std::uint32_t>(members[i]), op.peer));
      m.tag = t;
      m.bytes = op.bytes;
      net_.send(std::move(m), this, cookie(slot, i == 0));
    }
  }
  void receive(const std::vector<int>& members, const hw::RecvOp& op, hw::Completion done) {
    const std::uint64_t t = tag(op.tag);
    const std::uint64_t slot = hold(done, members.size());
    for (std::size_t i = 0; i < members.size(); ++i) {
      const int src = static_cast<int>(pp_.peer(static_cast<std::uint32_t>(members[i]), op.peer));
      net_.receive(members[i], src, t, this, cookie(slot, i == 0));
    }
  }
  void on_sent(std::uint64_t cookie) override { member_done(cookie); }
  void on_received(std::uint64_t cookie, interconnect::Arrival&) override { member_done(cookie); }

  // Summed over ops: the largest gap between a member's completion and its
  // representative's (0 when every chip is simulated).
  std::uint64_t spread_ps() const { return spread_ps_; }

 private:
  // An op of a group in flight: its completion, members not done yet, and
  // the representative's and the earliest and latest members' completions.
  struct GroupOp {
    hw::Completion done;
    std::size_t left = 0;
    interconnect::Ps own = 0, first = ~interconnect::Ps{0}, last = 0;
  };

  static std::uint64_t tag(std::uint64_t t) {
    if (t >> 40) throw std::logic_error("point-to-point tag above 2^40");
    return kTagSpace << 40 | t;
  }
  static std::uint64_t cookie(std::uint64_t slot, bool representative) { return slot << 1 | (representative ? 1 : 0); }

  void member_done(std::uint64_t cookie) {
    GroupOp& g = ops_[cookie >> 1];
    const interconnect::Ps now = net_.now();
    if (cookie & 1) g.own = now;
    g.first = std::min(g.first, now);
    g.last = std::max(g.last, now);
    if (--g.left > 0) return;
    spread_ps_ += std::max(g.last - g.own, g.own - g.first);
    const hw::Completion done = g.done;
    free_.push_back(cookie >> 1);
    done();
  }
  // Ops in flight, by slot; slots are reused.
  std::uint64_t hold(hw::Completion done, std::size_t members) {
    const GroupOp g{done, members};
    if (free_.empty()) {
      ops_.push_back(g);
      return ops_.size() - 1;
    }
    const std::uint64_t slot = free_.back();
    free_.pop_back();
    ops_[slot] = g;
    return slot;
  }

  interconnect::Network& net_;
  const PodProgram& pp_;
  std::vector<GroupOp> ops_;
  std::vector<std::uint64_t> free_;
  std::uint64_t spread_ps_ = 0;
};

}  // namespace runtime
