#include "plan/search.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <thread>

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

// A rank's word to rank 0 that it left one of its candidates unsimulated,
// and why: a record no run writes (a worker that did not succeed never
// exits 0).
sweep::PointRecord left_record(const std::string& id, Outcome why) {
  sweep::PointRecord r;
  r.id = id;
  r.error = to_string(why);
  return r;
}
bool is_left_record(const sweep::PointRecord& r) { return !r.ok && r.exit_code == 0 && r.signal == 0; }

// Simulates `todo` (fitting candidates, lowest bound first); under mpirun
// this rank's share of them, every outcome gathered on rank 0.
void simulate(PlanResult& plan, const std::vector<std::size_t>& todo, const SearchOptions& opts) {
  const PlanSpec& spec = plan.spec;
  const int rank = opts.mpi ? opts.mpi->rank() : 0, ranks = opts.mpi ? opts.mpi->size() : 1;
  const bool root = rank == 0;
  std::vector<sweep::SweepPoint> points;
  std::map<std::string, std::size_t> by_id;
  for (std::size_t k = 0; k < todo.size(); ++k) {
    const std::size_t i = todo[k];
    by_id[plan.set.candidates[i].id] = i;
    if (static_cast<int>(k % static_cast<std::size_t>(ranks)) != rank) continue;
    sweep::SweepPoint p;
    p.index = i;
    p.id = plan.set.candidates[i].id;
    p.chips = static_cast<std::uint32_t>(spec.total_chips());
    p.experiment = plan.results[i].path;
    points.push_back(p);
  }
  std::vector<const sweep::SweepPoint*> order;
  for (const auto& p : points) order.push_back(&p);
  // The cap is shared evenly among the ranks.
  const std::size_t cap =
      (spec.max_simulations + static_cast<std::size_t>(ranks) - 1) / static_cast<std::size_t>(ranks);
  double best = std::numeric_limits<double>::infinity();
  std::size_t started = 0;
  std::optional<sweep::SweepProgress> progress;
  if (root) progress.emplace(todo.size(), 0, opts.jobs * ranks, "plan");
  // Rank 0 hears of every candidate: its own and the other ranks'.
  auto heard = [&](std::size_t i, const sweep::PointRecord& rec, bool here) {
    CandidateResult& r = plan.results[i];
    if (is_left_record(rec)) {
      r.outcome = rec.error == to_string(Outcome::over_cap) ? Outcome::over_cap : Outcome::pruned_by_bound;
      if (progress) progress->skipped();
      return;
    }
    ++plan.processes;
    if (progress) progress->finished(rec.id, rec.ok, rec.wall_time_s, here);
    if (!rec.ok) {
      r.outcome = Outcome::failed;
      r.error = rec.error;
      return;
    }
    r.outcome = Outcome::simulated;
    read_report(spec, rec.report, r);
    best = std::min(best, r.step_s);
  };
  auto tell_root = [&](const sweep::PointRecord& rec) { opts.mpi->send_point(rec); };
  sweep::RunnerOptions ro;
  ro.out_dir = opts.out_dir;
  ro.executable = opts.executable;
  ro.jobs = opts.jobs;
  ro.still_wanted = [&](const sweep::SweepPoint& p) {
    const bool capped = spec.max_simulations > 0 && started >= cap;
    const bool bounded = !spec.exhaustive && plan.results[p.index].estimate.bound_s() >= best;
    if (capped || bounded) {
      const sweep::PointRecord left =
          left_record(p.id, capped && !bounded ? Outcome::over_cap : Outcome::pruned_by_bound);
      if (root)
        heard(p.index, left, true);
      else
        tell_root(left);
      return false;
    }
    ++started;
    return true;
  };
  ro.on_started = [&](const sweep::SweepPoint& p) {
    if (progress) progress->started(p.id);
  };
  ro.on_finished = [&](const sweep::SweepPoint& p, const sweep::PointRecord& rec) {
    if (!root) {
      // Its own bound pruning goes by what it simulated itself.
      if (rec.ok) best = std::min(best, number_at(rec.report, "/result/step_time_s", best));
      tell_root(rec);
      return;
    }
    heard(p.index, rec, true);
  };
  auto from_others = [&](sweep::PointRecord rec) {
    if (!is_left_record(rec)) sweep::write_point_record(opts.out_dir, rec, rec.ok);
    heard(by_id.at(rec.id), rec, false);
  };
  if (root && opts.mpi) ro.poll = [&] { opts.mpi->receive(from_others); };
  sweep::run_points(order, ro);
  if (!root) {
    opts.mpi->send_done();
    return;
  }
  if (opts.mpi)
    while (!sweep::interrupted() && !opts.mpi->receive(from_others))
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  progress->close();
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
