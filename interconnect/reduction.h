#pragma once
// What a reduction costs the chip that does it. Collectives hand every
// arrived message they reduce into their buffer to the ReductionModel and go
// on when it calls them back: the chip model (runtime's ChipReduction, a
// flow on the chip's HBM and vector units) or the default below answers
// when the sum is complete and keeps its own account of vector-unit time and
// HBM traffic. Asynchronous because a shared resource's finish time is not
// known when the work starts.
#include <cstdint>
#include <vector>

#include "interconnect/network.h"
#include "interconnect/pod_config.h"
#include "interconnect/time.h"

namespace interconnect {

class ReductionListener {
 public:
  virtual ~ReductionListener() = default;
  // The reduction asked for with this token is complete (from any process,
  // never from inside the reduce() call).
  virtual void reduced(std::uint64_t token) = 0;
};

// The reductions a model has started and not yet answered: each holds a
// slot (reused once answered) naming whom to call back.
class PendingReductions {
 public:
  std::uint64_t hold(ReductionListener& listener, std::uint64_t token) {
    std::uint64_t slot;
    if (free_.empty()) {
      slot = waiting_.size();
      waiting_.emplace_back();
    } else {
      slot = free_.back();
      free_.pop_back();
    }
    waiting_[slot] = {&listener, token};
    return slot;
  }
  // Frees the slot, then calls its listener back.
  void answer(std::uint64_t slot) {
    const Waiting w = waiting_[slot];
    free_.push_back(slot);
    w.listener->reduced(w.token);
  }

 private:
  struct Waiting {
    ReductionListener* listener = nullptr;
    std::uint64_t token = 0;
  };
  std::vector<Waiting> waiting_;  // by slot
  std::vector<std::uint64_t> free_;
};

class ReductionModel {
 public:
  virtual ~ReductionModel() = default;
  // Chip `chip` has posted a receive whose `bytes` it will reduce, under
  // this listener and token; they will land at no more than
  // `max_bytes_per_s`. A model that reduces packets as they land (the
  // chip's) starts its work here; reduce() with the same listener and token
  // follows when the tail has landed. The default waits for reduce().
  virtual void expect(int /*chip*/, std::uint64_t /*bytes*/, double /*max_bytes_per_s*/,
                      ReductionListener& /*listener*/, std::uint64_t /*token*/) {}
  // Chip `chip` adds `bytes` of arrived data into its own buffer. The data
  // is available from data_start (its head landed, or the receive was posted
  // if later) to data_end (the tail landed; data_end is now). Calls
  // listener.reduced(token) when the sum is complete (at data_end or later).
  virtual void reduce(int chip, std::uint64_t bytes, Ps data_start, Ps data_end, ReductionListener& listener,
                      std::uint64_t token) = 0;
  // What chip `chip` has reduced so far: vector-unit seconds, HBM bytes.
  virtual double vector_busy_s(int chip) const = 0;
  virtual double hbm_bytes(int chip) const = 0;
};

// Picoseconds per reduced byte of a reducer alone: the slower of the vector
// unit and the HBM traffic a reduction needs (ReductionConfig).
double reducer_ps_per_byte(const ReductionConfig& config);

// How far a chip's collective may end from its orbit chip's under
// translations (Invariance): the uneven bytes at the slowest server they
// may cross and the reducer's rate, and a latency per uneven hop. On
// several slices the slowest server is the slowest DCN one (a host's PCIe,
// its NICs, or its share of an oversubscribed fabric core) and the latency
// a DCN message's (Translations::hops counts a DCN route as one hop).
double uneven_ps(const Invariance& uneven, const Topology& topology, const LinkConfig& link,
                 const ReductionConfig& reduction);

// The default model: a per-chip reducer whose speed is the slower of the
// vector unit and the HBM traffic a reduction needs (ReductionConfig). Work
// is booked on a per-chip calendar, so reductions that arrive together share
// the reducer; with streaming, a reduction keeps pace with its data and ends
// one packet's worth of work after the data does. It knows nothing else the
// chip does: interconnect-only runs (run_collective) and pods at tile
// fidelity use it. The callback is a timer on the network.
class VectorUnitReduction : public ReductionModel, private NetworkClient {
 public:
  VectorUnitReduction(Network& network, const ReductionConfig& config);

  void reduce(int chip, std::uint64_t bytes, Ps data_start, Ps data_end, ReductionListener& listener,
              std::uint64_t token) override;

  double vector_busy_s(int chip) const override { return chips_[chip].vector_busy_s; }
  double hbm_bytes(int chip) const override { return chips_[chip].hbm_bytes; }
  std::uint64_t reductions(int chip) const { return chips_[chip].reductions; }

 private:
  struct Reducer {  // one chip's: its calendar and what it did
    Ps booked_until = 0;
    double vector_busy_s = 0;
    double hbm_bytes = 0;
    std::uint64_t reductions = 0;
  };
  void on_timer(std::uint64_t slot) override;

  Network& net_;
  ReductionConfig config_;
  std::uint64_t packet_bytes_;
  double ps_per_byte_;
  std::vector<Reducer> chips_;
  PendingReductions pending_;  // their completion timers queued
};

}  // namespace interconnect
