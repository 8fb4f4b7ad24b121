// The lean matmul programs of training steps (train_kernels.h) against the
// full blocked kernel they are cut from (plan_matmul, every block step its
// own ops) and the roofline, run on one simulated chip: same HBM bytes and
// FLOPs, time between the roofline and the full kernel's (plus the stated
// fill bound), fewer ops.
#include <catch2/catch.hpp>

#include <cmath>
#include <optional>

#include "kernels/kernel_ops.h"
#include "kernels/matmul_kernel.h"
#include "kernels/train_kernels.h"
#include "models/transformer.h"
#include "nominal_chip.h"
#include "runtime/pod_run.h"
#include "workloads/experiment.h"

namespace test_train_kernels {

namespace {

struct Ran {
  double time_s = 0, flops = 0;
  std::uint64_t hbm_bytes = 0;
  std::size_t ops = 0;
};

// On the experiment's chip, or on `chip` (a training step's simulated chip).
Ran run_on_one_chip(const workloads::Experiment& exp, const hw::Program& prog,
                    const std::optional<hw::ChipConfig>& chip = std::nullopt) {
  runtime::PodProgram pp;
  pp.add_chip(prog);
  runtime::PodConfig config = workloads::pod_config(exp);
  if (chip) config.chip = *chip;
  const runtime::PodRunResult r = runtime::run_pod(config, pp, false);
  Ran out{r.step_time_s, 0, static_cast<std::uint64_t>(r.chip_stats(0).value("hbm_bytes")), prog.ops.size()};
  for (const auto& op : prog.ops) out.flops += op.flops;
  return out;
}

workloads::Experiment one_chip(const std::string& chip, const std::string& fidelity = "tile") {
  return workloads::load_experiment(std::string(TPUSIM_SOURCE_DIR) + "/configs/experiments/matmul-v4.yaml",
                                    {nominal_chip::set(chip), "fidelity=" + fidelity});
}

}  // namespace

TEST_CASE("lean matmul: same bytes and FLOPs as the full kernel, time within the fill bound, fewer ops",
          "[workloads][train]") {
  struct Shape {
    const char* chip;
    std::uint64_t count, m, k, n;
    bool folds;  // more block steps than the slice keeps, and blocks small enough to move several per DMA
  };
  // A Transformer's shapes: linear layers, attention score and context
  // (count = sequences x heads; head_dim 64 and 128).
  const Shape shapes[] = {{"tpu-v4", 1, 8192, 1024, 4096, false}, {"tpu-v4", 1, 65536, 2048, 2048, false},
                          {"tpu-v4", 96, 1024, 64, 1024, true},   {"tpu-v4", 96, 1024, 1024, 64, true},
                          {"tpu-v4", 16, 1024, 1024, 128, true},  {"tpu-v5e", 1, 8192, 2048, 2048, false},
                          {"tpu-v5e", 64, 1024, 128, 1024, true}};
  for (const auto& s : shapes) {
    const auto exp = one_chip(s.chip);
    kernels::MatmulPrograms lean_programs(exp.chip, hw::Fidelity::tile);
    const Ran lean = run_on_one_chip(exp, lean_programs.get(s.count, s.m, s.k, s.n));
    const std::uint64_t rows = s.count * s.m;
    const auto full_plan =
        kernels::plan_matmul(exp.chip, rows, s.k, s.n, kernels::choose_blocking(exp.chip, s.m, s.k, s.n));
    const Ran full = run_on_one_chip(exp, full_plan.program);
    INFO(s.chip << " " << s.count << " x " << s.m << "x" << s.k << "x" << s.n << ": lean " << lean.time_s << " s in "
                << lean.ops << " ops, full " << full.time_s << " s in " << full.ops << " ops");
    CHECK(lean.hbm_bytes == full.hbm_bytes);
    CHECK(lean.flops == Approx(2.0 * s.count * s.m * s.k * s.n));
    // Never faster than the roofline, never slower than the unfolded kernel
    // beyond the fill of one folded step.
    CHECK(lean.time_s >= std::max(lean.flops / exp.chip.peak_flops_per_s(),
                                  double(lean.hbm_bytes) / exp.chip.hbm.bandwidth_bytes_per_s));
    CHECK(lean.time_s <= full.time_s * (1.0 + 1.0 / kernels::kMinStepsPerCore));
    if (!s.folds) CHECK(lean.time_s == full.time_s);
    if (s.folds) {
      CHECK(lean.ops < full.ops);
    } else {
      CHECK(lean.ops == full.ops);
    }
  }
}

TEST_CASE("model matmuls in 8 bits: one-byte A and B, bf16 C, the format's peak, bf16 ones keep bf16's",
          "[kernels][train][formats]") {
  // docs/reference/tpu-specs.md: v5e and v6e int8 at twice the bf16 rate,
  // v5p fp8 at the bf16 rate (peak_int8_ops_per_chip, peak_fp8_flops_per_chip).
  struct Case {
    const char* chip;
    hw::NumberFormat format;
    double rate;
  };
  const Case cases[] = {{"tpu-v5e", hw::NumberFormat::int8, 2},
                        {"tpu-v6e", hw::NumberFormat::int8, 2},
                        {"tpu-v5p", hw::NumberFormat::fp8, 1}};
  const std::uint64_t m = 8192, k = 8192, n = 8192;
  const double flops = 2.0 * m * k * n;
  for (const char* fidelity : {"tile", "kernel"})
    for (const Case& c : cases) {
      INFO(c.chip << " " << hw::to_string(c.format) << " at " << fidelity << " fidelity");
      const auto exp = one_chip(c.chip, fidelity);
      kernels::MatmulPrograms programs(exp.chip, exp.fidelity, c.format);
      const hw::ChipConfig simulated = programs.simulated_chip();
      const double peak = exp.chip.peak_flops_per_s();
      const Ran q = run_on_one_chip(exp, programs.get(1, m, k, n, {}, true), simulated);
      // Bytes by hand for the blocking the kernel chose: each output block
      // reads its row of A blocks and its column of B blocks, one byte an
      // element; C is written once, two bytes an element.
      const kernels::MatmulBlocking b = kernels::choose_blocking(simulated, m, k, n, {}, {1, 1, 2});
      const double nb = std::ceil(double(n) / b.bn), mb = std::ceil(double(m) / b.bm);
      CHECK(double(q.hbm_bytes) == double(m * k) * nb + double(k * n) * mb + 2.0 * m * n);
      // Compute-bound at the format's peak: within 10% above FLOPs / peak.
      CHECK(q.time_s >= flops / (c.rate * peak));
      CHECK(q.time_s <= 1.1 * flops / (c.rate * peak));
      // The same matmul in bf16 on the simulated chip uses as many arrays
      // as the chip has: bf16's peak, not the format's.
      const Ran h = run_on_one_chip(exp, programs.get(1, m, k, n, {}, false), simulated);
      CHECK(h.time_s >= flops / peak);
      CHECK(h.time_s <= 1.1 * flops / peak);
    }
}

TEST_CASE("a training step's 8-bit matmul quantizes both bf16 operands first (AQT), a stored one does not",
          "[kernels][train][formats]") {
  // AQT's dynamic quantization (train_kernels.cpp after_quantizing): per
  // operand element a calibration read and a quantization read of bf16
  // (4 bytes), an 8-bit write (1 byte), 6 vector FLOPs; on top of the
  // matmul a stored-operand program runs.
  const std::uint64_t m = 4096, k = 2048, n = 8192;
  for (const char* fidelity : {"tile", "kernel"}) {
    INFO(fidelity << " fidelity");
    const auto exp = one_chip("tpu-v6e", fidelity);
    kernels::MatmulPrograms stored(exp.chip, exp.fidelity, hw::NumberFormat::int8);
    kernels::MatmulPrograms at_use(exp.chip, exp.fidelity, hw::NumberFormat::int8,
                                   kernels::OperandQuantization::at_use);
    const Ran s = run_on_one_chip(exp, stored.get(1, m, k, n, {}, true), stored.simulated_chip());
    const Ran q = run_on_one_chip(exp, at_use.get(1, m, k, n, {}, true), at_use.simulated_chip());
    const double elements = double(m * k + k * n);
    CHECK(double(q.hbm_bytes - s.hbm_bytes) == Approx(5 * elements).epsilon(1e-3));
    CHECK(q.flops - s.flops == Approx(6 * elements).epsilon(1e-3));
    // The two passes stream at most at HBM speed, one after the other
    // before the matmul: at least their bytes over the peak bandwidth.
    CHECK(q.time_s - s.time_s >= 5 * elements / exp.chip.hbm.bandwidth_bytes_per_s * 0.99);
    // A bf16 matmul of the same program set is not quantized.
    const Ran b = run_on_one_chip(exp, at_use.get(1, m, k, n, {}, false), at_use.simulated_chip());
    const Ran b0 = run_on_one_chip(exp, stored.get(1, m, k, n, {}, false), stored.simulated_chip());
    CHECK(b.hbm_bytes == b0.hbm_bytes);
    CHECK(b.time_s == b0.time_s);
  }
}

TEST_CASE("a weight-only 8-bit matmul reads one-byte B beside bf16 A and runs at the bf16 rate",
          "[kernels][train][formats]") {
  // JetStream-PyTorch's int8 serving (jetstream_pt/layers.py
  // WeightOnlyInt8Linear at 84ac213): bf16 activations times int8 weights,
  // the weights converted and the product taken in bf16. v5e's int8 peak is
  // twice its bf16 one (docs/reference/tpu-specs.md), so a compute-bound
  // weight-only matmul takes the bf16 time, twice the int8 one.
  for (const char* fidelity : {"tile", "kernel"}) {
    INFO(fidelity << " fidelity");
    const auto exp = one_chip("tpu-v5e", fidelity);
    kernels::MatmulPrograms both(exp.chip, exp.fidelity, hw::NumberFormat::int8);
    kernels::MatmulPrograms weight_only(exp.chip, exp.fidelity, hw::NumberFormat::int8,
                                        kernels::OperandQuantization::weight_only);
    const double peak = exp.chip.peak_flops_per_s(), bw = exp.chip.hbm.bandwidth_bytes_per_s;
    {
      const std::uint64_t m = 8192, k = 8192, n = 8192;
      const double flops = 2.0 * m * k * n;
      const Ran w = run_on_one_chip(exp, weight_only.get(1, m, k, n, {}, true), weight_only.simulated_chip());
      const Ran q = run_on_one_chip(exp, both.get(1, m, k, n, {}, true), both.simulated_chip());
      // Bytes by hand for the blocking the kernel chose on the chip itself
      // (bf16 MXU work): each output block reads its row of A blocks at two
      // bytes an element and its column of B blocks at one; C is bf16.
      const kernels::MatmulBlocking b = kernels::choose_blocking(exp.chip, m, k, n, {}, {2, 1, 2});
      const double nb = std::ceil(double(n) / b.bn), mb = std::ceil(double(m) / b.bm);
      CHECK(double(w.hbm_bytes) == 2.0 * m * k * nb + double(k * n) * mb + 2.0 * m * n);
      CHECK(w.flops == Approx(flops));
      CHECK(w.time_s >= flops / peak);
      CHECK(w.time_s <= 1.1 * flops / peak);
      CHECK(q.time_s <= 0.55 * w.time_s);
    }
    {
      // A decode step's MLP up-projection of Llama 2 7B over 8 chips (96
      // sequences, d_model 4096, d_ff 11008 / 8): one byte a weight, A read
      // once per column block (at most n / 128 of them), C written once.
      const std::uint64_t m = 96, k = 4096, n = 1376;
      const Ran w = run_on_one_chip(exp, weight_only.get(1, m, k, n, {}, true), weight_only.simulated_chip());
      const double least = double(k * n) + 2.0 * m * k + 2.0 * m * n;
      CHECK(double(w.hbm_bytes) >= least);
      CHECK(double(w.hbm_bytes) <= least + 2.0 * m * k * (std::ceil(n / 128.0) - 1));
      // Never faster than its bytes, nor than the same matmul with both
      // operands in int8 (the int8 rate); never slower than it in bf16
      // (twice the weights' bytes, the same MXU work).
      kernels::MatmulPrograms bf16(exp.chip, exp.fidelity);
      const Ran h = run_on_one_chip(exp, bf16.get(1, m, k, n, {}, false), bf16.simulated_chip());
      const Ran q = run_on_one_chip(exp, both.get(1, m, k, n, {}, true), both.simulated_chip());
      INFO("weight-only " << w.time_s << " s, int8 " << q.time_s << " s, bf16 " << h.time_s << " s");
      CHECK(double(h.hbm_bytes) >= 2.0 * k * n);
      CHECK(w.time_s >= double(w.hbm_bytes) / bw);
      CHECK(w.time_s >= q.time_s);
      CHECK(w.time_s <= h.time_s);
    }
  }
}

// Flash attention's fused matmuls at kernel fidelity (matmul_kernel.h
// MatmulFusion) against hand counts for a blocking of square beta x beta
// blocks along the sequence (head_dim H in one step): the causal kernel
// computes, per instance, the T/beta (T/beta + 1) / 2 blocks on and below
// the diagonal, whole; operands and results kept in VMEM move no bytes.
TEST_CASE("flash attention kernels: HBM bytes and FLOPs of the causal, fused blocks", "[kernels][flash]") {
  const auto exp = one_chip("tpu-v5e", "kernel");
  const std::uint64_t c = 4, T = 1024, H = 128, beta = 256;
  const double tri = double(T / beta) * double(T / beta + 1) / 2;  // blocks per instance
  const double stair = double(beta) * tri;                         // sum over block rows of their depth / beta
  using models::Causal;
  struct Case {
    const char* what;
    std::uint64_t k, n;
    kernels::MatmulFusion fusion;
    double bytes, flops;
  };
  const Case cases[] = {
      // S = Q K^T (and dP = dO V^T): Q and K blocks per block, S in VMEM.
      {"S = Q K^T",
       H,
       T,
       {false, true, Causal::out_lower, T},
       2.0 * c * tri * (beta * H + H * beta),
       2.0 * c * tri * beta * beta * H},
      // O = P V: P in VMEM; the contraction over keys up to the diagonal
      // block; O written once.
      {"O = P V",
       T,
       H,
       {true, false, Causal::depth_upto_row, T},
       2.0 * c * stair * H + 2.0 * c * T * H,
       2.0 * c * beta * stair * H},
      // dV = P^T dO: rows are keys, the contraction queries from the
      // diagonal block on.
      {"dV = P^T dO",
       T,
       H,
       {true, false, Causal::depth_from_row, T},
       2.0 * c * stair * H + 2.0 * c * T * H,
       2.0 * c * beta * stair * H},
  };
  for (const auto& s : cases) {
    const kernels::MatmulBlocking b{beta, s.k == H ? H : beta, s.n == H ? H : beta, 2, 2};
    const Ran fused =
        run_on_one_chip(exp, kernels::matmul_program(exp.chip, hw::Fidelity::kernel, c * T, s.k, s.n, b, {}, s.fusion));
    const Ran plain = run_on_one_chip(exp, kernels::matmul_program(exp.chip, hw::Fidelity::kernel, c * T, s.k, s.n, b));
    INFO(s.what << ": fused " << fused.hbm_bytes << " B " << fused.flops << " FLOP " << fused.time_s << " s; plain "
                << plain.hbm_bytes << " B " << plain.flops << " FLOP " << plain.time_s << " s");
    CHECK(double(fused.hbm_bytes) == s.bytes);
    CHECK(fused.flops == s.flops);
    // The executed share of the square: (T + beta) / 2T.
    CHECK(fused.flops / plain.flops == Approx(double(T + beta) / (2.0 * T)));
    CHECK(double(fused.hbm_bytes) == double(kernels::matmul_traffic(c * T, s.k, s.n, b, s.fusion).total()));
    CHECK(fused.time_s < plain.time_s);
  }
}

// The attention core of one Transformer block (its forward and backward
// matmuls, as models/transformer.cpp builds them: flash runs S again in
// its backward) at kernel fidelity, against the hand counts below. With
// the sequence in one block, each of flash's 7 kernels moves two B N x T x
// H tensors (Q and K in; V in, O out; ...) for 2 B N T^2 H FLOPs: its
// intensity is T / 2, so it stops being memory-bound at T* = 2 x ridge
// (486 on v5e). Materialized attention's 6 matmuls each also move a T x T
// tensor (S, P, dP, dS): 2 B N (2 T H + T^2) bytes, intensity T H / (T +
// 2H) < H = 128, below the ridge at every length.
TEST_CASE("flash attention vs materialized: bytes, FLOPs, and where flash stops being memory-bound",
          "[kernels][flash]") {
  const auto exp = one_chip("tpu-v5e", "kernel");
  kernels::MatmulPrograms programs(exp.chip, hw::Fidelity::kernel);
  const double ridge = exp.chip.ridge_intensity(), H = 128, c = 16 * 8;  // batch 16 x 8 heads
  const double t_star = 2 * ridge;
  struct Run {
    double time_s = 0, bytes = 0, flops = 0;
  };
  auto attention = [&](std::uint64_t T, bool flash) {
    models::TransformerConfig cfg;
    cfg.layers = 1;
    cfg.d_model = 1024;
    cfg.d_ff = 4096;
    cfg.heads = 8;
    cfg.head_dim = 128;
    cfg.seq_len = T;
    cfg.vocab = 1000;
    if (flash) cfg.attention = "flash";
    const auto model = models::build_transformer(cfg, 16);
    Run r;
    for (const auto& l : model.layers)
      for (const auto* list : {&l.forward, &l.backward})
        for (const auto& mm : *list) {
          if (mm.kind == models::MatmulKind::linear) continue;
          const Ran one = run_on_one_chip(
              exp, programs.get(mm.count, mm.m, mm.k, mm.n, {mm.a_on_chip, mm.out_on_chip, mm.causal, mm.m}));
          r.time_s += one.time_s;
          r.bytes += double(one.hbm_bytes);
          r.flops += one.flops;
        }
    return r;
  };
  for (std::uint64_t T : {128u, 256u, 512u, 1024u, 2048u, 4096u}) {
    const Run fl = attention(T, true), mat = attention(T, false);
    const double t = double(T);
    INFO("T " << T << ": flash " << fl.time_s << " s, " << fl.bytes << " B, " << fl.flops << " FLOP; materialized "
              << mat.time_s << " s, " << mat.bytes << " B, " << mat.flops << " FLOP");
    CHECK(mat.flops / mat.bytes < H);  // memory-bound at every length
    CHECK(mat.flops / mat.bytes < ridge);
    if (T <= 512) {  // the whole sequence in one block: nothing causal to skip, each tensor moved once
      CHECK(fl.bytes == 7 * 4 * c * t * H);
      CHECK(fl.flops == 7 * 2 * c * t * t * H);
      CHECK(fl.flops / fl.bytes == t / 2);
      CHECK((fl.flops / fl.bytes > ridge) == (t > t_star));
    } else {
      CHECK(fl.flops / fl.bytes > ridge);
      CHECK(fl.flops < 7 * 2 * c * t * t * H * 0.8);  // causal blocks skipped
    }
    if (T <= 256) {
      CHECK(mat.bytes == 6 * 2 * c * (2 * t * H + t * t));
      CHECK(mat.flops == 6 * 2 * c * t * t * H);
    }
    // At T = 128 the T x T tensors are half the bytes of the T x H ones and
    // both run MXU-bound on 128-row blocks: flash's seventh kernel costs
    // more than the probabilities it saves. Past T*, flash is compute-bound
    // and materialized attention still memory-bound.
    if (T == 128) CHECK(fl.time_s > mat.time_s);
    if (t > t_star) CHECK(fl.time_s < 0.6 * mat.time_s);
    if (t > 4 * t_star) CHECK(fl.time_s < 1.5 * fl.flops / exp.chip.peak_flops_per_s());
  }
}

}  // namespace test_train_kernels
