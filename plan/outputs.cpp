#include "plan/outputs.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "sim/input_file.h"
#include "sim/output.h"
#include "sweep/outputs.h"
#include "workloads/train/memory.h"

namespace plan {

namespace fs = std::filesystem;

namespace {

nlohmann::json number_or_null(double v, bool has) { return has ? nlohmann::json(v) : nlohmann::json(nullptr); }

std::string gib(double bytes) { return workloads::binary_bytes(bytes); }

std::string seconds(double s) { return sim::si(s, "s"); }

// The candidate's rank (1 = best), 0 when not ranked.
std::size_t rank_of(const PlanResult& plan, std::size_t i) {
  const auto it = std::find(plan.ranking.begin(), plan.ranking.end(), i);
  return it == plan.ranking.end() ? 0 : std::size_t(it - plan.ranking.begin()) + 1;
}

double best_step(const PlanResult& plan) {
  return plan.ranking.empty() ? std::numeric_limits<double>::infinity() : plan.results[plan.ranking[0]].step_s;
}

std::string describe(const PlanResult& plan, std::size_t i) {
  const Candidate& c = plan.set.candidates[i];
  return c.id + ": remat " + c.remat + ", " + std::to_string(c.microbatches) + " microbatch" +
         (c.microbatches == 1 ? "" : "es");
}

// One candidate's reason, for plan.csv and plan.json.
std::string candidate_reason(const PlanResult& plan, std::size_t i) {
  const CandidateResult& r = plan.results[i];
  const Estimate& e = r.estimate;
  switch (r.outcome) {
    case Outcome::invalid: return e.message;
    case Outcome::does_not_fit:
      return "does not fit by " + gib(double(e.memory_bytes) - double(e.capacity_bytes)) + " of " + e.memory + ": " +
             e.message;
    case Outcome::pruned_by_bound:
      return "lower bound " + seconds(e.bound_s()) + " (" +
             (e.compute_s >= e.communication_s ? std::string("compute") : e.communication_by) +
             ") is not below the best step " + seconds(best_step(plan));
    case Outcome::over_cap: return "not simulated: max_simulations reached";
    case Outcome::failed: return r.error;
    case Outcome::simulated: return "rank " + std::to_string(rank_of(plan, i));
  }
  return "";
}

nlohmann::json candidate_json(const PlanResult& plan, std::size_t i) {
  const Candidate& c = plan.set.candidates[i];
  const CandidateResult& r = plan.results[i];
  const Estimate& e = r.estimate;
  const bool loaded = e.status != Estimate::Status::invalid;
  const bool sim = r.outcome == Outcome::simulated;
  const std::size_t rank = rank_of(plan, i);
  return {{"id", c.id},
          {"family", plan.set.families[c.family].id},
          {"mesh", plan.set.families[c.family].label()},
          {"remat", c.remat},
          {"microbatches", c.microbatches},
          {"outcome", to_string(r.outcome)},
          {"rank", rank ? nlohmann::json(rank) : nlohmann::json(nullptr)},
          {"lower_bound_s", number_or_null(e.bound_s(), loaded)},
          {"compute_bound_s", number_or_null(e.compute_s, loaded)},
          {"communication_bound_s", number_or_null(e.communication_s, loaded)},
          {"communication_bound_by", e.communication_by},
          {"memory_estimate_bytes", loaded ? nlohmann::json(e.memory_bytes) : nlohmann::json(nullptr)},
          {"memory_capacity_bytes", loaded ? nlohmann::json(e.capacity_bytes) : nlohmann::json(nullptr)},
          {"largest_memory_item", e.largest_item},
          {"step_time_s", number_or_null(r.step_s, sim)},
          {"tokens_per_s_per_chip", number_or_null(r.tokens_per_s_per_chip, sim)},
          {"mfu", number_or_null(r.mfu, sim)},
          {"per_chip_memory_bytes", sim ? nlohmann::json(r.memory_per_chip) : nlohmann::json(nullptr)},
          {"exposed_communication_s", number_or_null(r.exposed_communication_s, sim)},
          {"bubble_fraction", number_or_null(r.bubble_fraction, sim && r.bubble_fraction >= 0)},
          {"experiment", fs::path(r.path).filename().string()},
          {"reason", candidate_reason(plan, i)}};
}

std::vector<std::size_t> members(const PlanResult& plan, std::size_t family) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < plan.set.candidates.size(); ++i)
    if (plan.set.candidates[i].family == family) out.push_back(i);
  return out;
}

}  // namespace

std::string family_reason(const PlanResult& plan, std::size_t family) {
  const std::vector<std::size_t> m = members(plan, family);
  std::size_t best = 0, ranked = 0, fits = 0, closest = m.front(), lowest = m.front(), failed = 0;
  double least_over = std::numeric_limits<double>::infinity(), least_bound = least_over;
  for (std::size_t i : m) {
    const CandidateResult& r = plan.results[i];
    const std::size_t rank = rank_of(plan, i);
    if (rank && (!best || rank < best)) best = rank, ranked = i;
    if (r.outcome == Outcome::failed) ++failed;
    if (r.estimate.status == Estimate::Status::does_not_fit) {
      const double over = double(r.estimate.memory_bytes) - double(r.estimate.capacity_bytes);
      if (over < least_over) least_over = over, closest = i;
    }
    if (r.estimate.status == Estimate::Status::fits) {
      ++fits;
      if (r.estimate.bound_s() < least_bound) least_bound = r.estimate.bound_s(), lowest = i;
    }
  }
  if (best) return "rank " + std::to_string(best) + " (" + describe(plan, ranked) + ")";
  if (failed) return "simulation failed (" + describe(plan, m.front()) + ": " + candidate_reason(plan, m.front()) + ")";
  if (fits) {
    const Estimate& e = plan.results[lowest].estimate;
    const std::string by = e.compute_s >= e.communication_s ? "compute" : e.communication_by;
    return "bound worse than the best by " + seconds(e.bound_s() - best_step(plan)) + ": its lowest bound " +
           seconds(e.bound_s()) + " (" + describe(plan, lowest) + ", " + by + "-bound) against the best step " +
           seconds(best_step(plan));
  }
  if (least_over < std::numeric_limits<double>::infinity()) {
    const Estimate& e = plan.results[closest].estimate;
    return "does not fit by " + gib(least_over) + " at the least (" + describe(plan, closest) + " needs " +
           gib(double(e.memory_bytes)) + " of " + gib(double(e.capacity_bytes)) + " of " + e.memory +
           "; largest item " + e.largest_item + " " + gib(double(e.largest_item_bytes)) + ")";
  }
  return "invalid: " + plan.results[m.front()].estimate.message;
}

std::string plan_table(const PlanResult& plan, std::size_t rows) {
  std::ostringstream o;
  const PlanSpec& s = plan.spec;
  o << "plan " << s.name << ": " << (s.is_maxtext() ? s.maxtext_model : std::string("model")) << " on "
    << s.total_chips() << " " << s.chip << " (" << plan.slice.pod_yaml << "), " << s.batch() << " sequences of "
    << s.seq_len << "\n";
  std::size_t counts[6] = {};
  for (const auto& r : plan.results) ++counts[static_cast<int>(r.outcome)];
  o << "  " << plan.set.candidates.size() << " candidates in " << plan.set.families.size()
    << " meshes: " << counts[int(Outcome::simulated)] << " ranked, " << counts[int(Outcome::does_not_fit)]
    << " do not fit, " << counts[int(Outcome::pruned_by_bound)] << " pruned by their bound, "
    << counts[int(Outcome::invalid)] << " invalid, " << counts[int(Outcome::failed)] << " failed"
    << (counts[int(Outcome::over_cap)] ? ", " : "")
    << (counts[int(Outcome::over_cap)] ? std::to_string(counts[int(Outcome::over_cap)]) + " over max_simulations" : "")
    << "\n\n";
  char line[320];
  std::snprintf(line, sizeof line, "  %-4s %-6s %-34s %-18s %4s %11s %12s %6s %10s %10s %6s\n", "rank", "id", "mesh",
                "remat", "m", "step", "tok/s/chip", "MFU", "mem/chip", "exposed", "bubble");
  o << line;
  for (std::size_t k = 0; k < plan.ranking.size() && k < rows; ++k) {
    const std::size_t i = plan.ranking[k];
    const Candidate& c = plan.set.candidates[i];
    const CandidateResult& r = plan.results[i];
    std::snprintf(line, sizeof line, "  %-4zu %-6s %-34s %-18s %4u %11s %12.0f %5.1f%% %10s %10s %6s\n", k + 1,
                  c.id.c_str(), plan.set.families[c.family].label().c_str(), c.remat.c_str(), c.microbatches,
                  seconds(r.step_s).c_str(), r.tokens_per_s_per_chip, 100 * r.mfu,
                  gib(double(r.memory_per_chip)).c_str(), seconds(r.exposed_communication_s).c_str(),
                  r.bubble_fraction >= 0 ? sim::fixed(r.bubble_fraction, 3).c_str() : "-");
    o << line;
  }
  o << "\n  meshes:\n";
  for (std::size_t f = 0; f < plan.set.families.size(); ++f)
    o << "  " << plan.set.families[f].id << "  " << plan.set.families[f].label() << ": " << family_reason(plan, f)
      << "\n";
  return o.str();
}

nlohmann::json plan_json(const PlanResult& plan) {
  const PlanSpec& s = plan.spec;
  nlohmann::json candidates = nlohmann::json::array(), families = nlohmann::json::array(),
                 ranking = nlohmann::json::array();
  for (std::size_t i = 0; i < plan.set.candidates.size(); ++i) candidates.push_back(candidate_json(plan, i));
  for (std::size_t f = 0; f < plan.set.families.size(); ++f)
    families.push_back(
        {{"id", plan.set.families[f].id}, {"mesh", plan.set.families[f].label()}, {"reason", family_reason(plan, f)}});
  for (std::size_t i : plan.ranking) ranking.push_back(plan.set.candidates[i].id);
  nlohmann::json counts = nlohmann::json::object();
  for (const Outcome o : {Outcome::simulated, Outcome::does_not_fit, Outcome::pruned_by_bound, Outcome::invalid,
                          Outcome::failed, Outcome::over_cap}) {
    std::size_t n = 0;
    for (const auto& r : plan.results) n += r.outcome == o;
    counts[to_string(o)] = n;
  }
  counts["candidates"] = plan.set.candidates.size();
  counts["families"] = plan.set.families.size();
  return {{"schema", kPlanSchema},
          {"plan",
           {{"name", s.name},
            {"model", s.is_maxtext() ? s.maxtext_model : s.model_yaml},
            {"chip", s.chip},
            {"chips", s.chips},
            {"slices", s.slices},
            {"pod", plan.slice.pod_yaml},
            {"global_batch", s.batch()},
            {"seq_len", s.seq_len},
            {"objective", to_string(s.objective)},
            {"max_memory_fraction", s.max_memory_fraction},
            {"exhaustive", s.exhaustive}}},
          {"counts", counts},
          {"best", plan.ranking.empty() ? nlohmann::json(nullptr) : candidate_json(plan, plan.ranking[0])},
          {"ranking", ranking},
          {"families", families},
          {"candidates", candidates}};
}

std::string plan_csv(const PlanResult& plan) {
  static const char* const kColumns[] = {"id",
                                         "family",
                                         "mesh",
                                         "remat",
                                         "microbatches",
                                         "outcome",
                                         "rank",
                                         "lower_bound_s",
                                         "compute_bound_s",
                                         "communication_bound_s",
                                         "communication_bound_by",
                                         "memory_estimate_bytes",
                                         "memory_capacity_bytes",
                                         "largest_memory_item",
                                         "step_time_s",
                                         "tokens_per_s_per_chip",
                                         "mfu",
                                         "per_chip_memory_bytes",
                                         "exposed_communication_s",
                                         "bubble_fraction",
                                         "experiment",
                                         "reason"};
  std::string csv;
  for (const char* c : kColumns) csv += std::string(csv.empty() ? "" : ",") + c;
  csv += "\n";
  for (std::size_t i = 0; i < plan.set.candidates.size(); ++i) {
    const nlohmann::json j = candidate_json(plan, i);
    std::string row;
    for (const char* c : kColumns) {
      const nlohmann::json& v = j.at(c);
      const std::string cell = v.is_null() ? "" : v.is_string() ? v.get<std::string>() : v.dump();
      row += (c == kColumns[0] ? "" : ",") + sweep::csv_field(cell);
    }
    csv += row + "\n";
  }
  return csv;
}

void write_plan_outputs(const std::string& out_dir, const PlanResult& plan, const nlohmann::json& execution) {
  const fs::path dir(out_dir);
  nlohmann::json j = plan_json(plan);
  j["execution"] = execution;
  sim::write_file_atomic((dir / "plan.csv").string(), plan_csv(plan));
  sim::write_file_atomic((dir / "plan.json").string(), j.dump(2) + "\n");
  for (std::size_t k = 0; k < plan.ranking.size() && k < plan.spec.top; ++k)
    sim::write_file_atomic((dir / ("best-" + std::to_string(k + 1) + ".yaml")).string(),
                           sim::read_config_text(plan.results[plan.ranking[k]].path));
}

}  // namespace plan
