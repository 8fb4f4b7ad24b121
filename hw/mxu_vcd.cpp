#include "hw/mxu_vcd.h"

#include <sysc/tracing/sc_tracing_ids.h>

#include <fstream>

#include "sim/error.h"
#include "sim/text.h"

namespace hw {

namespace {

const char kVcdSuffix[] = ".vcd";

using sim::ends_with;

}  // namespace

void check_mxu_vcd_size(const MxuConfig& config, std::uint64_t cycles, const std::string& what) {
  if (config.rows > kMxuVcdMaxSide || config.cols > kMxuVcdMaxSide) {
    throw sim::ConfigError({}, "mxu.vcd",
                           "VCD is for small arrays: the MXU is " + std::to_string(config.rows) + "x" +
                               std::to_string(config.cols) + ", the limit is " + std::to_string(kMxuVcdMaxSide) + "x" +
                               std::to_string(kMxuVcdMaxSide) + " (a small chip such as configs/chips/teach-8x8.yaml)");
  }
  const double pe_cycles = double(config.rows) * config.cols * double(cycles);
  if (pe_cycles > double(kMxuVcdMaxPeCycles)) {
    throw sim::ConfigError({}, "mxu.vcd",
                           "VCD is for small ops: " + what + " would trace " + std::to_string(cycles) + " cycles x " +
                               std::to_string(config.rows * config.cols) + " PEs = " +
                               std::to_string(static_cast<std::uint64_t>(pe_cycles)) + " PE-cycles, the limit is " +
                               std::to_string(kMxuVcdMaxPeCycles) + " (about 100 MB of VCD); use smaller m, k, n");
  }
}

MxuVcd::MxuVcd(const std::string& path, const MxuConfig& config) : config_(config) {
  validate(config_);
  if (!ends_with(path, kVcdSuffix) || path.size() == sizeof kVcdSuffix - 1) {
    throw sim::ConfigError({}, "mxu.vcd", "the VCD file name must end in .vcd, got '" + path + "'");
  }
  // SystemC opens the file only at the first time step and then fails with
  // an sc_report; find out now, with a message that names the path.
  if (!std::ofstream(path)) throw sim::ConfigError({}, "mxu.vcd", "cannot write '" + path + "'");

  // sc_create_vcd_trace_file appends the extension itself.
  file_ = sc_core::sc_create_vcd_trace_file(path.substr(0, path.size() - (sizeof kVcdSuffix - 1)).c_str());
  // The kernel's resolution (sim/kernel.h). SystemC announces the unit on
  // stdout, which would land in the middle of tpusim's own output.
  sc_core::sc_report_handler::set_actions(sc_core::SC_ID_TRACING_TIMESCALE_UNIT_, sc_core::SC_DO_NOTHING);
  file_->set_time_unit(1, sc_core::SC_PS);
  sc_core::sc_trace_delta_cycles(file_, false);

  // Dots in names become VCD scopes (GTKWave shows them as a tree).
  auto trace = [this](const auto& variable, const std::string& name) {
    sc_core::sc_trace(file_, variable, "mxu." + name);
    ++signals_;
  };
  trace(busy_, "busy");
  trace(op_, "op");
  trace(cycle_, "cycle");
  trace(feeder_valid_, "feeder.valid");
  trace(feeder_tile_, "feeder.tile");
  trace(feeder_vector_, "feeder.vector");
  trace(loader_active_, "loader.active");
  trace(loader_tile_, "loader.tile");
  trace(loader_bank_, "loader.bank");
  pes_.resize(std::size_t(config_.rows) * config_.cols);
  for (std::uint32_t r = 0; r < config_.rows; ++r) {
    for (std::uint32_t c = 0; c < config_.cols; ++c) {
      const Pe& pe = pes_[std::size_t(r) * config_.cols + c];
      const std::string p = "pe_r" + std::to_string(r) + "_c" + std::to_string(c) + ".";
      trace(pe.valid, p + "valid");
      trace(pe.a_in, p + "a_in");
      trace(pe.bank, p + "bank");
      trace(pe.w, p + "w");
      trace(pe.w0, p + "w0");
      trace(pe.w1, p + "w1");
      trace(pe.psum, p + "psum");
    }
  }
}

MxuVcd::~MxuVcd() { sc_core::sc_close_vcd_trace_file(file_); }

void MxuVcd::on_cycle(const ArrayStateView& v) {
  if (v.rows != config_.rows || v.cols != config_.cols) {
    throw std::logic_error("MxuVcd: hooked to an MXU of another size");
  }
  if (v.cycle == 0) ++op_;
  busy_ = true;
  cycle_ = v.cycle;
  feeder_valid_ = v.injected_tile >= 0;
  if (feeder_valid_) {
    feeder_tile_ = static_cast<std::uint64_t>(v.injected_tile);
    feeder_vector_ = v.injected_vector;
  }
  loader_active_ = v.load_count > 0;
  if (loader_active_) {
    loader_tile_ = v.loads[0].tile;
    loader_bank_ = v.loads[0].bank != 0;
  }
  for (std::uint32_t r = 0; r < v.rows; ++r) {
    for (std::uint32_t c = 0; c < v.cols; ++c) {
      Pe& pe = pes_[std::size_t(r) * v.cols + c];
      pe.valid = v.valid(r, c);
      pe.bank = v.bank(r, c) != 0;
      pe.w0 = v.weight(0, r, c);
      pe.w1 = v.weight(1, r, c);
      pe.w = v.active_weight(r, c);
      // The engine writes bubbles as zeros; say so explicitly all the same.
      pe.a_in = pe.valid ? v.activation(r, c) : 0.0f;
      pe.psum = pe.valid ? v.psum(r, c) : 0.0f;
    }
  }
  ++cycles_traced_;
}

void MxuVcd::on_idle() {
  // Weights stay in their registers; everything in flight has left.
  busy_ = false;
  feeder_valid_ = false;
  loader_active_ = false;
  for (Pe& pe : pes_) {
    pe.valid = false;
    pe.a_in = 0;
    pe.psum = 0;
  }
}

}  // namespace hw
