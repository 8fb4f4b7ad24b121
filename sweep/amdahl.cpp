#include "sweep/amdahl.h"

#include <boost/math/tools/minima.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <set>

namespace sweep {

namespace {

using Model = std::function<double(double fraction, double chips)>;

double sum_squared_residuals(const std::vector<ScalingSample>& samples, const Model& model, double f) {
  double s = 0;
  for (const auto& x : samples) {
    const double r = x.speedup - model(f, x.chips);
    s += r * r;
  }
  return s;
}

std::optional<ScalingFit> fit(const std::vector<ScalingSample>& samples, const Model& model) {
  std::set<double> distinct;
  for (const auto& x : samples) distinct.insert(x.chips);
  if (distinct.size() < 2) return std::nullopt;

  // The residual sum is smooth in the fraction but need not be convex over
  // all of [0, 1]; a scan picks the basin of the global minimum first.
  const int steps = 1000;
  int best = 0;
  double best_sse = std::numeric_limits<double>::infinity();
  for (int i = 0; i <= steps; ++i) {
    const double sse = sum_squared_residuals(samples, model, double(i) / steps);
    if (sse < best_sse) {
      best_sse = sse;
      best = i;
    }
  }
  const double lo = double(std::max(best - 1, 0)) / steps, hi = double(std::min(best + 1, steps)) / steps;
  auto objective = [&](double f) { return sum_squared_residuals(samples, model, f); };
  const auto [f, sse] =
      boost::math::tools::brent_find_minima(objective, lo, hi, std::numeric_limits<double>::digits / 2);
  ScalingFit out;
  out.fraction = f;
  out.samples = static_cast<int>(samples.size());
  double mean = 0;
  for (const auto& x : samples) mean += x.speedup;
  mean /= double(samples.size());
  double tot = 0;
  for (const auto& x : samples) tot += (x.speedup - mean) * (x.speedup - mean);
  // Every speedup equal (e.g. p = 0): R^2 is 1 when the fit is exact to rounding.
  out.r2 = tot > 0 ? 1.0 - sse / tot : (sse < 1e-12 * double(samples.size()) ? 1.0 : 0.0);
  return out;
}

}  // namespace

double amdahl_speedup(double p, double chips, double baseline_chips) {
  return ((1 - p) + p / baseline_chips) / ((1 - p) + p / chips);
}

double gustafson_speedup(double s, double chips, double baseline_chips) {
  return (s + (1 - s) * chips) / (s + (1 - s) * baseline_chips);
}

std::optional<ScalingFit> fit_amdahl(const std::vector<ScalingSample>& samples, double baseline_chips) {
  return fit(samples, [baseline_chips](double p, double n) { return amdahl_speedup(p, n, baseline_chips); });
}

std::optional<ScalingFit> fit_gustafson(const std::vector<ScalingSample>& samples, double baseline_chips) {
  return fit(samples, [baseline_chips](double s, double n) { return gustafson_speedup(s, n, baseline_chips); });
}

double amdahl_half_efficiency_chips(double p, double baseline_chips) {
  // S(N) N0 / N = 1/2 with S from amdahl_speedup, solved for N.
  if (p >= 1) return std::numeric_limits<double>::infinity();
  return 2 * baseline_chips + p / (1 - p);
}

}  // namespace sweep
