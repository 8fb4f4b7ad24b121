// The scaling-law fits against data made from the laws themselves, written
// out here from docs/reference/formulas.md §6 (Amdahl: S = 1 / ((1 - p) + p / N);
// Gustafson: S = s + (1 - s) N), not through the code under test.
#include <catch2/catch.hpp>

#include <cmath>

#include "sweep/amdahl.h"

namespace test_amdahl_fit {

using sweep::ScalingSample;

namespace {

// Normalised time of Amdahl's job on N chips: (1 - p) + p / N.
double amdahl_time(double p, double n) { return (1 - p) + p / n; }

std::vector<ScalingSample> amdahl_samples(double p, const std::vector<double>& chips, double n0) {
  std::vector<ScalingSample> s;
  for (double n : chips) s.push_back({n, amdahl_time(p, n0) / amdahl_time(p, n)});
  return s;
}

}  // namespace

TEST_CASE("Amdahl fit recovers p from exact speedups", "[workloads][amdahl]") {
  const std::vector<double> chips = {1, 2, 4, 8, 16, 32, 64, 128};
  for (double p : {0.0, 0.5, 0.9, 0.95, 0.99, 1.0}) {
    auto fit = sweep::fit_amdahl(amdahl_samples(p, chips, 1), 1);
    REQUIRE(fit);
    INFO("p = " << p);
    CHECK(fit->fraction == Approx(p).margin(1e-6));
    CHECK(fit->r2 == Approx(1.0).margin(1e-9));
    CHECK(fit->samples == 8);
  }
}

TEST_CASE("Amdahl textbook numbers", "[workloads][amdahl]") {
  // p = 0.9: 1 / (0.1 + 0.009) = 9.174 at 100 chips; at most 1 / 0.1 = 10.
  CHECK(sweep::amdahl_speedup(0.9, 100) == Approx(1 / 0.109));
  CHECK(sweep::amdahl_speedup(0.99, 1e12) == Approx(100).epsilon(1e-6));
  // Efficiency S(N) / N is one half at N = 2 + p / (1 - p) = 11 for p = 0.9.
  const double n = sweep::amdahl_half_efficiency_chips(0.9, 1);
  CHECK(n == Approx(11));
  CHECK((1 / amdahl_time(0.9, n)) / n == Approx(0.5));
  CHECK(std::isinf(sweep::amdahl_half_efficiency_chips(1.0, 1)));
}

TEST_CASE("Amdahl fit against a baseline that is not one chip", "[workloads][amdahl]") {
  // One chip does not fit; speedups are T(8) / T(N).
  const double p = 0.97;
  auto fit = sweep::fit_amdahl(amdahl_samples(p, {8, 16, 32, 64, 128, 256}, 8), 8);
  REQUIRE(fit);
  CHECK(fit->fraction == Approx(p).margin(1e-6));
  // Half efficiency relative to 8 chips, checked from the time formula.
  const double n = sweep::amdahl_half_efficiency_chips(p, 8);
  CHECK((amdahl_time(p, 8) / amdahl_time(p, n)) / (n / 8) == Approx(0.5));
}

TEST_CASE("Amdahl fit of noisy speedups stays close and says R^2 < 1", "[workloads][amdahl]") {
  auto s = amdahl_samples(0.9, {1, 2, 4, 8, 16, 32, 64}, 1);
  const double wobble[] = {0, 0.02, -0.015, 0.01, -0.02, 0.015, -0.01};
  for (std::size_t i = 0; i < s.size(); ++i) s[i].speedup *= 1 + wobble[i];
  auto fit = sweep::fit_amdahl(s, 1);
  REQUIRE(fit);
  CHECK(fit->fraction == Approx(0.9).margin(0.01));
  CHECK(fit->r2 < 1.0);
  CHECK(fit->r2 > 0.99);
}

TEST_CASE("no fit from a single chip count", "[workloads][amdahl]") {
  CHECK_FALSE(sweep::fit_amdahl({{4, 1.0}}, 4));
  CHECK_FALSE(sweep::fit_amdahl({{4, 1.0}, {4, 1.0}}, 4));
  CHECK_FALSE(sweep::fit_gustafson({}, 1));
}

TEST_CASE("Gustafson fit recovers the serial share of scaled runs", "[workloads][amdahl]") {
  for (double s : {0.0, 0.05, 0.3}) {
    std::vector<ScalingSample> samples;
    for (double n : {1.0, 2.0, 4.0, 16.0, 64.0}) samples.push_back({n, s + (1 - s) * n});
    auto fit = sweep::fit_gustafson(samples, 1);
    REQUIRE(fit);
    CHECK(fit->fraction == Approx(s).margin(1e-6));
    CHECK(fit->r2 == Approx(1.0).margin(1e-9));
  }
  // Against a 4-chip baseline: (s + (1 - s) N) / (s + (1 - s) 4).
  std::vector<ScalingSample> samples;
  for (double n : {4.0, 8.0, 32.0}) samples.push_back({n, (0.1 + 0.9 * n) / (0.1 + 0.9 * 4)});
  auto fit = sweep::fit_gustafson(samples, 4);
  REQUIRE(fit);
  CHECK(fit->fraction == Approx(0.1).margin(1e-6));
}

}  // namespace test_amdahl_fit
