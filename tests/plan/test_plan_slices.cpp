// tpusim plan over several slices (docs/plan.md, "Several slices"): each
// mesh of one slice is a family per parallelism across the slices (data or
// fsdp, MaxText's dcn_data_parallelism or dcn_fsdp_parallelism), the batch
// splits over the slices too, and each candidate is the MaxText experiment
// that says so. Compared with a hand count of the meshes of a 2x2 slice.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>

#include "plan/candidates.h"
#include "plan/estimate.h"
#include "plan/experiment_text.h"
#include "plan/slice.h"
#include "plan/spec.h"
#include "sim/error.h"

namespace test_plan_slices {

namespace {

// Qwen3 0.6B (configs/maxtext/models/qwen3-0.6b.yml) on two 2x2 v5e slices,
// data and fsdp only, 8 sequences, 1 or 2 microbatches.
const std::string kPlan =
    "model: qwen3-0.6b\nseq_len: 1024\nchip: tpu-v5e\nchips: 4\nslices: 2\nglobal_batch: 8\n"
    "axes: [data, fsdp]\nremat: [full]\nmicrobatches: [1, 2]\n";

std::string source_path(const std::string& rel) { return std::string(TPUSIM_SOURCE_DIR) + "/" + rel; }

}  // namespace

TEST_CASE("plan slices: each mesh of a slice takes data or fsdp across the slices", "[plan]") {
  const plan::PlanSpec spec = plan::load_plan_text(kPlan, source_path("tests/data/plan/slices.yaml"));
  REQUIRE(spec.slices == 2);
  REQUIRE(spec.total_chips() == 8);
  const plan::Slice slice = plan::plan_slice(spec);
  CHECK(slice.shape == std::vector<std::uint32_t>{2, 2});
  CHECK(slice.pod_yaml.rfind("{slices: 2, slice: {topology: torus2d", 0) == 0);
  const plan::CandidateSet set = plan::enumerate_candidates(spec, slice.shape, slice.alike_wraparound, false, false);
  // By hand: a 2x2 slice's axes run as [4] or [2 | 2]; data and fsdp give
  // data 4, fsdp 4 and (the axes being alike, one of the two orders)
  // data 2 x fsdp 2: three meshes, each with data or fsdp across the two
  // slices, six families. Every one splits the batch 4 x 2 = 8 ways, so 8
  // sequences take 1 microbatch and not 2: one candidate each.
  std::set<std::string> labels;
  for (const auto& f : set.families) labels.insert(f.label());
  CHECK(labels == std::set<std::string>{"data 4 x dcn data 2", "data 4 x dcn fsdp 2", "fsdp 4 x dcn data 2",
                                        "fsdp 4 x dcn fsdp 2", "data 2 x fsdp 2 x dcn data 2",
                                        "data 2 x fsdp 2 x dcn fsdp 2"});
  REQUIRE(set.candidates.size() == 6);
  for (const auto& c : set.candidates) CHECK(c.microbatches == 1);

  // fsdp 4 x dcn fsdp 2 as an experiment: MaxText's keys put fsdp over all
  // 8 chips (ici 4 x dcn 2), one sequence per chip, and the step it loads
  // as shards the batch 8 ways over both mesh axes.
  const auto it = std::find_if(set.families.begin(), set.families.end(),
                               [](const plan::Family& f) { return f.label() == "fsdp 4 x dcn fsdp 2"; });
  REQUIRE(it != set.families.end());
  const std::size_t fi = std::size_t(it - set.families.begin());
  const plan::Candidate& c = *std::find_if(set.candidates.begin(), set.candidates.end(),
                                           [&](const plan::Candidate& k) { return k.family == fi; });
  const std::string text = plan::experiment_text(spec, slice, "tpu-v5e", *it, c);
  INFO(text);
  CHECK(text.find("ici_fsdp_parallelism: 4") != std::string::npos);
  CHECK(text.find("dcn_fsdp_parallelism: 2") != std::string::npos);
  CHECK(text.find("dcn_data_parallelism: 1") != std::string::npos);
  CHECK(text.find("per_device_batch_size: 1\n") != std::string::npos);
  const std::string path = source_path("tests/data/plan/c.yaml");
  const plan::TrainStep step = plan::train_step_of(text, path, {});
  CHECK(step.exp.pod.slices == 2);
  CHECK(step.spec.global_batch == 8);
  CHECK(step.spec.parallelism.fsdp.degree == 8);
  CHECK(step.spec.parallelism.data.degree == 1);
  CHECK(plan::estimate_candidate(text, path, 1.0).status == plan::Estimate::Status::fits);
}

TEST_CASE("plan slices: a pod of slices is read, and slices need a MaxText model", "[plan]") {
  const std::string path = source_path("tests/data/plan/slices.yaml");
  const plan::PlanSpec spec = plan::load_plan_text(
      "model: qwen3-0.6b\nseq_len: 1024\nchip: tpu-v5e\nglobal_batch: 8\n"
      "pod: {slices: 2, slice: {topology: torus2d, shape: [2, 2], wraparound: false}}\n",
      path);
  CHECK(spec.chips == 4);
  CHECK(spec.slices == 2);
  CHECK(plan::plan_slice(spec).pod_yaml == "{slices: 2, slice: {topology: torus2d, shape: [2, 2], wraparound: false}}");
  const std::string mapping =
      "model: {type: transformer, layers: 2, d_model: 256, heads: 4, head_dim: 64, d_ff: 1024, vocab: 1000, seq_len: "
      "128}\n"
      "chip: tpu-v5e\nchips: 4\nslices: 2\nglobal_batch: 8\n";
  try {
    plan::load_plan_text(mapping, path);
    FAIL("a tpusim model over two slices was accepted");
  } catch (const sim::ConfigError& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find("slices.yaml:4:9: slices:") != std::string::npos);
    CHECK(what.find("need a MaxText model") != std::string::npos);
  }
}

}  // namespace test_plan_slices
