// Sharded matmuls on a 4x4 torus, end to end, against the roofline of the
// local matmul plus the ring formulas of the collectives (docs/reference/formulas.md §1-2).
#include <catch2/catch.hpp>

#include <array>

#include "sim/error.h"
#include "workloads/experiment.h"

namespace test_sharded_matmul {

namespace {

// tpu-v5e.yaml: 4 MXUs x 128x128 x 2 FLOP x 1.5 GHz; HBM 8.1e11 B/s; links 4.5e10 B/s per direction.
constexpr double kPeak = 4 * 128 * 128 * 2 * 1.5e9;
constexpr double kHbm = 8.1e11;
constexpr double kLink = 4.5e10;
constexpr double kAxis = 4;  // chips along each mesh axis

nlohmann::json run(std::vector<std::string> sets) {
  auto exp =
      workloads::load_experiment(std::string(TPUSIM_SOURCE_DIR) + "/tests/data/experiments/sharded-4x4.yaml", sets);
  return exp.workload->run(exp, {}).report;
}

// Roofline of one chip's local matmul: compute or its minimum HBM traffic.
double local_matmul(double m, double k, double n) {
  return std::max(2 * m * k * n / kPeak, 2 * (m * k + k * n + m * n) / kHbm);
}

// Bidirectional ring on a wrapping axis of X chips: (X-1)/X of V over 2 links.
double all_gather(double v) { return v * (kAxis - 1) / kAxis / (2 * kLink); }
double all_reduce(double v) { return 2 * all_gather(v); }

void check_within_10_percent(const nlohmann::json& r, double expected) {
  const double t = r["result"]["step_time_s"];
  INFO("simulated " << t << " s, formula " << expected << " s, plan: " << r["result"]["sharding"]["case"]);
  CHECK(t >= 0.9 * expected);
  CHECK(t <= 1.1 * expected);
}

const double M = 16384, K = 16384, N = 16384;

}  // namespace

TEST_CASE("sharded matmul case 1: compatible shardings, no communication", "[workloads][sharded]") {
  auto r = run({});
  CHECK(r["collectives"].empty());
  CHECK(r["result"]["ici_bytes"] == 0);
  CHECK(r["per_chip"][0]["local_shapes"]["A"] == nlohmann::json{4096, 16384});
  CHECK(r["per_chip"][0]["local_shapes"]["C"] == nlohmann::json{4096, 4096});
  check_within_10_percent(r, local_matmul(M / 4, K, N / 4));
}

TEST_CASE("sharded matmul case 2: contracting dim of A sharded: all-gather first", "[workloads][sharded]") {
  auto r = run({"workload.a_spec=[x, y]", "workload.b_spec=[null, null]", "workload.out_spec=[x, null]"});
  REQUIRE(r["collectives"].size() == 1);
  CHECK(r["collectives"][0]["op"] == "all_gather");
  const double v = M / 4 * K * 2;  // the gathered A block of each chip, BF16
  CHECK(r["collectives"][0]["bytes"] == v);
  check_within_10_percent(r, all_gather(v) + local_matmul(M / 4, K, N));
}

TEST_CASE("sharded matmul case 3: both contracting dims sharded: matmul then all-reduce", "[workloads][sharded]") {
  auto r = run({"workload.a_spec=[null, x]", "workload.b_spec=[x, null]", "workload.out_spec=[null, null]"});
  REQUIRE(r["collectives"].size() == 1);
  CHECK(r["collectives"][0]["op"] == "all_reduce");
  const double v = M * N * 2;
  check_within_10_percent(r, local_matmul(M, K / 4, N) + all_reduce(v));

  auto rs = run({"workload.a_spec=[null, x]", "workload.b_spec=[x, null]", "workload.out_spec=[null, x]"});
  REQUIRE(rs["collectives"].size() == 1);
  CHECK(rs["collectives"][0]["op"] == "reduce_scatter");
  check_within_10_percent(rs, local_matmul(M, K / 4, N) + all_gather(v));
}

TEST_CASE("sharded matmul case 4: both non-contracting dims on one axis: gather one operand", "[workloads][sharded]") {
  auto r = run({"workload.a_spec=[x, null]", "workload.b_spec=[null, x]", "workload.out_spec=[x, null]"});
  REQUIRE(r["collectives"].size() == 1);
  CHECK(r["collectives"][0]["op"] == "all_gather");
  const double v = K * N * 2;  // all of B
  check_within_10_percent(r, all_gather(v) + local_matmul(M / 4, K, N));
}

TEST_CASE("collective matmul hides the all-gather on 8 chips", "[workloads][sharded][overlap]") {
  const std::string file = std::string(TPUSIM_SOURCE_DIR) + "/configs/experiments/sharded-matmul-v5e-2x4.yaml";
  auto plain_exp = workloads::load_experiment(file);
  auto plain = plain_exp.workload->run(plain_exp, {}).report["result"];
  auto cm_exp = workloads::load_experiment(file, {"workload.collective_matmul=true"});
  auto cm = cm_exp.workload->run(cm_exp, {}).report["result"];
  const double compute = cm["communication"]["compute_time_s"], comm = cm["communication"]["collective_time_s"];
  REQUIRE(compute > comm);  // the regime where overlap can hide everything
  CHECK(cm["communication"]["overlap_fraction"].get<double>() > 0.5);
  CHECK(plain["communication"]["overlap_fraction"].get<double>() == 0.0);
  CHECK(cm["step_time_s"].get<double>() < plain["step_time_s"].get<double>());
  // Without overlap the step is compute plus communication.
  const double p_compute = plain["communication"]["compute_time_s"],
               p_comm = plain["communication"]["collective_time_s"];
  CHECK(plain["step_time_s"].get<double>() == Approx(p_compute + p_comm).epsilon(0.02));
}

TEST_CASE("bad shardings exit with located messages", "[workloads][sharded][bad-input]") {
  auto load = [](std::vector<std::string> sets) {
    workloads::load_experiment(std::string(TPUSIM_SOURCE_DIR) + "/tests/data/experiments/sharded-4x4.yaml", sets);
  };
  CHECK_THROWS_WITH(load({"workload.m=1023"}),
                    Catch::Contains("A dimension 0 (m = 1023) is split over mesh axis 'x' (size 4)"));
  CHECK_THROWS_WITH(load({"workload.a_spec=[data, null]"}), Catch::Contains("unknown mesh axis 'data'"));
  CHECK_THROWS_WITH(load({"workload.b_spec=[y, y]"}), Catch::Contains("used twice in the spec of B"));
  CHECK_THROWS_WITH(load({"mesh={x: 4, y: 3}"}), Catch::Contains("mesh axes multiply to 12 chips but the pod has 16"));
}

TEST_CASE("functional sharded matmul: every chip's C shard equals the host GEMM", "[workloads][sharded][functional]") {
  // (a_spec, b_spec, out_spec): the four textbook cases, a reduce-scatter,
  // an output gather and a two-axis dimension.
  const std::vector<std::array<const char*, 3>> cases = {{"[x, null]", "[null, y]", "[x, y]"},
                                                         {"[x, y]", "[null, null]", "[x, null]"},
                                                         {"[null, x]", "[x, null]", "[null, null]"},
                                                         {"[null, x]", "[x, null]", "[null, x]"},
                                                         {"[x, null]", "[null, x]", "[x, null]"},
                                                         {"[y, x]", "[x, null]", "[null, null]"},
                                                         {"[[x, y], null]", "[null, null]", "[null, null]"}};
  for (const auto& c : cases)
    for (const char* cm : {"false", "true"}) {
      std::vector<std::string> sets = {"functional=true",
                                       "workload.m=64",
                                       "workload.k=128",
                                       "workload.n=64",
                                       std::string("workload.a_spec=") + c[0],
                                       std::string("workload.b_spec=") + c[1],
                                       std::string("workload.out_spec=") + c[2],
                                       std::string("workload.collective_matmul=") + cm};
      nlohmann::json r;
      try {
        r = run(sets);
      } catch (const sim::ConfigError& e) {
        // collective matmul needs exactly one gather; the rest must run
        REQUIRE(std::string(cm) == "true");
        CHECK(std::string(e.what()).find("collective matmul splits exactly one all-gather") != std::string::npos);
        continue;
      }
      INFO(c[0] << " " << c[1] << " -> " << c[2] << " collective_matmul " << cm);
      REQUIRE(r["result"]["functional"].is_object());
      CHECK(r["result"]["functional"]["matches_reference"] == true);
    }
}

TEST_CASE("functional sharded matmul with the PE engine on every MXU", "[workloads][sharded][functional]") {
  auto r = run({"functional=true", "fidelity=pe", "workload.m=32", "workload.k=64", "workload.n=32",
                "workload.a_spec=[x, y]", "workload.b_spec=[null, null]", "workload.out_spec=[x, null]",
                "workload.collective_matmul=true"});
  CHECK(r["result"]["functional"]["matches_reference"] == true);
}

TEST_CASE("sharded matmul in int8: one-byte operands gathered, int32 partial sums reduced, the local matmul at 2x",
          "[workloads][sharded][formats]") {
  // v5e int8 at twice the bf16 rate (docs/reference/tpu-specs.md#v5e.peak_int8_ops_per_chip);
  // A and B one byte an element, C and its partial sums int32 (MaxText's AQT
  // int8: fwd_accumulator_dtype int32), so the local roofline is
  // max(FLOPs / 2 peak, (m k + k n + 4 m n) / HBM).
  auto local_int8 = [](double m, double k, double n) {
    return std::max(2 * m * k * n / (2 * kPeak), (m * k + k * n + 4 * m * n) / kHbm);
  };
  // Case 2: A's contracting dimension gathered, at one byte an element.
  auto g = run(
      {"workload.dtype=int8", "workload.a_spec=[x, y]", "workload.b_spec=[null, null]", "workload.out_spec=[x, null]"});
  REQUIRE(g["collectives"].size() == 1);
  const double va = M / 4 * K;
  CHECK(g["collectives"][0]["bytes"] == va);
  check_within_10_percent(g, all_gather(va) + local_int8(M / 4, K, N));
  CHECK(g["result"]["memory"]["per_chip_bytes"] == M / 4 * K / 4 + K * N + 4 * (M / 4 * N));
  // Case 3: partial sums all-reduced as int32, twice bf16's bytes.
  auto r = run({"workload.dtype=int8", "workload.a_spec=[null, x]", "workload.b_spec=[x, null]",
                "workload.out_spec=[null, null]"});
  REQUIRE(r["collectives"].size() == 1);
  const double vc = M * N * 4;
  CHECK(r["collectives"][0]["bytes"] == vc);
  check_within_10_percent(r, local_int8(M, K / 4, N) + all_reduce(vc));
}

}  // namespace test_sharded_matmul
