// A run that stops with unfinished work is a deadlock: sim::SimFailure
// (exit 3) naming the chips and what they wait for, never a hang.
#include <catch2/catch.hpp>

#include <systemc>

#include "interconnect/collective.h"
#include "interconnect/deadlock.h"
#include "interconnect/ici_network.h"
#include "interconnect/packet_network.h"
#include "sim/error.h"
#include "sim/kernel.h"

namespace test_collective_deadlock {

using namespace interconnect;

namespace {
std::string failure_of(const Network& net, const std::vector<const Collective*>& colls) {
  try {
    require_all_done(net, colls);
  } catch (const sim::SimFailure& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("collective deadlock: a chip that never joins is named, and so are its waiting peers",
          "[collective][deadlock]") {
  const Topology topo(TopologyKind::ring, {6}, {true});
  CollectiveSpec spec;
  spec.op = CollectiveOp::all_reduce;
  spec.algorithm = Algorithm::ring;
  spec.bytes = 6 * 1024;
  sim::reset_kernel();
  IciNetwork net("ici", topo, LinkConfig{});
  VectorUnitReduction red(net, ReductionConfig{});
  Collective coll(net, red, plan_collective(topo, Mesh(topo, {}), LinkConfig{}, spec), false);
  for (int chip = 0; chip < 6; ++chip) {
    if (chip != 3) coll.join(chip);
  }
  sc_core::sc_start();  // returns: the kernel runs out of events
  CHECK_FALSE(coll.complete());
  const std::string msg = failure_of(net, {&coll});
  INFO(msg);
  CHECK(msg.find("deadlock") != std::string::npos);
  CHECK(msg.find("chip 3 (3) never joined") != std::string::npos);
  // Chip 4 waits for chip 3 in the first step of the reduce-scatter.
  CHECK(msg.find("chip 4 (4) in ring reduce-scatter over the ring of 6 chips (+), step 1 of 5: receive from chip 3 (3) "
                 "pending") != std::string::npos);
  // Chip 2's message to chip 3 arrived but nobody received it.
  CHECK(msg.find("message from chip 2 (2) to chip 3 (3)") != std::string::npos);
}

TEST_CASE("network deadlock: a send without a receive and a receive without a send", "[network][deadlock]") {
  const Topology topo(TopologyKind::torus2d, {3, 3}, {true, true});
  const bool packet = GENERATE(false, true);
  sim::reset_kernel();
  std::unique_ptr<Network> net;
  if (packet) {
    net = std::make_unique<PacketNetwork>("ici", topo, LinkConfig{});
  } else {
    net = std::make_unique<IciNetwork>("ici", topo, LinkConfig{});
  }
  struct Quiet : NetworkClient {
  } client;
  Message m;
  m.src = 1;
  m.dst = 5;
  m.tag = 7;
  m.bytes = 10000;
  net->send(std::move(m), &client, 0);
  net->receive(8, 0, 9, &client, 0);
  sc_core::sc_start();
  const std::string msg = failure_of(*net, {});
  INFO(msg);
  CHECK(msg.find("message from chip 1 (1,0) to chip 5 (2,1) (tag 0x7, 10000 bytes) was never received") !=
        std::string::npos);
  CHECK(msg.find("chip 8 (2,2) waits for a message from chip 0 (0,0) (tag 0x9) that was never sent") !=
        std::string::npos);
}

TEST_CASE("collective deadlock: a finished run passes the check", "[collective][deadlock]") {
  const Topology topo(TopologyKind::ring, {4}, {true});
  CollectiveSpec spec;
  spec.bytes = 4 * 1024;
  sim::reset_kernel();
  IciNetwork net("ici", topo, LinkConfig{});
  VectorUnitReduction red(net, ReductionConfig{});
  Collective coll(net, red, plan_collective(topo, Mesh(topo, {}), LinkConfig{}, spec), false);
  for (int chip = 0; chip < 4; ++chip) coll.join(chip);
  sc_core::sc_start();
  CHECK(coll.complete());
  CHECK_NOTHROW(require_all_done(net, {&coll}));
}

}  // namespace test_collective_deadlock
