#include "hw/chip.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "hw/host_link.h"
#include "hw/sparsecore.h"
#include "sim/error.h"
#include "sim/sim_time.h"
#include "sim/units.h"

namespace hw {

Chip::Chip(sc_core::sc_module_name name, const ChipConfig& config, Fidelity fidelity, double kernel_stretch,
           std::uint32_t index)
    : sc_core::sc_module(name),
      alarm_(*this, sim::AlarmRank::chip(index, sim::AlarmRank::Engine::timer)),
      config_(config),
      fidelity_(fidelity),
      period_(sc_core::sc_time::from_value(sim::checked_ps(std::round(sim::kPsPerSecond / config.sustained_clock()),
                                                           [] { return std::string("a clock period"); }))),
      launch_ps_(static_cast<std::uint64_t>(std::llround(config.kernel_launch * sim::kPsPerSecond))),
      kernel_stretch_(kernel_stretch) {
  if (fidelity_ == Fidelity::kernel) {
    hbm_fluid_ = std::make_unique<HbmFluid>("hbm", config_.hbm, vector_bytes_per_s(),
                                            config_.sparsecore.hbm_bandwidth * config_.sparsecore.count, index);
    // and the host link's two directions, and the SparseCores (hw/sparsecore.h)
    fluid_dmas_.resize(config_.dma_engines + kHostDmaEngines + config_.sparsecore.count);
    latency_ps_ = sim::checked_ps(std::round(config_.hbm.latency_s * sim::kPsPerSecond),
                                  [] { return std::string("the HBM access latency"); });
  } else {
    hbm_ = std::make_unique<Hbm>("hbm", config_.hbm);
    for (std::uint32_t i = 0; i < config_.dma_engines; ++i) {
      dmas_.push_back(std::make_unique<DmaEngine>(("dma" + std::to_string(i)).c_str()));
      dmas_.back()->socket.bind(hbm_->socket);
    }
  }
  for (std::uint32_t i = 0; i < config_.mxus(); ++i)
    mxus_.push_back(std::make_unique<Mxu>(("mxu" + std::to_string(i)).c_str(), config_.mxu, period_, fidelity));
  for (std::uint32_t c = 0; c < config_.tensorcores; ++c)
    vpus_.push_back(std::make_unique<VectorUnit>(("vpu" + std::to_string(c)).c_str(),
                                                 VectorUnitConfig{config_.vector_flops_per_cycle}, period_));
  accumulations_.resize(mxus_.size());
  SC_METHOD(on_timer);
  sensitive << timer_;
  dont_initialize();
}

namespace {

// A functional matmul's operands are sub-blocks of row-major tensors:
// packed as VMEM would hold them, with room for the product.
struct PackedMatmul {
  std::vector<bf16> a, b;
  std::vector<float> y;
};

PackedMatmul pack(const MatmulOp& op) {
  PackedMatmul p{std::vector<bf16>(op.m * op.k), std::vector<bf16>(op.k * op.n), std::vector<float>(op.m * op.n)};
  for (std::uint64_t i = 0; i < op.m; ++i)
    std::copy(op.a + i * op.lda, op.a + i * op.lda + op.k, p.a.begin() + i * op.k);
  for (std::uint64_t i = 0; i < op.k; ++i)
    std::copy(op.b + i * op.ldb, op.b + i * op.ldb + op.n, p.b.begin() + i * op.n);
  return p;
}

// The FP32 accumulators in VMEM add the op's product (MXU arithmetic rule).
void accumulate(const MatmulOp& op, const std::vector<float>& y) {
  for (std::uint64_t i = 0; i < op.m; ++i)
    for (std::uint64_t j = 0; j < op.n; ++j) {
      float& acc = op.y[i * op.ldy + j];
      acc = mxu_add(acc, y[i * op.n + j]);
    }
}

}  // namespace

std::uint64_t Chip::begin_matmul(std::uint32_t index, const MatmulOp& op) {
  // The product is added into the VMEM accumulators at completion, so that
  // ops sharing accumulators add in the order they complete (FP32 addition
  // does not associate).
  Mxu& mxu = *mxus_.at(index);
  const MxuShape shape{op.m, op.k, op.n};
  if (!op.y) return mxu.begin(shape);
  PackedMatmul p = pack(op);
  const std::uint64_t cycles = mxu.begin(shape, p.a.data(), p.b.data(), p.y.data());
  accumulations_[index] = {&op, std::move(p.y)};
  return cycles;
}

void Chip::after_cycles(std::uint64_t cycles, Completion done, std::uint32_t mxu) {
  // Mxu::begin has checked that cycles * period fits; vector ops are far
  // below that.
  after_ps(cycles * static_cast<std::uint64_t>(period_.value()), done, mxu);
}

void Chip::after_ps(std::uint64_t span, Completion done, std::uint32_t mxu) {
  const std::uint64_t now = sc_core::sc_time_stamp().value();
  if (timed_.empty() || now + span < timed_.top().due) wake_timer(now, span);
  timed_.push(Timed{now + span, timed_seq_++, done, mxu});
}

void Chip::wake_timer(std::uint64_t now, std::uint64_t span) {
  // As an sc_event's notify: now (a delta cycle) replaces a pending timed
  // wake, and a timed one does not replace a pending delta.
  if (span == 0) {
    alarm_.cancel();
    timer_.notify(sc_core::SC_ZERO_TIME);
    timer_delta_ = true;
  } else if (!timer_delta_) {
    alarm_.notify(now + span);
  }
}

void Chip::on_timer() {
  const std::uint64_t now = sc_core::sc_time_stamp().value();
  timer_delta_ = false;
  while (!timed_.empty() && timed_.top().due <= now) {
    // Copy out before popping: `done` may start new ops, which push here.
    const Timed t = timed_.top();
    timed_.pop();
    if (t.mxu != kNoMxu) {
      Accumulation& acc = accumulations_[t.mxu];
      if (acc.op) accumulate(*acc.op, acc.y);
      acc.op = nullptr;
    }
    t.done();
  }
  if (!timed_.empty()) wake_timer(now, sim::ps_until(timed_.top().due, now));
}

void Chip::run_in_thread(Mxu& mxu, const MatmulOp& op, Completion done) {
  sc_core::sc_spawn_options opts;
  opts.set_stack_size(64 * 1024);
  sc_core::sc_spawn(
      [&mxu, &op, done] {
        try {
          const MxuShape shape{op.m, op.k, op.n};
          if (!op.y) {
            mxu.execute(shape);
          } else {
            PackedMatmul p = pack(op);
            mxu.execute(shape, p.a.data(), p.b.data(), p.y.data());
            accumulate(op, p.y);
          }
        } catch (...) {
          // Exceptions must not unwind into the kernel: the listener keeps
          // it and stops the simulation.
          done.fail(std::current_exception());
          return;
        }
        done();
      },
      sc_core::sc_gen_unique_name("cycle_by_cycle_op"), &opts);
}

void Chip::start(const Op& op, Completion done) {
  if (std::holds_alternative<KernelOp>(op.payload) || (hbm_fluid_ && std::holds_alternative<DmaOp>(op.payload))) {
    start_fluid(op, done);
    return;
  }
  switch (op.engine.kind) {
    case EngineKind::mxu: {
      const auto& m = std::get<MatmulOp>(op.payload);
      Mxu& mxu = *mxus_.at(op.engine.index);
      if (mxu.needs_thread()) {
        run_in_thread(mxu, m, done);
        return;
      }
      after_cycles(begin_matmul(op.engine.index, m), done, op.engine.index);
      return;
    }
    case EngineKind::vector: {
      const auto& v = std::get<VectorOp>(op.payload);
      const std::uint64_t cycles = vpus_.at(op.engine.index)->begin(v.elements, v.flops_per_element);
      if (cycles == 0) {
        done();  // no time: done in the delta cycle it started in
        return;
      }
      after_cycles(cycles, done);
      return;
    }
    case EngineKind::dma: {
      const auto& d = std::get<DmaOp>(op.payload);
      dmas_.at(op.engine.index)->start(d.hbm_addr, d.bytes, d.write, done);
      return;
    }
    case EngineKind::scalar: {
      const std::uint64_t ps = launch_ps_ + std::get<LaunchOp>(op.payload).hold_ps;  // the only op of a scalar unit
      if (op.engine.index >= config_.tensorcores) throw std::logic_error("op '" + op.name + "': no such TensorCore");
      if (ps == 0) {
        done();  // no time: done in the delta cycle it started in
        return;
      }
      after_ps(ps, done);
      return;
    }
    case EngineKind::ici: break;
  }
  throw std::logic_error("op '" + op.name + "' needs the pod's network; run it through runtime::run_pod");
}

const Hbm& Chip::hbm() const {
  if (!hbm_) throw std::logic_error("chip: no per-channel HBM at kernel fidelity");
  return *hbm_;
}

const HbmFluid& Chip::hbm_fluid() const {
  if (!hbm_fluid_) throw std::logic_error("chip: no fluid HBM at tile or pe fidelity");
  return *hbm_fluid_;
}

std::uint64_t Chip::hbm_bytes_read() const { return hbm_ ? hbm_->bytes_read() : fluid_read_; }
std::uint64_t Chip::hbm_bytes_written() const { return hbm_ ? hbm_->bytes_written() : fluid_written_; }

double Chip::vector_bytes_per_s() const {
  // One (8,128) f32 vreg (4096 B) per cycle per TensorCore
  // (docs/reference/tpu-specs.md#common.vpu_shape; v5p's vmem_load_store:
  // one store per cycle), as collective reductions use them.
  return 4096.0 * config_.tensorcores * config_.sustained_clock();
}

HbmFluid::Handle Chip::start_reduction(std::uint64_t bytes, double hbm_per_byte, double cap_per_s,
                                       HbmFluid::Listener& listener, std::uint64_t token, bool sparsecore) {
  if (!hbm_fluid_)
    throw std::logic_error(std::string(name()) + ": a reduction flow needs the fluid HBM of kernel fidelity");
  if (!(hbm_per_byte >= 1)) throw std::invalid_argument("a reduction writes its sum: >= 1 HBM byte per byte");
  if (sparsecore && config_.sparsecore.count == 0)
    throw std::logic_error(std::string(name()) + ": a reduction on the SparseCores of a chip without any");
  const auto total = static_cast<std::uint64_t>(std::llround(double(bytes) * hbm_per_byte));
  fluid_written_ += bytes;
  fluid_read_ += total - bytes;
  ++reductions_;
  if (!sparsecore) return hbm_fluid_->start({double(bytes), hbm_per_byte, 1.0, cap_per_s, true}, &listener, token);
  sparsecore_reduced_ += double(total);
  return hbm_fluid_->start({double(bytes), hbm_per_byte, 0.0, cap_per_s, true, hbm_per_byte}, &listener, token);
}

void Chip::start_fluid(const Op& op, Completion done) {
  if (!hbm_fluid_)
    throw std::logic_error("op '" + op.name + "' is a kernel-fidelity op; this chip runs at " +
                           std::string(to_string(fidelity_)) + " fidelity");
  if (const auto* d = std::get_if<DmaOp>(&op.payload)) {
    if (op.engine.index >= fluid_dmas_.size()) throw std::logic_error("op '" + op.name + "': no such DMA engine");
    if (d->bytes > config_.hbm.capacity_bytes || d->hbm_addr > config_.hbm.capacity_bytes - d->bytes)
      throw sim::SimFailure(std::string(name()) + ".dma" + std::to_string(op.engine.index) + ": HBM rejected " +
                            (d->write ? "write" : "read") + " of " + std::to_string(d->bytes) + " bytes at address " +
                            std::to_string(d->hbm_addr));
    (d->write ? fluid_written_ : fluid_read_) += d->bytes;
  } else {
    const auto& k = std::get<KernelOp>(op.payload);
    const std::uint32_t first = op.engine.index;
    if (op.engine.kind == EngineKind::mxu ? first % config_.mxus_per_core != 0 || first >= mxus_.size()
                                          : op.engine.kind != EngineKind::vector || first >= vpus_.size())
      throw std::logic_error("kernel op '" + op.name + "' must run on a core's first MXU or its vector unit");
    if (k.fill_bytes + k.body_bytes + k.drain_bytes != k.read_bytes + k.written_bytes)
      throw std::logic_error("kernel op '" + op.name + "': its phases do not add up to its bytes");
    std::uint64_t part_bytes = 0, part_ps = 0;
    for (const KernelOp::Part& p : k.body_parts) {
      part_bytes += p.bytes;
      part_ps += p.min_ps;
    }
    if (!k.body_parts.empty() && (part_bytes != k.body_bytes || part_ps != k.min_body_ps))
      throw std::logic_error("kernel op '" + op.name + "': its body's parts do not add up to its body");
    if (!(k.fill_transfers > 0 && k.body_transfers > 0))
      throw std::logic_error("kernel op '" + op.name + "': no transfer in service");
    fluid_read_ += k.read_bytes;
    fluid_written_ += k.written_bytes;
  }
  std::uint32_t slot;
  if (free_fluid_.empty()) {
    slot = static_cast<std::uint32_t>(fluid_ops_.size());
    fluid_ops_.emplace_back();
  } else {
    slot = free_fluid_.back();
    free_fluid_.pop_back();
  }
  fluid_ops_[slot] = Fluid{&op, done, Phase::start, 0, static_cast<std::uint64_t>(sc_core::sc_time_stamp().value())};
  advance(slot);
}

void Chip::advance(std::uint32_t slot) {
  const Op& op = *fluid_ops_[slot].op;
  const auto* d = std::get_if<DmaOp>(&op.payload);
  // A DMA copy is a body of its bytes and its access latency.
  static const KernelOp kNoKernel;
  const KernelOp& k = d ? kNoKernel : std::get<KernelOp>(op.payload);
  const std::uint64_t body_bytes = d ? d->bytes : k.body_bytes;
  const Completion self{this, slot};
  // Each phase either starts (and returns, to be called again when it
  // ends) or has nothing to do and falls through to the next.
  for (;;) {
    Fluid& f = fluid_ops_[slot];
    if (f.phase == Phase::body && f.part + 1 < k.body_parts.size()) {
      ++f.part;  // the body's next part
    } else {
      f.phase = static_cast<Phase>(static_cast<int>(f.phase) + 1);
      f.part = 0;
    }
    switch (f.phase) {
      case Phase::fill:
        if (k.fill_bytes == 0) break;
        hbm_fluid_->start({double(k.fill_bytes) / k.fill_transfers, k.fill_transfers, 0.0, sim::FluidShare::kNoCap},
                          this, slot);
        return;
      case Phase::fill_latency:
        if (k.fill_bytes == 0 || latency_ps_ == 0) break;
        after_ps(latency_ps_, self);
        return;
      case Phase::body: {
        // Never faster than the engine takes the bytes.
        const bool parts = !k.body_parts.empty();
        const std::uint64_t bytes = parts ? k.body_parts[f.part].bytes : body_bytes;
        const std::uint64_t nominal_ps = parts ? k.body_parts[f.part].min_ps : k.min_body_ps;
        const std::uint64_t min_ps =
            d || kernel_stretch_ == 1.0
                ? nominal_ps
                : static_cast<std::uint64_t>(std::llround(double(nominal_ps) * kernel_stretch_));
        if (bytes > 0) {
          // In units of one byte per transfer in service (KernelOp::body_transfers).
          const double n = d ? 1.0 : k.body_transfers;
          const bool host = d && is_host_dma_engine(config_, op.engine.index);  // no faster than the host link
          const bool sparsecore = d && is_sparsecore_engine(config_, op.engine.index);
          const double cap = host                                                 ? config_.host.pcie_bandwidth
                             : sparsecore && config_.sparsecore.hbm_bandwidth > 0 ? config_.sparsecore.hbm_bandwidth
                             : min_ps > 0 ? double(bytes) / n / (double(min_ps) / sim::kPsPerSecond)
                                          : sim::FluidShare::kNoCap;
          hbm_fluid_->start({double(bytes) / n, n, 0.0, cap}, this, slot);
          return;
        }
        if (min_ps == 0) break;
        after_ps(min_ps, self);
        return;
      }
      case Phase::drain:
        if (k.drain_bytes == 0) break;
        hbm_fluid_->start({double(k.drain_bytes), 1.0, 0.0, sim::FluidShare::kNoCap}, this, slot);
        return;
      case Phase::drain_latency:
        // A DMA pays its access latency once, after its bytes.
        if ((k.drain_bytes == 0 && !d) || latency_ps_ == 0) break;
        after_ps(latency_ps_, self);
        return;
      case Phase::done: finish_fluid(slot); return;
      case Phase::start: break;
    }
  }
}

void Chip::finish_fluid(std::uint32_t slot) {
  const Fluid f = fluid_ops_[slot];
  free_fluid_.push_back(slot);
  const Op& op = *f.op;
  if (const auto* d = std::get_if<DmaOp>(&op.payload)) {
    FluidDma& e = fluid_dmas_[op.engine.index];
    ++e.transfers;
    e.bytes += d->bytes;
    e.busy_ps += static_cast<std::uint64_t>(sc_core::sc_time_stamp().value()) - f.started_ps;
  } else {
    const auto& k = std::get<KernelOp>(op.payload);
    if (op.engine.kind == EngineKind::mxu) {
      // The core's MXUs work side by side: each is busy for the op's MXU
      // cycles, and they share its multiply-accumulates.
      const std::uint32_t units = config_.mxus_per_core;
      for (std::uint32_t u = 0; u < units; ++u)
        mxus_[op.engine.index + u]->account(k.macs / units + (u < k.macs % units ? 1 : 0), k.engine_cycles,
                                            k.vmem_bytes / units);
    } else {
      vpus_[op.engine.index]->account(k.engine_cycles, k.vector_flops);
    }
  }
  f.done();
}

double Chip::mxu_busy_s() const {
  double s = 0;
  for (const auto& m : mxus_) s += double(m->stats().busy_cycles) / config_.sustained_clock();
  return s;
}

double Chip::vector_busy_s() const {
  double s = 0;
  for (const auto& v : vpus_) s += v->busy().to_seconds();
  return s;
}

double Chip::dma_busy_s() const {
  double s = 0;
  for (const auto& d : dmas_) s += d->busy().to_seconds();
  for (std::uint32_t i = 0; i < config_.dma_engines && i < fluid_dmas_.size(); ++i)
    s += double(fluid_dmas_[i].busy_ps) / sim::kPsPerSecond;  // the chip's own, not the host link
  return s;
}

void Chip::dump_stats(sim::StatGroup& g, double elapsed_s) const {
  // The chip's engines at a glance: means per instance, the busiest MXU.
  double mxu_max = 0;
  for (const auto& m : mxus_) mxu_max = std::max(mxu_max, double(m->stats().busy_cycles) / config_.sustained_clock());
  g.scalar("mxu_busy_time", mxu_busy_s() / double(mxus_.size()), "s", "busy time per MXU, mean over the MXUs");
  g.scalar("mxu_busy_time_max", mxu_max, "s", "busy time of the busiest MXU");
  g.scalar("vector_busy_time", vector_busy_s() / double(vpus_.size()), "s", "busy time per vector unit, mean");
  g.scalar("dma_busy_time", dma_busy_s() / double(config_.dma_engines), "s", "busy time per DMA engine, mean");
  double sparsecore_busy = 0, sparsecore_bytes = sparsecore_reduced_;
  for (std::uint32_t i = 0; i < config_.sparsecore.count && hbm_fluid_; ++i) {
    sparsecore_busy += double(fluid_dmas_[sparsecore_engine(config_, i)].busy_ps) / sim::kPsPerSecond;
    sparsecore_bytes += double(fluid_dmas_[sparsecore_engine(config_, i)].bytes);
  }
  if (sparsecore_bytes > 0) {  // only a run that used them: other reports unchanged
    g.scalar("sparsecore_busy_time", sparsecore_busy / double(config_.sparsecore.count), "s",
             "busy time per SparseCore, mean");
    g.scalar("sparsecore_hbm_bytes", sparsecore_bytes, "B",
             "HBM bytes the SparseCores moved (their own work and the reductions of collectives offloaded to them)");
  }
  g.scalar("hbm_bytes", double(hbm_bytes_read() + hbm_bytes_written()), "B", "HBM bytes read and written");
  double macs = 0, vmem = 0;
  for (const auto& m : mxus_) {
    macs += double(m->stats().macs);
    vmem += m->stats().vmem_bytes;
  }
  g.scalar("mxu_macs", macs, "MAC", "multiply-accumulates of all MXUs");
  g.scalar("vmem_bytes", vmem, "B", "bytes the MXUs moved between VMEM and the arrays");
  for (std::size_t i = 0; i < mxus_.size(); ++i) {
    const MxuStats st = mxus_[i]->stats();
    const double cells = double(config_.mxu.rows) * config_.mxu.cols;
    auto& mg = g.group("mxu" + std::to_string(i));
    mg.scalar("ops", double(st.ops), "ops", "MXU ops executed");
    mg.scalar("macs", double(st.macs), "MAC", "useful multiply-accumulates");
    mg.scalar("busy_cycles", double(st.busy_cycles), "cycles", "cycles with an op in the array");
    mg.scalar("vmem_bytes", st.vmem_bytes, "B", "bytes moved between VMEM and the array");
    const double clock = config_.sustained_clock();
    mg.formula(
        "busy_fraction", [=] { return elapsed_s > 0 ? double(st.busy_cycles) / clock / elapsed_s : 0; }, "1",
        "busy_cycles / elapsed cycles");
    mg.formula(
        "utilization", [=] { return elapsed_s > 0 ? double(st.macs) / (cells * clock * elapsed_s) : 0; }, "1",
        "macs / (rows * cols * elapsed cycles)");
  }
  for (std::size_t i = 0; i < vpus_.size(); ++i) {
    auto& vg = g.group("vpu" + std::to_string(i));
    vg.scalar("operations", double(vpus_[i]->operations()), "ops", "vector operations");
    vg.scalar("flops", vpus_[i]->flops(), "FLOP", "vector FLOPs");
    vg.scalar("busy_time", vpus_[i]->busy().to_seconds(), "s", "time with an operation in flight");
  }
  for (std::uint32_t i = 0; i < config_.dma_engines; ++i) {
    auto& dg = g.group("dma" + std::to_string(i));
    const double transfers = hbm_ ? double(dmas_[i]->transfers()) : double(fluid_dmas_[i].transfers);
    const double bytes = hbm_ ? double(dmas_[i]->bytes()) : double(fluid_dmas_[i].bytes);
    const double busy = hbm_ ? dmas_[i]->busy().to_seconds() : double(fluid_dmas_[i].busy_ps) / sim::kPsPerSecond;
    dg.scalar("transfers", transfers, "transfers", "DMA transfers");
    dg.scalar("bytes", bytes, "B", "bytes moved");
    dg.scalar("busy_time", busy, "s", "time with a transfer in flight");
    dg.formula(
        "bandwidth", [=] { return busy > 0 ? bytes / busy : 0; }, "B/s", "bytes / busy_time");
  }
  auto& hg = g.group("hbm");
  const double rd = double(hbm_bytes_read()), wr = double(hbm_bytes_written());
  const double peak = config_.hbm.bandwidth_bytes_per_s;
  hg.scalar("bytes_read", rd, "B", "bytes read");
  hg.scalar("bytes_written", wr, "B", "bytes written");
  hg.scalar("transfers", double(hbm_ ? hbm_->transfers() : hbm_fluid_->flows()), "transfers",
            hbm_ ? "transactions served" : "flows served (kernel phases, DMA copies, collective reductions)");
  hg.formula(
      "bandwidth", [=] { return elapsed_s > 0 ? (rd + wr) / elapsed_s : 0; }, "B/s",
      "(bytes_read + bytes_written) / elapsed");
  hg.formula(
      "bandwidth_utilization", [=] { return elapsed_s > 0 ? (rd + wr) / elapsed_s / peak : 0; }, "1",
      "bandwidth / peak bandwidth");
  if (hbm_fluid_) {
    hg.scalar("busy_time", hbm_fluid_->busy().to_seconds(), "s", "time with a flow active");
    hg.scalar("reductions", double(reductions_), "flows", "collective reductions among the flows");
    return;
  }
  for (std::uint32_t c = 0; c < config_.hbm.channels; ++c) {
    auto& cg = hg.group("channel" + std::to_string(c));
    cg.scalar("bytes", double(hbm_->channel_bytes(c)), "B", "bytes served");
    cg.scalar("busy_time", hbm_->channel_busy(c).to_seconds(), "s", "time with a flow active");
  }
}

}  // namespace hw
