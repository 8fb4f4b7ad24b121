// The validation group a run carries (workloads/validation.h): for shipped
// experiments, the group picked from a small fixture summary against the
// group chosen by hand (kind of what ran, chip generation; "none" where no
// measured case is like the run), the words the terminal prints, and a
// missing or broken summary degrading to "none" with a note.
#include <catch2/catch.hpp>

#include <string>

#include "workloads/experiment.h"
#include "workloads/validation.h"

namespace test_validation_group {

using workloads::ValidationSummary;

namespace {

// Five groups, as scripts/validate writes them (validation/summary.json).
const char* kFixture = R"({"schema": "tpusim.validation-summary/1", "groups": [
  {"group": "collective/v5e", "kind": "collective", "generation": "v5e", "cases": 10,
   "median_abs_error": 0.09, "signed_mean_error": 0.03},
  {"group": "matmul/v5e", "kind": "matmul", "generation": "v5e", "cases": 9,
   "median_abs_error": 0.08, "signed_mean_error": -0.2},
  {"group": "train/v4", "kind": "train", "generation": "v4", "cases": 6,
   "median_abs_error": 0.22, "signed_mean_error": -0.22},
  {"group": "train/v5e", "kind": "train", "generation": "v5e", "cases": 24,
   "median_abs_error": 0.04, "signed_mean_error": -0.02},
  {"group": "train/v6e", "kind": "train", "generation": "v6e", "cases": 14,
   "median_abs_error": 0.2, "signed_mean_error": -0.23}]})";

std::string picked(const ValidationSummary& s, const std::string& experiment) {
  const workloads::Experiment exp =
      workloads::load_experiment(std::string(TPUSIM_SOURCE_DIR) + "/configs/experiments/" + experiment);
  return workloads::pick_validation(s, exp.workload->kind(), exp.chip.name).group;
}

}  // namespace

TEST_CASE("validation group: shipped experiments get the group chosen by hand", "[workloads][validation]") {
  const ValidationSummary s = workloads::parse_validation_summary(kFixture);
  REQUIRE(s.problem.empty());
  REQUIRE(s.groups.size() == 5);
  CHECK(picked(s, "train-maxtext-16b-v5e-256.yaml") == "train/v5e");
  CHECK(picked(s, "train-gpt3-175b-v4-1024.yaml") == "train/v4");
  CHECK(picked(s, "maxtext-llama3.1-70b-v6e-64.yaml") == "train/v6e");  // kind: maxtext is a training step
  CHECK(picked(s, "matmul-v5e.yaml") == "matmul/v5e");
  CHECK(picked(s, "allgather-ring-v5e-16.yaml") == "collective/v5e");
  // Nothing in the fixture is like these: a v4 matmul, serving, a sharded matmul.
  CHECK(picked(s, "matmul-v4.yaml") == "none");
  CHECK(picked(s, "serve-llama3-70b-v5e-8.yaml") == "none");
  CHECK(picked(s, "sharded-matmul-v5e-2x4.yaml") == "none");
}

TEST_CASE("validation group: the terminal's words", "[workloads][validation]") {
  const ValidationSummary s = workloads::parse_validation_summary(kFixture);
  const workloads::Validation v = workloads::pick_validation(s, "train", "tpu-v5e");
  CHECK(v.cases == 24);
  REQUIRE(v.median_abs_error);
  CHECK(*v.median_abs_error == Approx(0.04));
  REQUIRE(v.signed_mean_error);
  CHECK(*v.signed_mean_error == Approx(-0.02));
  CHECK(v.note == "validated on 24 measured v5e training steps: median error 4%, on average 2% optimistic");
  CHECK(workloads::pick_validation(s, "collective", "tpu-v5e").note ==
        "validated on 10 measured v5e collectives: median error 9%, on average 3% pessimistic");
  const workloads::Validation none = workloads::pick_validation(s, "conv", "tpu-v5e");
  CHECK(none.group == "none");
  CHECK(none.cases == 0);
  CHECK(!none.median_abs_error);
  CHECK(none.note == "not validated: no measured conv run is among the validation cases");
  // Serving has validation cases (group inference), none of them in this fixture.
  CHECK(workloads::pick_validation(s, "inference", "tpu-v5e").note ==
        "not validated: no measured v5e serving runs among the validation cases");
  CHECK(workloads::pick_validation(s, "matmul", "tpu-v4").note ==
        "not validated: no measured v4 matmuls among the validation cases");
}

TEST_CASE("validation group: a missing or broken summary gives none with a note, never an error",
          "[workloads][validation]") {
  for (const char* text : {"", "{not json", "[1, 2]", R"({"groups": [{"group": "train/v5e", "kind": "train"}]})"}) {
    INFO("summary text: " << text);
    const ValidationSummary s = workloads::parse_validation_summary(text);
    CHECK(s.groups.empty());
    CHECK(!s.problem.empty());
    const workloads::Validation v = workloads::pick_validation(s, "train", "tpu-v5e");
    CHECK(v.group == "none");
    CHECK(v.note.rfind("not validated: ", 0) == 0);
  }
}

TEST_CASE("validation group: the built-in summary has every v5e MaxText training case", "[workloads][validation]") {
  // validation/cases/train-maxtext-v5e-*.yaml: 16B, 32B, 64B and 128B on 1, 2, 4,
  // 8, 16 and 32 slices, 24 cases counted by hand, all run faithfully.
  const ValidationSummary& s = workloads::built_in_validation_summary();
  INFO(s.problem);
  REQUIRE(s.problem.empty());
  const workloads::Validation v = workloads::pick_validation(s, "train", "tpu-v5e");
  CHECK(v.group == "train/v5e");
  CHECK(v.cases == 24);
}

}  // namespace test_validation_group
