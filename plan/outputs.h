#pragma once
// What a plan writes (docs/plan.md, "Outputs"): the ranked table and each
// family's fate on stdout, DIR/plan.csv (one row a candidate), DIR/plan.json
// (schema tpusim.plan/1), DIR/best-<k>.yaml (the best candidates' runnable
// experiment files). Files are written atomically; everything but
// plan.json's `execution` section depends only on the candidates' results.
#include <string>

#include <nlohmann/json.hpp>

#include "plan/search.h"

namespace plan {

inline constexpr const char* kPlanSchema = "tpusim.plan/1";

// Why a family has no ranked candidate (or which of its candidates ranks
// best): "does not fit by 3.2 GiB at the least (c0012: ...)".
std::string family_reason(const PlanResult& plan, std::size_t family);

std::string plan_table(const PlanResult& plan, std::size_t rows);
std::string plan_csv(const PlanResult& plan);
nlohmann::json plan_json(const PlanResult& plan);  // without `execution`

// plan.csv, plan.json (with `execution`) and best-<k>.yaml into `out_dir`.
void write_plan_outputs(const std::string& out_dir, const PlanResult& plan, const nlohmann::json& execution);

}  // namespace plan
