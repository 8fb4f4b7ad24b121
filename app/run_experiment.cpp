#include "app/run_experiment.h"

#include "app/cli.h"
#include "sim/output.h"
#include "workloads/report.h"

namespace app {

// The report as written: workloads::report_text refuses a non-finite number.
std::string report_text(const workloads::RunOutput& out) { return workloads::report_text(out.report); }

workloads::RunOutput run_experiment(const workloads::Experiment& exp, workloads::RunOptions ro,
                                    const std::string& flag) {
  if (ro.out_dir.empty()) return exp.workload->run(exp, ro);
  const std::vector<std::string> files{"report.json", "trace.json", "mxu.vcd"};
  prepare_output_dir(ro.out_dir, files, flag);
  // What a killed run left here; then this run's outputs, replaced as one
  // set once it has succeeded (a failed run leaves the earlier set as it was).
  sim::remove_stale_temps(ro.out_dir);
  sim::OutputSet outputs(ro.out_dir, files);
  if (ro.vcd) ro.vcd_path = outputs.stage("mxu.vcd", ".vcd");
  workloads::RunOutput out = exp.workload->run(exp, ro);
  if (!out.trace_json.empty()) outputs.write("trace.json", out.trace_json);
  outputs.write("report.json", report_text(out));
  outputs.commit();
  return out;
}

}  // namespace app
