// Every shipped chip file against the published figures it cites
// (docs/reference/tpu-specs.md): peak BF16 FLOP/s from its MXUs and clock,
// HBM capacity and bandwidth, TensorCores, ICI link bandwidth. A file whose
// MXU count, size and clock do not multiply out to the published peak, or
// whose memory is not the published one, fails here.
#include <catch2/catch.hpp>

#include <string>

#include "hw/chip_config.h"
#include "sim/yaml_node.h"

namespace test_chip_files {

namespace {

struct Published {
  const char* file;
  double peak_flops;       // BF16, per chip
  double hbm_bytes;        // capacity
  double hbm_bw;           // B/s
  std::uint32_t cores;     // TensorCores per chip
  double ici_link_bw;      // B/s, one direction
  const char* peak_where;  // docs/reference/tpu-specs.md anchor of the peak
};

constexpr double GiB = 1024.0 * 1024 * 1024;

// The published values (tpu-specs.md rows) a chip file must reproduce.
const Published kChips[] = {
    {"tpu-v2", 45e12, 16 * GiB, 6.0e11, 2, 6.0e10, "v2.peak_bf16_flops_per_chip (SECONDARY)"},
    {"tpu-v3", 123e12, 32 * GiB, 9.0e11, 2, 1.0e11, "v3.peak_bf16_flops_per_chip (GCD:v3)"},
    {"tpu-v4", 275e12, 32 * GiB, 1.2e12, 2, 4.5e10, "v4.peak_bf16_flops_per_chip (GCD:v4)"},
    {"tpu-v5e", 197e12, 16 * GiB, 8.1e11, 1, 4.5e10, "v5e.peak_bf16_flops_per_chip (GCD:v5e)"},
    {"tpu-v5p", 459e12, 95 * GiB, 2.8e12, 2, 9.0e10, "v5p.peak_bf16_flops_per_chip (GCD:v5p)"},
    {"tpu-v6e", 918e12, 32 * GiB, 1.6e12, 1, 9.0e10, "v6e.peak_bf16_flops_per_chip (GCD:v6e)"},
    {"tpu-7x", 2307e12, 192 * GiB, 7.4e12, 2, 9.0e10, "tpu7x.peak_bf16_flops_per_chip (GCD:tpu7x)"},
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
