// Devices against chips (docs/interconnect.md#devices-and-chips): a v3-8 is
// 4 chips and 8 JAX devices. A data-parallel step over its 8 devices is
// checked against hand formulas and against the same step run on one chip
// written by hand as half a v3 (one core, two MXUs, 16 GiB at 450 GB/s):
// each device does exactly that chip's work. An all-reduce between the two
// devices of one chip moves its bytes over the on-die path (one device's
// HBM bandwidth), not ICI.
#include <catch2/catch.hpp>

#include "workloads/experiment.h"
#include "workloads/experiment_fixture.h"

namespace test_devices {

namespace {

using testing_workloads::run;
using testing_workloads::write_yaml;

// The small GPT of test_fsdp.cpp (L 2, D 512, F 2048, 8 x 64 heads, T 256,
// V 4096, tied embeddings): its BF16 weights.
constexpr double L = 2, D = 512, F = 2048, NH = 512, V = 4096;
constexpr double kParams = L * (4 * D * NH + 2 * D * F + 4 * D) + V * D + 2 * D;
constexpr double kWeightBytes = 2 * kParams;

std::string gpt(const std::string& chip_and_pod, int global_batch) {
  return chip_and_pod + R"(
workload:
  kind: train
  model: {type: transformer, layers: 2, d_model: 512, d_ff: 2048, heads: 8, head_dim: 64,
          seq_len: 256, vocab: 4096, tied_embeddings: true}
  global_batch: )" +
         std::to_string(global_batch) + "\n  parallelism: {data: data}\n  optimizer: adam\n";
}

// Half of configs/chips/tpu-v3.yaml, by hand: one TensorCore of two MXUs,
// half the HBM (capacity, bandwidth, channels), DMA engines and PCIe.
const char* kHalfV3 = R"(chip:
  name: half-v3
  clock: 9.4e8
  tensorcores: 1
  mxus_per_core: 2
  mxu: {rows: 128, cols: 128, double_buffer: true}
  vector_flops_per_cycle: 4096
  vmem: 16777216
  hbm: {capacity: 17179869184, bandwidth: 4.125e11, channels: 16, latency: 2.5e-7, interleave: 256}
  dma_engines: 4
  kernel_launch: 8.0e-7
  ici: {link_bandwidth: 5.0e10, link_latency: 1.0e-6, links_per_chip: 4, collective_launch: 4.0e-6}
  host: {chips: 16, pcie_bandwidth: 8.0e9, nic_bandwidth: 2.5e10}
)";

}  // namespace

TEST_CASE("devices: a v3-8 data-parallel step is 8 devices, each the work of half a chip",
          "[workloads][train][devices]") {
  const auto v38 = run(write_yaml("v3-8", gpt("chip: tpu-v3\npod: {topology: torus2d, shape: [2, 2], wraparound: "
                                              "false}\nmesh: {data: 8}",
                                              16)));
  const auto half = run(write_yaml("half-v3", gpt(std::string(kHalfV3) + "mesh: {data: 1}", 2)));
  CHECK(v38["pod"]["chips"] == 4);
  CHECK(v38["pod"]["devices"] == 8);
  const auto& r = v38["result"];
  // 8 replicas of 2 sequences: the whole step's model FLOPs are 8 x one
  // device's.
  CHECK(r["model_flops"].get<double>() == Approx(8 * half["result"]["model_flops"].get<double>()).epsilon(1e-12));
  // MFU against 8 devices of 2 MXUs x 128 x 128 x 2 FLOP x 0.94 GHz each.
  const double device_peak = 2.0 * 2 * 128 * 128 * 0.94e9;
  CHECK(r["mfu"].get<double>() ==
        Approx(r["model_flops"].get<double>() / r["step_time_s"].get<double>() / (8 * device_peak)).epsilon(1e-9));
  // Each device computes what the hand-made half chip computes. On top, the
  // gradient all-reduce reduces (N - 1) / N of the weights on every device,
  // 3 HBM bytes per reduced byte (read both operands, write the sum), and
  // those bytes take HBM time from the backward pass and the optimizer:
  // the step is the half chip's plus them at 412.5 GB/s.
  const double reduce_bytes = 3.0 * 7 / 8 * kWeightBytes;
  CHECK(r["phases"]["forward_s"].get<double>() ==
        Approx(half["result"]["phases"]["forward_s"].get<double>()).epsilon(0.01));
  CHECK(r["hbm_bytes"].get<double>() / 8 ==
        Approx(half["result"]["hbm_bytes"].get<double>() + reduce_bytes).epsilon(0.01));
  CHECK(r["step_time_s"].get<double>() ==
        Approx(half["result"]["step_time_s"].get<double>() + reduce_bytes / 4.125e11).epsilon(0.03));
  CHECK(r["communication"]["exposed_time_s"].get<double>() == 0.0);
  // A ring all-reduce of the BF16 gradients over N = 8 devices sends
  // 2 (N - 1) / N of them from every device, each to a neighbour.
  CHECK(r["ici_bytes"].get<double>() == Approx(8 * 2.0 * 7 / 8 * kWeightBytes).epsilon(0.01));
  // The per-device memory is half a chip's: 16 GiB.
  CHECK(r["memory"]["capacity_bytes"].get<double>() == 17179869184.0);
}

TEST_CASE("devices: the two devices of a chip all-reduce over the on-die path, not ICI", "[workloads][devices]") {
  // 64 MiB between the two devices of one v3 chip, against the same
  // all-reduce on two hand-made half chips joined by one link that is the
  // on-die path: one device's HBM bandwidth (4.125e11 B/s) and one HBM
  // access latency (0.25 us) instead of an ICI hop. Over ICI (5e10 B/s per
  // device) the bytes alone would take S / 5e10 = 1.3 ms.
  const std::string collective = "workload: {kind: collective, op: all_reduce, bytes: 67108864}\n";
  const auto chip = run(write_yaml("ondie", "chip: tpu-v3\nmesh: {pair: 2}\n" + collective));
  const auto pair = run(write_yaml("pair", std::string(kHalfV3) +
                                               "pod: {topology: ring, shape: [2], wraparound: false, link_bandwidth: "
                                               "4.125e11, link_latency: 2.5e-7}\nmesh: {pair: 2}\n" +
                                               collective));
  CHECK(chip["pod"]["devices"] == 2);
  const double t = chip["result"]["step_time_s"].get<double>();
  const double hand = pair["result"]["step_time_s"].get<double>();
  INFO("one v3 chip " << t << " s, two half chips on a 4.125e11 B/s link " << hand << " s");
  CHECK(t == Approx(hand).epsilon(1e-6));
  CHECK(t < 67108864.0 / 5e10 / 3);
}

}  // namespace test_devices
