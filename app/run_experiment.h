#pragma once
// One experiment run as `tpusim run` runs it, for every caller: the CLI's
// run command and the Python module (python/) call this, so there is one
// copy of what a run does and writes.
#include <string>

#include "workloads/experiment.h"
#include "workloads/workload.h"

namespace app {

// report.json's text: the one serialization both the CLI and Python give,
// with what `detail` keeps of the collectives.
std::string report_text(const workloads::RunOutput& out, workloads::ReportDetail detail);

// Simulates `exp`. With `ro.out_dir` set, first makes the folder ready
// (prepare_output_dir; `flag` names it in errors), then writes report.json
// (and trace.json, mxu.vcd when asked) there as one set, replaced only once
// the run has succeeded, and the returned report is report.json's, at
// `ro.report_detail`. With `ro.out_dir` empty, nothing is written and the
// report has every section (report_text gives it at a detail).
// Throws sim::ConfigError (exit 2) and sim::SimFailure (exit 3).
workloads::RunOutput run_experiment(const workloads::Experiment& exp, workloads::RunOptions ro,
                                    const std::string& flag = "--out");

}  // namespace app
