// scripts/validate's summary (validation/summary.json, which the build
// embeds and every report's result.validation reads) against a hand
// computation from a small fixture: tests/data/validation/summary-rows.json,
// six results in three groups, one of them a rate.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <string>

#include "app/cli_runner.h"

namespace test_validation_summary {

TEST_CASE("validate: the summary of a fixture equals a hand computation", "[scripts][validation]") {
  const auto r =
      testing_cli::run_in_source_tree("python3 scripts/validate --summarize tests/data/validation/summary-rows.json");
  INFO(r.output);
  REQUIRE(r.status == 0);
  const nlohmann::json s = nlohmann::json::parse(r.output);
  CHECK(s["schema"] == "tpusim.validation-summary/1");
  const nlohmann::json& g = s["groups"];
  REQUIRE(g.size() == 3);
  // Groups sorted by kind, then generation.
  CHECK(g[0]["group"] == "collective/v5e");
  CHECK(g[1]["group"] == "matmul/v4");
  CHECK(g[2]["group"] == "train/v5e");

  // train/v5e: errors 9/10-1 = -0.1, 8/10-1 = -0.2, 5/4-1 = +0.25.
  // median |error| 0.2; signed mean (-0.1 - 0.2 + 0.25) / 3 = -0.01667;
  // two of three optimistic; worst 0.25.
  CHECK(g[2]["kind"] == "train");
  CHECK(g[2]["generation"] == "v5e");
  CHECK(g[2]["cases"] == 3);
  CHECK(g[2]["median_abs_error"].get<double>() == Approx(0.2));
  CHECK(g[2]["signed_mean_error"].get<double>() == Approx(-0.0167));
  CHECK(g[2]["optimistic_share"].get<double>() == Approx(0.6667));
  CHECK(g[2]["worst_abs_error"].get<double>() == Approx(0.25));
  CHECK(g[2]["case_ids"] == nlohmann::json({"train-a", "train-b", "train-c"}));

  // collective/v5e: a rate 125/100-1 = +0.25 (in time 1/1.25-1 = -0.2, optimistic)
  // and a time 2.2/2-1 = +0.1. median |error| (0.25 + 0.1) / 2 = 0.175; signed
  // mean in time (-0.2 + 0.1) / 2 = -0.05; one of two optimistic.
  CHECK(g[0]["cases"] == 2);
  CHECK(g[0]["median_abs_error"].get<double>() == Approx(0.175));
  CHECK(g[0]["signed_mean_error"].get<double>() == Approx(-0.05));
  CHECK(g[0]["optimistic_share"].get<double>() == Approx(0.5));

  // matmul/v4: one pessimistic case, +0.5.
  CHECK(g[1]["cases"] == 1);
  CHECK(g[1]["median_abs_error"].get<double>() == Approx(0.5));
  CHECK(g[1]["signed_mean_error"].get<double>() == Approx(0.5));
  CHECK(g[1]["optimistic_share"].get<double>() == Approx(0.0));
}

}  // namespace test_validation_summary
