// The order of one instant is the simulator's (sim/calendar.h), not the
// order the pod's chips were built in: the same experiment gives the same
// report, every field but the host's, whether the chips are elaborated from
// the first or from the last. With SystemC's own order (each chip's timed
// notifications and its sequencer's start at time 0 in the kernel's heap
// and process lists) these reports moved: ch12-moe's collectives' exposed
// time and its events, train-dp-v5e's events, and
// maxtext-llama3.1-70b-v6e-64's chips' hidden communication time by 4%
// (docs/hardening.md, "Determinism").
#include <catch2/catch.hpp>

#include <string>

#include "host_fields.h"
#include "workloads/experiment.h"

namespace test_same_instant {

namespace {

nlohmann::json report(const std::string& config, bool backwards) {
  auto exp = workloads::load_experiment(std::string(TPUSIM_SOURCE_DIR) + "/" + config, {});
  exp.elaborate_backwards = backwards;
  nlohmann::json r = exp.workload->run(exp, {}).report;
  for (const char* field : testing_cli::kHostFields) r["simulator"].erase(field);
  return r;
}

}  // namespace

TEST_CASE("same instant: a pod's report does not depend on the order its chips were built in",
          "[workloads][determinism]") {
  const char* configs[] = {"configs/tutorial/ch12-moe.yaml", "configs/experiments/train-dp-v5e.yaml",
                           "configs/experiments/maxtext-llama3.1-70b-v6e-64.yaml"};
  for (const char* config : configs) {
    INFO(config);
    const nlohmann::json forward = report(config, false), backward = report(config, true);
    CHECK(forward["simulator"]["chips_simulated"].get<int>() > 1);
    // Whole reports: a failure prints the first key that differs.
    CHECK(nlohmann::json::diff(forward, backward).dump() == "[]");
  }
}

}  // namespace test_same_instant
