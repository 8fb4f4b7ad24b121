// End-to-end matmul runs on the shipped chip configs, checked against the
// roofline: compute-bound at peak, memory-bound at HBM bandwidth, and the
// crossover where the ridge intensity says it is.
#include <catch2/catch.hpp>

#include "nominal_chip.h"
#include "workloads/experiment.h"
#include "workloads/matmul_crossover.h"

namespace test_matmul_roofline {

using workloads::load_experiment;

namespace {

nlohmann::json run(const std::string& file, std::vector<std::string> sets = {}) {
  if (file.find("-v4") != std::string::npos) sets.insert(sets.begin(), nominal_chip::set("tpu-v4"));
  auto exp = load_experiment(std::string(TPUSIM_SOURCE_DIR) + "/configs/experiments/" + file, sets);
  return exp.workload->run(exp, {}).report;
}

std::string dims(std::uint64_t m, std::uint64_t k, std::uint64_t n) {
  return std::to_string(m) + "," + std::to_string(k) + "," + std::to_string(n);
}

}  // namespace

TEST_CASE("v4 8192^3 matmul is compute-bound at >= 90% of peak", "[workloads][matmul][roofline]") {
  auto r = run("matmul-v4.yaml")["result"];
  const double peak = 2.0 * 8 * 128 * 128 * 1.05e9;  // 2 FLOP/MAC x 8 MXUs x 128x128 x clock (tpu-v4.yaml)
  CHECK(r["roofline"]["bound"] == "compute");
  CHECK(r["roofline"]["peak_flops_per_s"].get<double>() == Approx(peak));
  CHECK(r["achieved_flops_per_s"].get<double>() >= 0.9 * peak);
  CHECK(r["achieved_flops_per_s"].get<double>() <= peak);
  CHECK(r["flops"].get<double>() == Approx(2.0 * 8192.0 * 8192 * 8192));
}

TEST_CASE("v4 m=8 matmul is memory-bound within 10% of HBM bytes / bandwidth", "[workloads][matmul][roofline]") {
  auto r = run("matvec-v4.yaml")["result"];
  CHECK(r["roofline"]["bound"] == "memory");
  const double bytes = r["hbm_bytes"].get<double>();
  CHECK(bytes >= 2.0 * 8192 * 8192);    // B is read at least once
  const double t_mem = bytes / 1.2e12;  // tpu-v4.yaml hbm.bandwidth
  CHECK(r["step_time_s"].get<double>() >= t_mem);
  CHECK(r["step_time_s"].get<double>() <= 1.10 * t_mem);
}

TEST_CASE("v5e k=n=8192: memory/compute crossover within 15% of the ridge", "[workloads][matmul][roofline]") {
  const double ridge = 4 * 2.0 * 128 * 128 * 1.5e9 / 8.1e11;  // peak / HBM bandwidth of tpu-v5e.yaml, ~243
  const double crossover = testing_workloads::crossover_intensity(
      [](std::uint64_t m) { return run("matmul-v5e.yaml", {"workload.m=" + std::to_string(m)})["result"]; }, 8, 4096);
  INFO("crossover at intensity " << crossover << ", ridge " << ridge);
  CHECK(crossover >= 0.85 * ridge);
  CHECK(crossover <= 1.15 * ridge);
}

TEST_CASE("HBM bytes counted by the HBM equal the blocking's traffic formula", "[workloads][matmul]") {
  for (auto [m, k, n] : std::vector<std::array<std::uint64_t, 3>>{{300, 200, 500}, {8, 1000, 129}, {1, 1, 1}}) {
    auto report = run("matmul-v4.yaml", {"workload.m=" + std::to_string(m), "workload.k=" + std::to_string(k),
                                         "workload.n=" + std::to_string(n)});
    auto kern = report["result"]["kernel"];
    const std::uint64_t bm = kern["bm"], bn = kern["bn"];
    // Each output block reads its row of A blocks and its column of B blocks once; C is written once.
    const double expect =
        2.0 * (double(m * k) * double((n + bn - 1) / bn) + double(k * n) * double((m + bm - 1) / bm)) +
        2.0 * double(m * n);
    INFO(dims(m, k, n));
    CHECK(report["result"]["hbm_bytes"].get<double>() == expect);
  }
}

TEST_CASE("functional matmul on the teaching chip matches the host GEMM, tile and pe alike",
          "[workloads][matmul][functional]") {
  nlohmann::json tile, pe;
  for (const char* fid : {"tile", "pe"}) {
    auto exp = load_experiment(
        std::string(TPUSIM_SOURCE_DIR) + "/configs/experiments/matmul-teach.yaml",
        {std::string("fidelity=") + fid, "functional=true", "workload.m=37", "workload.k=70", "workload.n=21"});
    auto r = exp.workload->run(exp, {}).report["result"];
    INFO(fid);
    REQUIRE(r["functional"].is_object());
    CHECK(r["functional"]["matches_reference"] == true);
    (std::string(fid) == "tile" ? tile : pe) = r;
  }
  // The PE engine is the ground truth for timing: the closed form must agree exactly.
  CHECK(tile["cycles"] == pe["cycles"]);
  CHECK(tile["functional"]["max_abs_error"] == pe["functional"]["max_abs_error"]);
}

TEST_CASE("the same experiment gives the same report", "[workloads][determinism]") {
  auto a = run("matmul-v5e.yaml", {"workload.m=200"});
  auto b = run("matmul-v5e.yaml", {"workload.m=200"});
  a.erase("simulator");
  b.erase("simulator");
  CHECK(a.dump() == b.dump());
}

}  // namespace test_matmul_roofline
