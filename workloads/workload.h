#pragma once
// A workload kind (matmul, collective, ...): loads its own `workload:`
// mapping and runs against an experiment, filling the report.
#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/trace.h"
#include "sim/yaml_node.h"

namespace workloads {

struct Experiment;

// What a run hands back: report.json's `result` and the extra top-level
// sections (collectives, per_chip, ...), and the lines of the text table.
struct RunOutput {
  nlohmann::json report;   // full report.json object
  std::string table;       // human-readable summary for stdout
  std::string trace_json;  // Perfetto trace when requested, else empty
};

// What report.json holds of the collectives and chips: collective_summary
// alone and, past 64 chips, per_chip's chip 0 and outliers beside
// per_chip_summary (the default), or also every collective and every chip
// (`--report-detail full`). RunOutput's report has everything; report_text
// (report.h) writes what this says.
enum class ReportDetail { summary, full };

struct RunOptions {
  sim::TraceRequest trace;  // trace.json, and which chips it writes
  ReportDetail report_detail = ReportDetail::summary;
  bool vcd = false;
  std::string vcd_path;  // where mxu.vcd is written (a temporary name of the run's output set)
  std::string out_dir;
};

class Workload {
 public:
  virtual ~Workload() = default;
  virtual std::string kind() const = 0;
  virtual RunOutput run(const Experiment& exp, const RunOptions& opts) const = 0;
};

struct WorkloadKind {
  std::string name;
  std::string description;
  // Validates the `workload:` mapping against the (already loaded) rest of
  // the experiment; throws sim::ConfigError.
  std::function<std::unique_ptr<Workload>(const sim::YamlNode&, const Experiment&)> load;
  // Its keys, as sim::ParamTable::describe() gives them (tpusim explain KIND).
  std::function<nlohmann::json()> keys;
};

// Every workload kind, in the order documented in docs/interface.md.
const std::vector<WorkloadKind>& workload_kinds();

}  // namespace workloads
