#include "app/explain/mxu_vcd_op.h"

#include <filesystem>
#include <memory>
#include <optional>

#include "hw/mxu.h"
#include "hw/mxu_timing.h"
#include "hw/mxu_vcd.h"
#include "sim/error.h"
#include "sim/kernel.h"
#include "sim/output.h"

namespace explain {

namespace {

// Issues the one op from a thread, as the TensorCore sequencer would.
struct OneOpDriver : sc_core::sc_module {
  SC_HAS_PROCESS(OneOpDriver);
  OneOpDriver(sc_core::sc_module_name name, hw::Mxu& mxu, const hw::MxuShape& shape, const hw::bf16* a,
              const hw::bf16* b, float* y)
      : sc_core::sc_module(name), mxu_(mxu), shape_(shape), a_(a), b_(b), y_(y) {
    SC_THREAD(drive);
  }
  void drive() {
    mxu_.execute(shape_, a_, b_, y_);
    // SystemC writes a time step's values to the VCD when the next step
    // begins: one more period puts the idle array at the op's end on file.
    wait(mxu_.period());
    done = true;
  }
  hw::Mxu& mxu_;
  hw::MxuShape shape_;
  const hw::bf16 *a_, *b_;
  float* y_;
  bool done = false;
};

}  // namespace

MxuVcdOpResult run_mxu_op_to_vcd(const std::string& path, const hw::MxuConfig& config, const hw::MxuShape& shape,
                                 const std::vector<hw::bf16>& a, const std::vector<hw::bf16>& b,
                                 sc_core::sc_time period) {
  validate(config);
  validate(shape);
  if (a.size() != shape.m * shape.k || b.size() != shape.k * shape.n) {
    throw std::invalid_argument("run_mxu_op_to_vcd: operand sizes do not match the shape");
  }
  MxuVcdOpResult result;
  result.y.assign(shape.m * shape.n, 0.0f);
  try {
    // The closed form equals the PE engine's count (docs/mxu.md), so the
    // size check needs no trial run.
    hw::check_mxu_vcd_size(config, hw::mxu_tile_cycles(config, shape), "this op");
  } catch (const sim::ConfigError& e) {
    throw e.at({"command line"}, "--vcd");
  }
  // Written beside `path` under a temporary name and renamed into place
  // when the op has run (sim::OutputSet: the output-path policy, a fresh
  // temporary file, never a write through a FIFO or a link).
  const std::filesystem::path where(path);
  if (where.extension() != ".vcd" || where.stem().empty())
    throw sim::ConfigError({"command line"}, "--vcd", "the VCD file name must end in .vcd, got '" + path + "'");
  std::optional<sim::OutputSet> out;
  std::string staged;
  try {
    out.emplace(where.has_parent_path() ? where.parent_path().string() : ".",
                std::vector<std::string>{where.filename().string()});
    staged = out->stage(where.filename().string(), ".vcd");
  } catch (const std::runtime_error& e) {
    throw sim::ConfigError({"command line"}, "--vcd", std::string("cannot write '") + path + "': " + e.what());
  }
  sim::reset_kernel();
  {
    auto mxu = std::make_unique<hw::Mxu>("mxu", config, period, hw::Fidelity::pe);
    std::unique_ptr<hw::MxuVcd> vcd;
    try {
      vcd = std::make_unique<hw::MxuVcd>(staged, config);
    } catch (const sim::ConfigError& e) {
      throw e.at({"command line"}, "--vcd");
    }
    mxu->set_cycle_hook(vcd.get());
    OneOpDriver driver("driver", *mxu, shape, a.data(), b.data(), result.y.data());
    sc_core::sc_start();
    if (!driver.done) throw std::logic_error("run_mxu_op_to_vcd: the op did not finish");
    result.cycles = mxu->stats().busy_cycles;
    result.signals = vcd->signals();
    vcd.reset();  // closes the file before the modules go
  }
  out->commit();
  return result;
}

}  // namespace explain
