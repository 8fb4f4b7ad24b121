#define SC_INCLUDE_DYNAMIC_PROCESSES  // sc_spawn for the rare op that advances cycle by cycle
#include "hw/chip.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace hw {

Chip::Chip(sc_core::sc_module_name name, const ChipConfig& config, Fidelity fidelity)
    : sc_core::sc_module(name), config_(config), period_(sc_core::sc_time(1.0 / config.clock, sc_core::SC_SEC)) {
  hbm_ = std::make_unique<Hbm>("hbm", config_.hbm);
  for (std::uint32_t i = 0; i < config_.dma_engines; ++i) {
    dmas_.push_back(std::make_unique<DmaEngine>(("dma" + std::to_string(i)).c_str()));
    dmas_.back()->socket.bind(hbm_->socket);
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
  const std::uint64_t span = cycles * static_cast<std::uint64_t>(period_.value());
  const std::uint64_t now = sc_core::sc_time_stamp().value();
  if (timed_.empty() || now + span < timed_.top().due) timer_.notify(sc_core::sc_time::from_value(span));
  timed_.push(Timed{now + span, timed_seq_++, done, mxu});
}

void Chip::on_timer() {
  const std::uint64_t now = sc_core::sc_time_stamp().value();
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
  if (!timed_.empty()) timer_.notify(sc_core::sc_time::from_value(timed_.top().due - now));
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
    case EngineKind::ici: break;
  }
  throw std::logic_error("op '" + op.name + "' needs the pod's network; run it through runtime::run_pod");
}

double Chip::mxu_busy_s() const {
  double s = 0;
  for (const auto& m : mxus_) s += double(m->stats().busy_cycles) / config_.clock;
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
  return s;
}

void Chip::dump_stats(sim::StatGroup& g, double elapsed_s) const {
  // The chip's engines at a glance: means per instance, the busiest MXU.
  double mxu_max = 0;
  for (const auto& m : mxus_) mxu_max = std::max(mxu_max, double(m->stats().busy_cycles) / config_.clock);
  g.scalar("mxu_busy_time", mxu_busy_s() / double(mxus_.size()), "s", "busy time per MXU, mean over the MXUs");
  g.scalar("mxu_busy_time_max", mxu_max, "s", "busy time of the busiest MXU");
  g.scalar("vector_busy_time", vector_busy_s() / double(vpus_.size()), "s", "busy time per vector unit, mean");
  g.scalar("dma_busy_time", dma_busy_s() / double(dmas_.size()), "s", "busy time per DMA engine, mean");
  g.scalar("hbm_bytes", double(hbm_->bytes_read() + hbm_->bytes_written()), "B", "HBM bytes read and written");
  for (std::size_t i = 0; i < mxus_.size(); ++i) {
    const MxuStats st = mxus_[i]->stats();
    const double cells = double(config_.mxu.rows) * config_.mxu.cols;
    auto& mg = g.group("mxu" + std::to_string(i));
    mg.scalar("ops", double(st.ops), "ops", "MXU ops executed");
    mg.scalar("macs", double(st.macs), "MAC", "useful multiply-accumulates");
    mg.scalar("busy_cycles", double(st.busy_cycles), "cycles", "cycles with an op in the array");
    const double clock = config_.clock;
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
  for (std::size_t i = 0; i < dmas_.size(); ++i) {
    auto& dg = g.group("dma" + std::to_string(i));
    const double bytes = double(dmas_[i]->bytes()), busy = dmas_[i]->busy().to_seconds();
    dg.scalar("transfers", double(dmas_[i]->transfers()), "transfers", "DMA transfers");
    dg.scalar("bytes", bytes, "B", "bytes moved");
    dg.scalar("busy_time", busy, "s", "time with a transfer in flight");
    dg.formula(
        "bandwidth", [=] { return busy > 0 ? bytes / busy : 0; }, "B/s", "bytes / busy_time");
  }
  auto& hg = g.group("hbm");
  const double rd = double(hbm_->bytes_read()), wr = double(hbm_->bytes_written());
  const double peak = config_.hbm.bandwidth_bytes_per_s;
  hg.scalar("bytes_read", rd, "B", "bytes read");
  hg.scalar("bytes_written", wr, "B", "bytes written");
  hg.scalar("transfers", double(hbm_->transfers()), "transfers", "transactions served");
  hg.formula(
      "bandwidth", [=] { return elapsed_s > 0 ? (rd + wr) / elapsed_s : 0; }, "B/s",
      "(bytes_read + bytes_written) / elapsed");
  hg.formula(
      "bandwidth_utilization", [=] { return elapsed_s > 0 ? (rd + wr) / elapsed_s / peak : 0; }, "1",
      "bandwidth / peak bandwidth");
  for (std::uint32_t c = 0; c < config_.hbm.channels; ++c) {
    auto& cg = hg.group("channel" + std::to_string(c));
    cg.scalar("bytes", double(hbm_->channel_bytes(c)), "B", "bytes served");
    cg.scalar("busy_time", hbm_->channel_busy(c).to_seconds(), "s", "time with a flow active");
  }
}

}  // namespace hw
