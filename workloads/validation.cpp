#include "workloads/validation.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>

#include "workloads/experiment.h"

namespace workloads {

// validation_summary_text(): generated from validation/summary.json by
// CMakeLists.txt (cmake/validation_summary.cpp.in).
const char* validation_summary_text();

namespace {

// What a kind's measured cases are, in the terminal's words.
std::string measured_what(const std::string& kind) {
  if (kind == "matmul") return "matmuls";
  if (kind == "collective") return "collectives";
  if (kind == "sharded_matmul") return "sharded matmuls";
  if (kind == "inference") return "serving runs";
  return "training steps";
}

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100.0 * std::fabs(fraction));
  return buf;
}

}  // namespace

ValidationSummary parse_validation_summary(const std::string& text) {
  ValidationSummary s;
  if (text.empty()) {
    s.problem = "no validation summary was built into this binary (validation/summary.json, scripts/validate)";
    return s;
  }
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("groups") || !j["groups"].is_array()) {
    s.problem = "the validation summary built into this binary is unreadable (validation/summary.json)";
    return s;
  }
  for (const auto& g : j["groups"]) {
    if (!g.is_object()) continue;
    ValidationGroup vg;
    const auto text_of = [&g](const char* key) {
      return g.contains(key) && g[key].is_string() ? g[key].get<std::string>() : std::string();
    };
    const auto number_of = [&g](const char* key) {
      return g.contains(key) && g[key].is_number() ? g[key].get<double>() : std::nan("");
    };
    vg.group = text_of("group");
    vg.kind = text_of("kind");
    vg.generation = text_of("generation");
    const double cases = number_of("cases");
    vg.median_abs_error = number_of("median_abs_error");
    vg.signed_mean_error = number_of("signed_mean_error");
    // An entry missing a field is skipped, not guessed at.
    if (vg.group.empty() || vg.kind.empty() || vg.generation.empty() || !(cases >= 1) ||
        !std::isfinite(vg.median_abs_error) || !std::isfinite(vg.signed_mean_error))
      continue;
    vg.cases = static_cast<std::uint32_t>(cases);
    s.groups.push_back(vg);
  }
  if (s.groups.empty()) s.problem = "the validation summary built into this binary has no groups";
  return s;
}

const ValidationSummary& built_in_validation_summary() {
  static const ValidationSummary summary = parse_validation_summary(validation_summary_text());
  return summary;
}

std::string validation_kind(const std::string& workload_kind) {
  if (workload_kind == "matmul" || workload_kind == "collective" || workload_kind == "sharded_matmul" ||
      workload_kind == "inference" || workload_kind == "train")
    return workload_kind;
  if (workload_kind == "maxtext") return "train";
  return "";
}

std::string chip_generation(const std::string& chip_name) {
  const std::string prefix = "tpu-";
  return chip_name.rfind(prefix, 0) == 0 ? chip_name.substr(prefix.size()) : chip_name;
}

Validation pick_validation(const ValidationSummary& summary, const std::string& workload_kind,
                           const std::string& chip_name) {
  Validation v;
  const std::string kind = validation_kind(workload_kind), gen = chip_generation(chip_name);
  if (!summary.problem.empty()) {
    v.note = "not validated: " + summary.problem;
    return v;
  }
  if (kind.empty()) {
    v.note = "not validated: no measured " + workload_kind + " run is among the validation cases";
    return v;
  }
  for (const ValidationGroup& g : summary.groups) {
    if (g.kind != kind || g.generation != gen) continue;
    v.group = g.group;
    v.cases = g.cases;
    v.median_abs_error = g.median_abs_error;
    v.signed_mean_error = g.signed_mean_error;
    const double lean = g.signed_mean_error;
    v.note = "validated on " + std::to_string(g.cases) + " measured " + gen + " " + measured_what(kind) +
             ": median error " + percent(g.median_abs_error) + ", on average " + percent(lean) +
             (lean < 0 ? " optimistic" : " pessimistic");
    return v;
  }
  v.note = "not validated: no measured " + gen + " " + measured_what(kind) + " among the validation cases";
  return v;
}

Validation validation_for(const Experiment& exp) {
  return pick_validation(built_in_validation_summary(), exp.workload ? exp.workload->kind() : "", exp.chip.name);
}

std::string validation_remark(const Experiment& exp) { return "(" + validation_for(exp).note + ")"; }

}  // namespace workloads
