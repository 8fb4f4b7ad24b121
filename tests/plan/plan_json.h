#pragma once
// A plan's plan.json, as the plan tests read it from `tpusim plan`'s
// output folder.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>

#include "app/cli_runner.h"

namespace testing_plan {

inline nlohmann::json plan_json(const testing_cli::TempDir& dir) {
  std::ifstream in(dir / "plan.json");
  REQUIRE(in);
  return nlohmann::json::parse(in);
}

}  // namespace testing_plan
