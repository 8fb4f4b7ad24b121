// tpusim plan over part of a physical axis (docs/plan.md, "Candidates"):
// with max_axis_splits, the meshes that cut a physical axis into factors
// join the search, laid as JAX's mesh_utils lays them (the busiest
// parallelism on the inner factor), and each becomes an experiment that
// loads with that layout. Compared with a hand count of the splits of a
// 16x16 slice.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>

#include "plan/candidates.h"
#include "plan/estimate.h"
#include "plan/experiment_text.h"
#include "plan/slice.h"
#include "plan/spec.h"

namespace test_plan_split_axes {

namespace {

std::string source_path(const std::string& rel) { return std::string(TPUSIM_SOURCE_DIR) + "/" + rel; }

// Llama 3.1 8B on a v6e-256 (16x16) slice, data, fsdp and tensor only; 256
// sequences split over any replicas of these meshes (each a power of 2).
plan::PlanSpec spec_with(std::uint32_t splits) {
  return plan::load_plan_text(
      "model: llama3.1-8b\nseq_len: 8192\nchip: tpu-v6e\nchips: 256\nglobal_batch: 256\n"
      "axes: [data, fsdp, tensor]\nremat: [full]\nmicrobatches: [1]\nmax_axis_splits: " +
          std::to_string(splits) + "\n",
      source_path("tests/data/plan/split.yaml"));
}

std::set<std::string> labels(const plan::CandidateSet& set) {
  std::set<std::string> out;
  for (const auto& f : set.families) out.insert(f.label());
  return out;
}

}  // namespace

TEST_CASE("plan split axes: the meshes over part of a 16-chip axis, counted by hand", "[plan]") {
  const plan::Slice slice = plan::plan_slice(spec_with(0));
  REQUIRE(slice.shape == std::vector<std::uint32_t>{16, 16});
  const auto enumerate = [&](std::uint32_t splits) {
    return plan::enumerate_candidates(spec_with(splits), slice.shape, slice.alike_wraparound, false, false);
  };
  // By hand, in powers of 2 (256 = 2^8, each axis 2^4): whole axes give
  // data, fsdp or tensor 256 and the three pairs of 16 x 16: 6 meshes.
  // Every other split of the 8 factors of 2 over the three parallelisms,
  // 45 - 6 = 39 of them, lies as tensor, fsdp, data from the inner factor
  // of x on; a boundary between two of them that is not the edge of x (2^4)
  // cuts an axis. Two parallelisms, 2^a x 2^(8-a) with a != 4: one cut,
  // 3 pairs x 6 = 18. Three, 2^a x 2^b x 2^c: a cut at a unless a = 4 and at
  // a + b unless a + b = 4, so one cut for the 3 + 3 with a = 4 or a + b = 4
  // and two for the other 15.
  CHECK(enumerate(0).families.size() == 6);
  const plan::CandidateSet one = enumerate(1);
  CHECK(one.families.size() == 6 + 18 + 6);
  CHECK(enumerate(2).families.size() == 6 + 18 + 21);
  // tensor 4 with fsdp 64: tensor on x's inner 4 chips, fsdp on x's outer
  // 4 and y (one cut); tensor 16 x fsdp 4 x data 4: a + b = 4 + 2, the cut
  // at 4 + 2 only. tensor 2 x fsdp 2 x data 64 cuts x twice.
  const std::set<std::string> l = labels(one);
  CHECK(l.count("tensor 4 x fsdp 64") == 1);
  CHECK(l.count("fsdp 4 x tensor 64") == 0);
  CHECK(l.count("tensor 16 x fsdp 4 x data 4") == 1);
  CHECK(l.count("tensor 2 x fsdp 2 x data 64") == 0);
  CHECK(labels(enumerate(2)).count("tensor 2 x fsdp 2 x data 64") == 1);
  // The whole-axis meshes come first, as they were without splits.
  for (std::size_t i = 0; i < one.families.size(); ++i) CHECK(one.families[i].split == (i >= 6));
}

TEST_CASE("plan split axes: a split mesh's candidate loads as MaxText lays it", "[plan]") {
  const plan::PlanSpec spec = spec_with(1);
  const plan::Slice slice = plan::plan_slice(spec);
  const plan::CandidateSet set =
      plan::enumerate_candidates(spec, slice.shape, slice.alike_wraparound, false, !spec.is_maxtext());
  const auto it = std::find_if(set.families.begin(), set.families.end(),
                               [](const plan::Family& f) { return f.label() == "tensor 4 x fsdp 64"; });
  REQUIRE(it != set.families.end());
  const std::size_t fi = std::size_t(it - set.families.begin());
  const plan::Candidate& c = *std::find_if(set.candidates.begin(), set.candidates.end(),
                                           [&](const plan::Candidate& k) { return k.family == fi; });
  const std::string text = plan::experiment_text(spec, slice, "tpu-v6e", *it, c);
  INFO(text);
  // MaxText lays no mesh over part of an axis without its leave.
  CHECK(text.find("allow_split_physical_axes: true") != std::string::npos);
  const std::string path = source_path("tests/data/plan/c.yaml");
  const plan::TrainStep step = plan::train_step_of(text, path, {});
  using Axis = std::pair<std::string, std::uint32_t>;
  CHECK(step.exp.mesh == std::vector<Axis>{{"tensor", 4}, {"fsdp", 64}});
  CHECK(step.spec.parallelism.tensor.degree == 4);
  CHECK(step.spec.parallelism.fsdp.degree == 64);
  // A whole-axis candidate needs no leave.
  const plan::Candidate& first = set.candidates.front();
  CHECK(plan::experiment_text(spec, slice, "tpu-v6e", set.families[first.family], first).find("allow_split") ==
        std::string::npos);
}

}  // namespace test_plan_split_axes
