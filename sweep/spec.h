#pragma once
// A sweep file (`tpusim sweep SWEEP.yaml`, docs/sweeps.md): a base
// experiment, the key paths to vary (the same paths `--set` takes), how
// their value lists combine (product or zip), and which scaling law the
// step times are read against.
#include <string>
#include <vector>

#include "sim/error.h"
#include "sim/params.h"

namespace sweep {

// strong: fixed total work (Amdahl); weak: fixed work per chip (Gustafson);
// none: no speedups, just the table.
enum class Scaling { strong, weak, none };
// product: every combination, the first axis varying slowest; zip: the i-th
// values of every axis together.
enum class Combine { product, zip };

const sim::EnumNames<Scaling>& scaling_names();  // the YAML spellings: strong, weak, none
const sim::EnumNames<Combine>& combine_names();  // product, zip
const char* to_string(Scaling s);
const char* to_string(Combine c);

struct SweepValue {
  std::string yaml;           // the value as one-line YAML, exactly what `--set key=` receives
  sim::SourceLocation where;  // in the sweep file
};

struct SweepAxis {
  std::string key;  // experiment key path, e.g. pod.shape
  std::vector<SweepValue> values;
};

struct FixedOverride {
  std::string key;
  SweepValue value;
};

// A published figure the sweep is read against (`published:`): which
// report figure, and its measured value at some values of the swept key.
enum class PublishedMetric { mfu, step_time_s };
const sim::EnumNames<PublishedMetric>& published_metric_names();  // mfu, step_time_s
const char* to_string(PublishedMetric m);
// Where the metric is in a point's report.json.
const char* report_pointer(PublishedMetric m);

struct PublishedPoint {
  std::string at;  // the swept key's value, one-line YAML as in SweepValue::yaml
  double value = 0;
  sim::SourceLocation where;
};

struct PublishedSeries {
  PublishedMetric metric = PublishedMetric::mfu;
  std::string source;                  // where the figures were published
  std::vector<PublishedPoint> points;  // empty: no `published:` in the file
};

// key = value x the point's chip count (weak scaling: workload.global_batch).
struct PerChipOverride {
  std::string key;
  double per_chip = 0;
  sim::SourceLocation where;
};

struct SweepSpec {
  std::string name;
  std::string description;
  std::string path;             // the sweep file as given
  std::string experiment_path;  // the base experiment; relative to the sweep file's folder when relative there
  Scaling scaling = Scaling::strong;
  Combine combine = Combine::product;
  std::vector<FixedOverride> fixed;  // `set:`, applied to every point
  std::vector<PerChipOverride> per_chip;
  std::vector<SweepAxis> axes;
  PublishedSeries published;
  bool plot = true;
  std::size_t point_count() const;
};

// Every key of a sweep file (tpusim explain sweep).
const sim::ParamTable<SweepSpec>& sweep_params();

// Loads and checks a sweep file; throws sim::ConfigError located in it.
SweepSpec load_sweep_spec(const std::string& path);

}  // namespace sweep
