#pragma once
// Least-squares fits of the two scaling laws to measured step times
// (docs/reference/formulas.md §6), for `tpusim sweep`.
//
// Speedups are measured against a baseline of N0 chips (the smallest chip
// count that ran; 1 when one chip fits), so both laws are written relative
// to N0. With N0 = 1 they are the textbook forms.
#include <optional>
#include <vector>

namespace sweep {

struct ScalingSample {
  double chips = 0;    // N
  double speedup = 0;  // measured: strong T(N0)/T(N); weak (N/N0) T(N0)/T(N)
};

// Amdahl (strong scaling, fixed total work): T(N) = T(1) ((1 - p) + p / N),
// so S(N) = T(N0)/T(N) = ((1 - p) + p/N0) / ((1 - p) + p/N).
double amdahl_speedup(double p, double chips, double baseline_chips = 1);

// Gustafson (weak scaling, work per chip fixed): with s the serial share of
// a scaled run's time, one chip would need s + (1 - s) N of it, so the
// scaled speedup is S(N) = s + (1 - s) N, and against N0 it is
// (s + (1 - s) N) / (s + (1 - s) N0).
double gustafson_speedup(double s, double chips, double baseline_chips = 1);

struct ScalingFit {
  double fraction = 0;  // Amdahl: parallel fraction p; Gustafson: serial fraction s; in [0, 1]
  double r2 = 0;        // 1 - SS_res / SS_tot of the speedups (all speedups equal: 1 if fitted exactly)
  int samples = 0;
};

// Minimises sum (S_i - model(N_i))^2 over the fraction in [0, 1]: a grid scan
// finds the basin, Brent's method (Boost.Math) polishes it. Needs samples at
// two or more distinct chip counts; otherwise nullopt.
std::optional<ScalingFit> fit_amdahl(const std::vector<ScalingSample>& samples, double baseline_chips);
std::optional<ScalingFit> fit_gustafson(const std::vector<ScalingSample>& samples, double baseline_chips);

// Chip count at which Amdahl's efficiency S(N) / (N / N0) falls to one half:
// N = 2 N0 + p / (1 - p). Infinite when p = 1.
double amdahl_half_efficiency_chips(double p, double baseline_chips);

}  // namespace sweep
