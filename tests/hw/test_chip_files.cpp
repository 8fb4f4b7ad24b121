// Every shipped chip file against the published figures it cites
// (docs/reference/tpu-specs.md): peak BF16 FLOP/s from its MXUs and clock,
// HBM capacity and bandwidth, TensorCores, ICI link bandwidth, VMEM per core
// and the 8-bit formats. A file whose MXU count, size and clock do not
// multiply out to the published peak, or whose memory is not the published
// one, fails here.
#include <catch2/catch.hpp>

#include <string>

#include "hw/chip_config.h"
#include "sim/yaml_node.h"

namespace test_chip_files {

namespace {

struct Published {
  const char* file;
  double peak_flops;    // BF16, per chip
  double hbm_bytes;     // capacity
  double hbm_bw;        // B/s
  std::uint32_t cores;  // TensorCores per chip
  double ici_link_bw;   // B/s, one direction
  double vmem;          // B per TensorCore
  std::uint32_t int8;   // MAC rate against bf16's, 0 where the chip lacks the format
  std::uint32_t fp8;
  const char* peak_where;  // docs/reference/tpu-specs.md anchor of the peak
};

constexpr double MiB = 1024.0 * 1024;
constexpr double GiB = 1024.0 * MiB;

// The published values (tpu-specs.md rows) a chip file must reproduce. HBM
// bandwidth of v2, v3 and v5p and every VMEM: JAX's per-core table times the
// cores (tpu-specs.md#runtime-table: 358, 412.5 and 1230 GB/s per core).
// Formats: the published peak of each format over bf16's (peak_int8_*,
// peak_fp8_*), none on v2 and v3.
const Published kChips[] = {
    {"tpu-v2", 45e12, 16 * GiB, 7.16e11, 2, 6.0e10, 16 * MiB, 0, 0, "v2.peak_bf16_flops_per_chip (SECONDARY)"},
    {"tpu-v3", 123e12, 32 * GiB, 8.25e11, 2, 1.0e11, 16 * MiB, 0, 0, "v3.peak_bf16_flops_per_chip (GCD:v3)"},
    {"tpu-v4", 275e12, 32 * GiB, 1.2e12, 2, 4.5e10, 16 * MiB, 1, 0, "v4.peak_bf16_flops_per_chip (GCD:v4)"},
    {"tpu-v5e", 197e12, 16 * GiB, 8.1e11, 1, 4.5e10, 128 * MiB, 2, 0, "v5e.peak_bf16_flops_per_chip (GCD:v5e)"},
    {"tpu-v5p", 459e12, 95 * GiB, 2.46e12, 2, 9.0e10, 64 * MiB, 2, 1, "v5p.peak_bf16_flops_per_chip (GCD:v5p)"},
    {"tpu-v6e", 918e12, 32 * GiB, 1.6e12, 1, 9.0e10, 128 * MiB, 2, 1, "v6e.peak_bf16_flops_per_chip (GCD:v6e)"},
    {"tpu-7x", 2307e12, 192 * GiB, 7.4e12, 2, 9.0e10, 64 * MiB, 0, 2, "tpu7x.peak_bf16_flops_per_chip (GCD:tpu7x)"},
};

}  // namespace

TEST_CASE("chip files reproduce the published peak, memory and links", "[hw][chip-files]") {
  for (const auto& p : kChips) {
    INFO(p.file << ": " << p.peak_where);
    const hw::ChipConfig c =
        hw::load_chip(sim::YamlNode::load_file(std::string(TPUSIM_SOURCE_DIR) + "/configs/chips/" + p.file + ".yaml"));
    CHECK(c.name == p.file);
    // MXUs x rows x cols x 2 x clock: within 2% (v2's table value is rounded).
    CHECK(c.peak_flops_per_s() == Approx(p.peak_flops).epsilon(0.02));
    CHECK(double(c.hbm.capacity_bytes) == p.hbm_bytes);
    CHECK(c.hbm.bandwidth_bytes_per_s == p.hbm_bw);
    CHECK(c.tensorcores == p.cores);
    CHECK(c.ici.link_bandwidth == p.ici_link_bw);
    CHECK(double(c.vmem) == p.vmem);
    CHECK(c.format_rate(hw::NumberFormat::int8) == p.int8);
    CHECK(c.format_rate(hw::NumberFormat::fp8) == p.fp8);
  }
}

TEST_CASE("v6e and 7x have 256x256 MXUs: a weight tile is padded to 256", "[hw][chip-files]") {
  for (const char* f : {"tpu-v6e", "tpu-7x"}) {
    const hw::ChipConfig c =
        hw::load_chip(sim::YamlNode::load_file(std::string(TPUSIM_SOURCE_DIR) + "/configs/chips/" + f + ".yaml"));
    CHECK(c.mxu.rows == 256);  // common.mxu_size_v6e (SB:tpus.md; GCD:v6e)
    CHECK(c.mxu.cols == 256);
  }
}

}  // namespace test_chip_files
