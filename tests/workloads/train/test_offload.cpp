// remat: offload against closed forms: each Transformer block's stash
// leaves HBM (memory falls by exactly the stash of the blocks, plus two
// blocks' stash held for the backward), every copy to or from the host
// takes bytes / host.pcie_bandwidth (plus one HBM access latency), copies
// to and from the host run at once (PCIe is dual-simplex), and the step
// grows only by the part of the 2 L S / P of host traffic the compute does
// not hide.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <vector>

#include "workloads/experiment.h"
#include "workloads/experiment_fixture.h"

namespace test_offload {

namespace {

using testing_workloads::write_yaml;

// Two blocks, D 512, 8 heads of 64, GELU, T 256, B 2, materialized attention.
constexpr double B = 2, S = 256, D = 512, NH = 512, F = 2048, kHeads = 8, L = 2;
// Korthikanti et al. 2022 s.4.1 without dropout: 2 b s (4D + 4NH + 2F) + 2 a s^2 b.
constexpr double kBlockStash = 2 * B * S * (4 * D + 4 * NH + 2 * F) + 2 * kHeads * S * S * B;

// `pipeline`: 4 blocks over 2 stages (ring of 2), 1F1B over 4 microbatches
// of the same 2 sequences each.
std::string gpt(const std::string& name, const std::string& remat, bool pipeline = false) {
  std::ifstream in(std::string(TPUSIM_SOURCE_DIR) + "/configs/chips/tpu-v4.yaml");
  std::string chip = "chip:\n", line;
  while (std::getline(in, line)) chip += "  " + line + "\n";  // inline, so that --set reaches host.pcie_bandwidth
  const std::string pod = pipeline ? "pod: {topology: ring, shape: [2], wraparound: false}\nmesh: {pipe: 2}\n" : "";
  return write_yaml(name, chip + pod + R"(workload:
  kind: train
  model: {type: transformer, layers: )" +
                              (pipeline ? "4" : "2") +
                              R"(, d_model: 512, d_ff: 2048, heads: 8, head_dim: 64,
          seq_len: 256, vocab: 4096, tied_embeddings: true}
  global_batch: )" + (pipeline ? "8\n  parallelism: {pipeline: pipe, microbatches: 4, schedule: 1f1b}" : "2") +
                              "\n  remat: " + remat + "\n");
}

struct Run {
  nlohmann::json report, trace;
};

Run run(const std::string& path, double pcie, bool trace = false) {
  auto exp = workloads::load_experiment(path, {"chip.host.pcie_bandwidth=" + std::to_string(pcie)});
  workloads::RunOptions opts;
  opts.trace = trace;
  const workloads::RunOutput r = exp.workload->run(exp, opts);
  return Run{r.report, trace ? nlohmann::json::parse(r.trace_json) : nlohmann::json()};
}

struct Copy {
  bool back;
  double start_us, end_us;
};

// The host copies of chip 0 in the trace.
std::vector<Copy> host_copies(const nlohmann::json& trace) {
  std::vector<Copy> out;
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("ph", "") != "X" || e.value("pid", -1) != 0) continue;
    const std::string n = e["name"];
    const bool to = n.find("stash to host") != std::string::npos, back = n.find("stash from host") != std::string::npos;
    if (!to && !back) continue;
    const double ts = e["ts"];
    out.push_back({back, ts, ts + e["dur"].get<double>()});
  }
  return out;
}

}  // namespace

TEST_CASE("remat offload: the blocks' stash leaves HBM, two blocks' come back for the backward",
          "[workloads][train][remat][offload]") {
  const auto none = run(gpt("off-none", "none"), 1.6e10).report["result"]["memory"];
  const auto off = run(gpt("off-mem", "offload"), 1.6e10).report["result"]["memory"];
  CHECK(off["activations_per_microbatch_bytes"].get<double>() ==
        none["activations_per_microbatch_bytes"].get<double>() - L * kBlockStash);
  CHECK(off["offload_buffers_bytes"].get<double>() == 2 * kBlockStash);
  CHECK(off["rematerialized_bytes"].get<double>() == 0);
  CHECK(off["params_bytes"] == none["params_bytes"]);
  // In host memory: every block's stash of the one microbatch, against the
  // chip's share of its host's DRAM (tpu-v4.yaml: 448 GB over 4 chips).
  CHECK(off["host_bytes"].get<double>() == L * kBlockStash);
  CHECK(off["host_capacity_bytes"].get<double>() == 448e9 / 4);
  CHECK(none.count("host_bytes") == 0);
}

TEST_CASE("remat offload: stashes beyond the chip's share of host memory stop before simulating, exit 3",
          "[workloads][train][remat][offload]") {
  const std::string path = gpt("off-host", "offload");
  // Four chips share a host whose DRAM holds one byte less than the two
  // blocks' stash on each; and exactly that much.
  const auto host_memory = [](double bytes) { return "chip.host.memory=" + std::to_string(std::uint64_t(bytes)); };
  auto tight = workloads::load_experiment(path, {host_memory(4 * (L * kBlockStash - 1))});
  CHECK_THROWS_WITH(tight.workload->run(tight, {}), Catch::Contains("does not fit in host memory: chip 0 offloads"));
  auto exact = workloads::load_experiment(path, {host_memory(4 * L * kBlockStash)});
  CHECK(exact.workload->run(exact, {}).report["result"]["memory"]["host_bytes"].get<double>() == L * kBlockStash);
  auto anyway =
      workloads::load_experiment(path, {host_memory(4 * (L * kBlockStash - 1)), "workload.simulate_anyway=true"});
  CHECK(anyway.workload->run(anyway, {}).report["result"]["step_time_s"].get<double>() > 0);
}

TEST_CASE("remat offload: the step grows by the host copies (stash / host bandwidth) that compute does not hide",
          "[workloads][train][remat][offload]") {
  const double step_none = run(gpt("off-base", "none"), 1.6e10).report["result"]["step_time_s"];
  for (const double pcie : {1.6e10, 1.6e11, 1.0e13}) {
    const Run r = run(gpt("off-step", "offload"), pcie);
    const double copy_s = kBlockStash / pcie;
    const double step = r.report["result"]["step_time_s"];
    INFO("host link " << pcie << " B/s: step " << step << " s against " << step_none << " s without offload, "
                      << 2 * L * copy_s << " s of copies");
    CHECK(step >= step_none * 0.999);
    // At worst nothing hidden: each copy's host link time, its HBM access
    // latency (v4: 0.25 us) and the HBM time of its bytes, which the
    // compute shares (v4: 1.2 TB/s).
    CHECK(step <= step_none + 2 * L * (copy_s + 2.5e-7 + kBlockStash / 1.2e12) * 1.01);
    // The copies of one direction run one after another, and the last
    // block's copy back follows its copy out: at least (L + 1) S / P.
    CHECK(step >= (L + 1) * copy_s);
    // With a link this fast the copies' link time is negligible and what is
    // left is their HBM traffic, which the compute shares: the step grows by
    // less than that traffic's HBM time (measured: 8.3 of 35 us).
    if (pcie >= 1.0e13) CHECK(step - step_none < 2 * L * kBlockStash / 1.2e12);
  }
}

TEST_CASE("remat offload: each copy takes S / host bandwidth, copies to and from the host overlap",
          "[workloads][train][remat][offload]") {
  // At 16 GB/s a 10 MiB copy takes 655 us; HBM (1.2 TB/s) would take 8.7,
  // so the host link is the bottleneck whatever the compute takes of HBM.
  const double pcie = 1.6e10, latency_us = 0.25;  // tpu-v4.yaml hbm.latency: one access per copy
  // Stage 0 of a 1F1B pipeline: a later microbatch's copies out run while
  // an earlier one's come back.
  const Run r = run(gpt("off-trace", "offload", true), pcie, true);
  const std::vector<Copy> copies = host_copies(r.trace);
  REQUIRE(copies.size() == 2 * L * 4);  // each of its 2 blocks out once and back once per microbatch
  const double expected_us = kBlockStash / pcie * 1e6 + latency_us;
  for (const Copy& c : copies) {
    INFO((c.back ? "from" : "to") << " host: " << c.end_us - c.start_us << " us against S / P + latency " << expected_us
                                  << " us");
    CHECK(c.end_us - c.start_us == Approx(expected_us).epsilon(0.01));
  }
  // Full duplex: copies back run while copies out do (after the second
  // forward, the first microbatch's blocks come back while the second's go
  // out), which one engine for both directions would forbid.
  double overlap_us = 0;
  for (const Copy& a : copies)
    for (const Copy& b : copies)
      if (!a.back && b.back)
        overlap_us += std::max(0.0, std::min(a.end_us, b.end_us) - std::max(a.start_us, b.start_us));
  CHECK(overlap_us >= 0.5 * expected_us);
}

TEST_CASE("remat offload: needs kernel fidelity", "[workloads][train][remat][offload][bad-input]") {
  CHECK_THROWS_WITH(workloads::load_experiment(gpt("off-tile", "offload"), {"fidelity=tile"}),
                    Catch::Contains("workload.remat: remat: offload moves activations over the host link"));
}

}  // namespace test_offload
