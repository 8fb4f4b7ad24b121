#include "app/run_experiment.h"

#include "app/cli.h"
#include "plan/fit_advice.h"
#include "sim/error.h"
#include "sim/input_file.h"
#include "sim/output.h"
#include "workloads/report.h"
#include "workloads/train/memory.h"

namespace app {

namespace {

// The workload's run; a training step that does not fit in HBM is told
// what to change (plan/fit_advice.h), the planner's count over its own file
// and overrides. Advice that cannot be made (an experiment given as text
// with no file behind it) leaves the message as it was.
workloads::RunOutput simulate(const workloads::Experiment& exp, const workloads::RunOptions& ro) {
  try {
    return exp.workload->run(exp, ro);
  } catch (const workloads::DoesNotFitInHbm& f) {
    std::string advice;
    try {
      advice = plan::describe(plan::fit_advice(sim::read_config_text(exp.config_path), exp.config_path, exp.overrides));
    } catch (const std::exception&) {
      throw f;
    }
    throw sim::SimFailure(std::string(f.what()) + ". " + advice, f.numbers());
  }
}

}  // namespace

// The report as written: workloads::report_text refuses a non-finite number.
std::string report_text(const workloads::RunOutput& out, workloads::ReportDetail detail) {
  return workloads::report_text(out.report, detail);
}

workloads::RunOutput run_experiment(const workloads::Experiment& exp, workloads::RunOptions ro,
                                    const std::string& flag) {
  if (ro.out_dir.empty()) return simulate(exp, ro);
  const std::vector<std::string> files{"report.json", "trace.json", "mxu.vcd"};
  prepare_output_dir(ro.out_dir, files, flag);
  // What a killed run left here; then this run's outputs, replaced as one
  // set once it has succeeded (a failed run leaves the earlier set as it was).
  sim::remove_stale_temps(ro.out_dir);
  sim::OutputSet outputs(ro.out_dir, files);
  if (ro.vcd) ro.vcd_path = outputs.stage("mxu.vcd", ".vcd");
  workloads::RunOutput out = simulate(exp, ro);
  if (!out.trace_json.empty()) outputs.write("trace.json", out.trace_json);
  // The full report is not needed past here: given up, not copied (a pod's
  // stats), and freed before the text is read back.
  const std::string report = workloads::report_text(std::move(out.report), ro.report_detail);
  outputs.write("report.json", report);
  // The caller (the run page, Python) sees what report.json says, at its detail.
  out.report = nlohmann::json::parse(report);
  outputs.commit();
  return out;
}

}  // namespace app
