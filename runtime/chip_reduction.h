#pragma once
// Collective reductions done by the chips themselves (kernel fidelity): the
// pod's ReductionModel when every reducing chip has a fluid HBM. Each
// reduced message is a flow on its chip's HBM and vector units
// (hw::Chip::start_reduction), so an all-reduce and the chip's own
// HBM-bound kernels share the bandwidth max-min fairly and slow each other
// down, and the reduction's bytes count in the chip's hbm_bytes.
//
// A chip that is not simulated (a replica its group's representative stands
// for) has no HBM here: it reduces on `unsimulated`, the calendar model at
// the chip's rates, so its reductions do not see the contention its
// representative's do. Where that moves a collective's end on replicas,
// the replica check (runtime::run_pod) sees the spread and simulates every
// chip.
//
// The chip reduces packets as they land (ReductionConfig::streaming's
// premise, which the calendar model shares): when the receive is posted
// (expect), all but the last packet are one flow capped at the rate the
// data can land at (the link's), its cap lifted when the tail has landed
// (data that landed before the receive was posted is all there); when the
// tail has landed and that flow is done, the last packet is a second flow. So a reduction hides behind its
// transfer when the chip keeps up, and delays the collective by what
// contention on HBM and the vector units takes from it. HBM and vector
// rates are the chip's own (ChipConfig); of ReductionConfig only
// hbm_bytes_per_reduced_byte is used.
//
// A collective offloaded to the SparseCores (CollectiveSpec::sparsecore)
// reduces through sparsecore(): the same flows on the chip's HBM, but on no
// TensorCore vector unit and no faster than the SparseCores' own HBM
// bandwidth (hw::Chip::start_reduction); a replica reduces on
// `sparsecore_unsimulated`, the calendar at the SparseCores' rate.
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "hw/chip.h"
#include "interconnect/pod_config.h"
#include "interconnect/reduction.h"

namespace runtime {

class ChipReduction final : public interconnect::ReductionModel, private hw::HbmFluid::Listener {
 public:
  // chips[c]: chip c of `n`, read when it reduces (the vector may be filled
  // after construction); every chip that reduces must be there.
  // packet_bytes: the network's packet, the part reduced after the tail lands.
  // sparsecore_unsimulated, sparsecore_config: the replicas' calendar for
  // offloaded collectives and its rates (null: none is offloaded).
  ChipReduction(const std::vector<std::unique_ptr<hw::Chip>>& chips, int n, const interconnect::ReductionConfig& config,
                std::uint64_t packet_bytes, interconnect::ReductionModel& unsimulated,
                interconnect::ReductionModel* sparsecore_unsimulated = nullptr,
                const interconnect::ReductionConfig* sparsecore_config = nullptr);
  // The reductions of the collectives offloaded to the SparseCores.
  interconnect::ReductionModel& sparsecore() { return sparsecore_; }

  void expect(int chip, std::uint64_t bytes, double max_bytes_per_s, interconnect::ReductionListener& listener,
              std::uint64_t token) override;
  void reduce(int chip, std::uint64_t bytes, interconnect::Ps data_start, interconnect::Ps data_end,
              interconnect::ReductionListener& listener, std::uint64_t token) override;

  double vector_busy_s(int chip) const override;  // operand bytes / the chip's vector rate
  double hbm_bytes(int chip) const override;      // both units' reductions
  // How much later than the calendar model (interconnect/reduction.h: the
  // last packet's work at the chip's rates, once it is in) the simulated
  // chip's reductions ended, summed: what contention on its HBM and vector
  // units cost its collectives. Replicas reduce on the calendar, so this
  // bounds what their representative's contention is missing from them.
  interconnect::Ps contention_ps(int chip) const { return contention_ps_[chip]; }
  // The time during which any of the chip's reductions ran past its
  // calendar end: the union of those spans, where contention_ps adds them
  // up (six streams' tails late together count once). A chain of dependent
  // steps runs one after another, so its reductions' late spans lie apart
  // in time, inside this union.
  interconnect::Ps late_span_ps(int chip) const { return late_span_ps_[chip]; }
  // Whether any of the simulated chip's reductions shared HBM or the vector
  // units with its own kernels, stream ops or DMA: then its collectives and
  // its compute are coupled, each delaying the other by where they meet.
  bool coupled(int chip) const { return coupled_[chip] != 0; }
  // What the chip's reductions take alone, at the calendar's rate (the
  // slower of HBM and the vector units per operand byte), summed. Each byte
  // a reduction moves takes at most one byte's time from the chip's own
  // work, so this bounds how far the reductions can shift a coupled chip's
  // end, whichever of its ops they meet.
  interconnect::Ps alone_ps(int chip) const;

 private:
  // What the offloaded collectives reduce through: the same chips' flows,
  // on their SparseCores.
  class SparseCoreSide final : public interconnect::ReductionModel {
   public:
    explicit SparseCoreSide(ChipReduction& r) : r_(r) {}
    void expect(int chip, std::uint64_t bytes, double max_bytes_per_s, interconnect::ReductionListener& listener,
                std::uint64_t token) override {
      r_.expect_on(true, chip, bytes, max_bytes_per_s, listener, token);
    }
    void reduce(int chip, std::uint64_t bytes, interconnect::Ps data_start, interconnect::Ps data_end,
                interconnect::ReductionListener& listener, std::uint64_t token) override {
      r_.reduce_on(true, chip, bytes, data_start, data_end, listener, token);
    }
    double vector_busy_s(int) const override { return 0; }  // no TensorCore vector work
    double hbm_bytes(int chip) const override { return r_.hbm_bytes(chip); }

   private:
    ChipReduction& r_;
  };
  // The unit a reduction runs on: its replicas' calendar and the calendar's
  // rate (the slower of the unit's vector work and its HBM traffic).
  struct Unit {
    interconnect::ReductionModel* unsimulated = nullptr;
    double ps_per_byte = 0;
  };
  void expect_on(bool sparsecore, int chip, std::uint64_t bytes, double max_bytes_per_s,
                 interconnect::ReductionListener& listener, std::uint64_t token);
  void reduce_on(bool sparsecore, int chip, std::uint64_t bytes, interconnect::Ps data_start, interconnect::Ps data_end,
                 interconnect::ReductionListener& listener, std::uint64_t token);
  const Unit& unit(bool sparsecore) const;

  // One expected reduction: its streamed part runs from expect(); its
  // tail starts once both that part is done and the data has landed.
  struct Expected {
    interconnect::ReductionListener* listener = nullptr;
    std::uint64_t token = 0;
    int chip = 0;
    std::uint64_t tail_bytes = 0;
    // The chip's own flows on HBM when it was expected, and how many had
    // started (hw::HbmFluid::own_active, own_started).
    std::size_t own_active = 0;
    std::uint64_t own_started = 0;
    interconnect::Ps landed_at = 0;
    hw::HbmFluid::Handle streaming;  // the streamed part's flow
    bool streamed = false, landed = false;
    bool sparsecore = false;  // on the SparseCores (an offloaded collective's)
  };
  struct Key {
    const void* listener;
    std::uint64_t token;
    bool operator==(const Key& o) const { return listener == o.listener && token == o.token; }
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      return std::hash<const void*>()(k.listener) ^ (std::hash<std::uint64_t>()(k.token) * 0x9e3779b97f4a7c15ULL);
    }
  };
  // Flow tokens: slot * 2 + (0 streamed part, 1 tail).
  void flow_done(std::uint64_t flow) override;
  hw::Chip* simulated(int chip) const;  // null for a replica
  hw::HbmFluid::Handle start_part(std::uint64_t slot, std::uint64_t bytes, double cap_per_s, int part);
  void start_tail_if_ready(std::uint64_t slot);

  const std::vector<std::unique_ptr<hw::Chip>>& chips_;
  Unit tensorcore_, sparsecore_unit_;
  SparseCoreSide sparsecore_{*this};
  double hbm_per_byte_;
  std::uint64_t packet_bytes_;
  std::vector<interconnect::Ps> contention_ps_;  // per chip
  std::vector<interconnect::Ps> late_span_ps_;   // per chip
  // Per chip: the latest late spans, merged where they overlap, in time
  // order (at most kLateSpansKept; one dropped is counted, so a later span
  // that overlaps it is counted again: the union only grows looser).
  std::vector<std::vector<std::pair<interconnect::Ps, interconnect::Ps>>> late_spans_;
  static constexpr std::size_t kLateSpansKept = 16;
  void add_late_span(int chip, interconnect::Ps from, interconnect::Ps to);
  std::vector<char> coupled_;                      // per chip
  std::vector<double> operand_bytes_, hbm_bytes_;  // per chip: TensorCore operand bytes, both units' HBM bytes
  std::vector<double> sparsecore_operand_bytes_;   // per chip: what its SparseCores reduced
  std::vector<Expected> expected_;                 // by slot
  std::vector<std::uint64_t> free_;
  std::unordered_map<Key, std::uint64_t, KeyHash> slot_of_;
};

}  // namespace runtime
