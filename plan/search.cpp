#include "plan/search.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>

#include "models/model_config.h"
#include "plan/experiment_text.h"
#include "sim/host.h"
#include "sim/output.h"
#include "sweep/points.h"
#include "sweep/progress.h"
#include "sweep/record.h"
#include "sweep/runner.h"
#include "workloads/experiment.h"
#include "workloads/maxtext/config.h"

namespace plan {

namespace fs = std::filesystem;

namespace {

bool has_experts(const PlanSpec& spec) {
  if (!spec.is_maxtext()) return models::load_model(sim::YamlNode::load_string(spec.model_yaml, spec.path)).moe();
  const sim::YamlNode probe = sim::YamlNode::load_string("{model_name: " + spec.maxtext_model + "}", spec.path);
  return workloads::load_maxtext_config(probe, nullptr, 1, 1, true).model.moe();
}

// How candidate files name the chip: its name when their folder finds the
// same file by it, else its path.
std::string chip_reference(const PlanSpec& spec, const std::string& candidate_path) {
  for (const auto& d : workloads::config_search_dirs(candidate_path, "chips")) {
    std::error_code ec;
    if (fs::equivalent(fs::path(d) / (spec.chip + ".yaml"), spec.chip_file, ec)) return spec.chip;
  }
  return fs::absolute(spec.chip_file).lexically_normal().string();
}

double number_at(const nlohmann::json& j, const char* pointer, double otherwise) {
  const nlohmann::json::json_pointer p(pointer);
  return j.contains(p) && j.at(p).is_number() ? j.at(p).get<double>() : otherwise;
}

void read_report(const PlanSpec& spec, const nlohmann::json& rep, CandidateResult& r) {
  r.step_s = number_at(rep, "/result/step_time_s", 0);
  r.mfu = number_at(rep, "/result/mfu", 0);
  r.exposed_communication_s = number_at(rep, "/result/communication/exposed_time_s", 0);
  r.bubble_fraction = number_at(rep, "/result/pipeline/bubble_fraction", -1);
  r.memory_per_chip = std::uint64_t(number_at(rep, "/result/memory/per_chip_bytes", 0));
  r.tokens_per_s_per_chip =
      r.step_s > 0 ? double(spec.batch()) * double(spec.seq_len) / r.step_s / double(spec.total_chips()) : 0;
}

// Simulates `todo` (fitting candidates, lowest bound first).
void simulate(PlanResult& plan, const std::vector<std::size_t>& todo, const SearchOptions& opts) {
  const PlanSpec& spec = plan.spec;
  std::vector<sweep::SweepPoint> points;
  for (std::size_t i : todo) {
    sweep::SweepPoint p;
    p.index = i;
    p.id = plan.set.candidates[i].id;
    p.chips = static_cast<std::uint32_t>(spec.total_chips());
    p.experiment = plan.results[i].path;
    points.push_back(p);
  }
  std::vector<const sweep::SweepPoint*> order;
  for (const auto& p : points) order.push_back(&p);
  double best = std::numeric_limits<double>::infinity();
  std::size_t started = 0;
  sweep::SweepProgress progress(points.size(), 0, opts.jobs, "plan");
  sweep::RunnerOptions ro;
  ro.out_dir = opts.out_dir;
  ro.executable = opts.executable;
  ro.jobs = opts.jobs;
  ro.still_wanted = [&](const sweep::SweepPoint& p) {
    const bool capped = spec.max_simulations > 0 && started >= spec.max_simulations;
    const bool bounded = !spec.exhaustive && plan.results[p.index].estimate.bound_s() >= best;
    if (capped || bounded) {
      plan.results[p.index].outcome = capped && !bounded ? Outcome::over_cap : Outcome::pruned_by_bound;
      progress.skipped();
      return false;
    }
    ++started;
    return true;
  };
  ro.on_started = [&](const sweep::SweepPoint& p) { progress.started(p.id); };
  ro.on_finished = [&](const sweep::SweepPoint& p, const sweep::PointRecord& rec) {
    CandidateResult& r = plan.results[p.index];
    ++plan.processes;
    progress.finished(p.id, rec.ok, rec.wall_time_s, true);
    if (!rec.ok) {
      r.outcome = Outcome::failed;
      r.error = rec.error;
      return;
    }
    r.outcome = Outcome::simulated;
    read_report(spec, rec.report, r);
    best = std::min(best, r.step_s);
  };
  sweep::run_points(order, ro);
  progress.close();
}

// The report does not depend on the order runs finished in (search.h).
void settle(PlanResult& plan) {
  double best = std::numeric_limits<double>::infinity();
  for (const auto& r : plan.results)
    if (r.outcome == Outcome::simulated) best = std::min(best, r.step_s);
  for (std::size_t i = 0; i < plan.results.size(); ++i) {
    CandidateResult& r = plan.results[i];
    const bool beyond = r.estimate.status == Estimate::Status::fits && r.estimate.bound_s() >= best;
    if (!plan.spec.exhaustive && beyond && r.step_s != best &&
        (r.outcome == Outcome::simulated || r.outcome == Outcome::failed || r.outcome == Outcome::pruned_by_bound)) {
      r.outcome = Outcome::pruned_by_bound;
      r.error.clear();
    }
    if (r.outcome == Outcome::simulated) plan.ranking.push_back(i);
  }
  std::stable_sort(plan.ranking.begin(), plan.ranking.end(), [&](std::size_t a, std::size_t b) {
    return objective_key(plan.spec, plan.results[a]) < objective_key(plan.spec, plan.results[b]);
  });
}

}  // namespace

const char* to_string(Outcome o) {
  switch (o) {
    case Outcome::invalid: return "invalid";
    case Outcome::does_not_fit: return "does_not_fit";
    case Outcome::pruned_by_bound: return "pruned_by_bound";
    case Outcome::over_cap: return "over_cap";
    case Outcome::failed: return "failed";
    case Outcome::simulated: return "simulated";
  }
  return "";
}

double objective_key(const PlanSpec& spec, const CandidateResult& r) {
  switch (spec.objective) {
    case Objective::step_time: return r.step_s;
    case Objective::tokens_per_s_per_chip: return -r.tokens_per_s_per_chip;
    case Objective::mfu: return -r.mfu;
  }
  return r.step_s;
}

PlanResult run_plan(const PlanSpec& spec, const SearchOptions& opts) {
  sim::WallTimer wall;
  PlanResult plan;
  plan.spec = spec;
  plan.slice = plan_slice(spec);
  plan.set =
      enumerate_candidates(spec, plan.slice.shape, plan.slice.alike_wraparound, has_experts(spec), !spec.is_maxtext());
  const fs::path dir = fs::path(opts.out_dir) / "candidates";
  const std::string chip = chip_reference(spec, (dir / "c.yaml").string());
  std::vector<std::size_t> fits;
  for (const Candidate& c : plan.set.candidates) {
    CandidateResult r;
    r.path = (dir / (c.id + ".yaml")).string();
    const std::string text = experiment_text(spec, plan.slice, chip, plan.set.families[c.family], c);
    sim::write_file_atomic(r.path, text);
    r.estimate = estimate_candidate(text, r.path, spec.max_memory_fraction);
    r.outcome = r.estimate.status == Estimate::Status::invalid        ? Outcome::invalid
                : r.estimate.status == Estimate::Status::does_not_fit ? Outcome::does_not_fit
                                                                      : Outcome::pruned_by_bound;
    if (r.estimate.status == Estimate::Status::fits) fits.push_back(plan.results.size());
    plan.results.push_back(std::move(r));
  }
  std::stable_sort(fits.begin(), fits.end(), [&](std::size_t a, std::size_t b) {
    return plan.results[a].estimate.bound_s() < plan.results[b].estimate.bound_s();
  });
  if (!fits.empty()) simulate(plan, fits, opts);
  settle(plan);
  plan.wall_time_s = wall.seconds();
  return plan;
}

}  // namespace plan
