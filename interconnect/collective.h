#pragma once
// Runs a CollectivePlan on a Network: every chip works through its own
// schedule, exchanging real messages; each reduction is handed to the
// ReductionModel, and the step goes on when it calls back. A chip joins when its program
// reaches the collective (join), from any SystemC process or callback, and
// hears back through on_done when its part is complete. Plain C++ driven by
// network callbacks: no SystemC process per chip.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "interconnect/algorithms.h"
#include "interconnect/network.h"
#include "interconnect/reduction.h"

namespace interconnect {

class Collective : public NetworkClient, public ReductionListener {
 public:
  // Collective ids fill the top 24 bits of a message tag (collective.cpp);
  // the id kMaxCollectives is point-to-point traffic's (runtime/point_to_point.h).
  static constexpr int kMaxCollectives = (1 << 24) - 1;
  // id distinguishes collectives in flight at once (message tags); < 2^24 (kMaxCollectives).
  // functional needs a plan made with spec.functional.
  Collective(Network& network, ReductionModel& reduction, CollectivePlan plan, bool functional, int id = 0);
  // The same with a plan shared by collectives of equal specs (a training
  // step's thousands of them), not copied.
  Collective(Network& network, ReductionModel& reduction, std::shared_ptr<const CollectivePlan> plan, bool functional,
             int id = 0);

  // Chip `chip` starts its part now. on_done runs (inside the network's
  // process, or before join returns if the chip has nothing to do) when its
  // part is complete.
  void join(int chip, std::function<void()> on_done = {});

  bool joined(int chip) const { return slot_.at(chip) != kNotJoined; }
  bool complete() const;  // every chip finished
  Ps finish_time(int chip) const { return joined(chip) ? runs_[slot_[chip]].finish : 0; }
  Ps end_time() const;  // the last chip's finish
  // The chips that finished and when, by chip.
  std::vector<std::pair<int, Ps>> finish_times() const;

  // Functional runs: values in, values out. Input sizes: the shard for
  // all_gather, the full buffer otherwise; outputs: the shard for
  // reduce_scatter, the full buffer otherwise (zeros for a permute chip that
  // has no source, as jax.lax.ppermute).
  std::uint64_t input_elements() const;
  std::uint64_t output_elements() const;
  void set_input(int chip, const std::vector<double>& values);  // before join
  std::vector<double> output(int chip) const;

  // One line per chip that never joined or has unfinished operations, at
  // most `max_lines` of them; `total` (when given) is increased by how many
  // there are in all.
  std::vector<std::string> pending(std::size_t max_lines = SIZE_MAX, std::size_t* total = nullptr) const;
  std::string name() const;  // "all_reduce#0"
  static std::string name_of(CollectiveOp op, int id);
  const CollectivePlan& plan() const { return *plan_; }

  void on_sent(std::uint64_t cookie) override;
  void on_received(std::uint64_t cookie, Arrival& arrival) override;
  void reduced(std::uint64_t cookie) override;

 private:
  // Run state lives in flat arrays (one slot per chip and stream, and per
  // chip, stream and pass of the widest phase) so that a step touches few
  // cache lines: 4096 chips x 6 streams do not fit in cache. A chip's slots
  // are made when it joins: a pipeline stage's collective, or one on a
  // symmetric pod (translations.h), is joined by a few of the pod's chips,
  // so a chip not joined costs its index only (a GPT-3 step on 1024 chips
  // makes 74,000 collectives that 16 chips join each: a run per pod chip
  // made a quarter of that simulation's time malloc and free).
  struct PassRun {
    const Pass* pass = nullptr;
    int chip = 0, stream = 0, index = 0;  // whose pass (index within the stream's phase) this slot runs
    int step = -1;
    int steps = 0;  // pass->steps(), read once per phase
    int outstanding = 0;
    Ps posted = 0;                // when the current step's receives were posted
    std::uint64_t done_mask = 0;  // operations done, sends first (steps of <= 64 operations)
    std::vector<char> done;       // the same for wider steps
    Step current;
  };
  struct StreamRun {
    int phase = 0;
    int passes_left = 0;
    int first_pass = 0;  // index of its passes in pass_runs_
  };
  struct ChipRun {
    int chip = 0;
    bool finished = false;
    int streams_left = 0;
    int first_stream = 0;  // index of its streams in stream_runs_
    Ps finish = 0;
    std::function<void()> on_done;
  };
  struct Op {  // decoded cookie
    int run;   // index in pass_runs_
    int kind;
    std::uint32_t index;
  };
  enum OpKind { kSend = 0, kRecv = 1 };

  static std::uint64_t cookie(int run, int kind, std::uint32_t index);
  static Op decode(std::uint64_t cookie);
  std::uint64_t tag(int stream, int phase, int pass, std::uint32_t local) const;

  void make_runs(int chip);
  void start_phase(int chip, int stream);
  void advance(int run);  // pass_runs_[run]: next step(s) until one waits
  void pass_finished(int chip, int stream);
  void op_done(const Op& op);
  static void mark_done(PassRun& run, std::size_t slot);
  void finish_chip(int chip);
  void receive_payload(const Op& op, const Transfer& t, bool reduce, std::vector<double>& payload);
  ChipRun& run_of(int chip) { return runs_[slot_[chip]]; }
  StreamRun& stream_run(int chip, int s) { return stream_runs_[run_of(chip).first_stream + s]; }
  bool is_done(const PassRun& run, std::size_t slot) const;

  Network& net_;
  ReductionModel& reduction_;
  std::shared_ptr<const CollectivePlan> plan_;
  bool functional_;
  int id_;
  static constexpr std::uint32_t kNotJoined = ~std::uint32_t{0};
  std::vector<std::uint32_t> slot_;  // by chip: its index in runs_, or kNotJoined
  std::vector<ChipRun> runs_;        // the chips that joined, in join order
  std::vector<StreamRun> stream_runs_;
  std::vector<PassRun> pass_runs_;
  std::vector<std::vector<double>> work_;  // functional: each chip's buffer
};

}  // namespace interconnect
