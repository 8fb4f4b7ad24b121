#pragma once
// mxu.vcd: the PE array of one MXU as waveforms (SystemC sc_trace, opens in
// GTKWave). Hooked into an hw::Mxu with pe fidelity, it shows every cycle of
// every op at its simulated time.
//
// Signals (scope `mxu`; reals are FP32 values, shown exactly):
//   busy, op (ops started so far), cycle (cycle of the current op: 0 is the
//   first weight-load cycle),
//   feeder.valid / feeder.tile / feeder.vector (the vector injected),
//   loader.active / loader.tile / loader.bank (oldest load still shifting),
//   pe_r<R>_c<C>.{valid, a_in, bank, w, w0, w1, psum}: the activation the PE
//   received this cycle, which bank it selects, the weight it multiplied by
//   (w, one of w0/w1), and the partial sum it produced (p_in + a_in * w,
//   leaving row R-1 as a result). Bubbles read valid = 0, a_in = psum = 0.
// Values are sampled once per time step, so a change at op start + c *
// period is cycle c (docs/mxu.md "Observer").
#include <cstdint>
#include <string>
#include <systemc>
#include <vector>

#include "hw/mxu.h"
#include "hw/mxu_config.h"

namespace hw {

// Size limits: a VCD holds every signal change, about 30-50 bytes per
// PE-cycle, and GTKWave wants a few thousand signals at most.
constexpr std::uint32_t kMxuVcdMaxSide = 32;
constexpr std::uint64_t kMxuVcdMaxPeCycles = 2'000'000;  // rows * cols * traced cycles

// Throws sim::ConfigError ("command line: --vcd: ...", bad input) naming the limit
// when `config` is larger than kMxuVcdMaxSide or rows * cols * cycles
// exceeds kMxuVcdMaxPeCycles. `what` names the traced work in the message.
void check_mxu_vcd_size(const MxuConfig& config, std::uint64_t cycles, const std::string& what);

class MxuVcd final : public MxuCycleHook {
 public:
  // Creates `path` (which must end in ".vcd") and declares the signals.
  // SystemC adds traces only during elaboration: construct before
  // sc_start. Throws sim::ConfigError when the file cannot be written.
  MxuVcd(const std::string& path, const MxuConfig& config);
  ~MxuVcd() override;  // closes the file (call after sc_start returns)
  MxuVcd(const MxuVcd&) = delete;
  MxuVcd& operator=(const MxuVcd&) = delete;

  void on_cycle(const ArrayStateView& view) override;
  void on_idle() override;

  std::size_t signals() const { return signals_; }
  std::uint64_t cycles_traced() const { return cycles_traced_; }

 private:
  // One PE's traced variables. sc_trace keeps references to them: the
  // vector is sized once and never reallocates.
  struct Pe {
    bool valid = false, bank = false;
    float a_in = 0, w = 0, w0 = 0, w1 = 0, psum = 0;
  };

  MxuConfig config_;
  sc_core::sc_trace_file* file_ = nullptr;
  std::vector<Pe> pes_;
  bool busy_ = false;
  std::uint64_t op_ = 0, cycle_ = 0;
  bool feeder_valid_ = false;
  std::uint64_t feeder_tile_ = 0, feeder_vector_ = 0;
  bool loader_active_ = false, loader_bank_ = false;
  std::uint64_t loader_tile_ = 0;
  std::size_t signals_ = 0;
  std::uint64_t cycles_traced_ = 0;
};

}  // namespace hw
