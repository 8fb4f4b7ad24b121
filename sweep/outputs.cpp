#include "sweep/outputs.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>

#include "sim/output.h"
#include "sweep/amdahl.h"

namespace sweep {

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// A row of the table: the point, its record (null when not run), and what
// its group's baseline makes of it.
struct Row {
  const SweepPoint* point = nullptr;
  const PointRecord* record = nullptr;
  double step = kNaN, speedup = kNaN, efficiency = kNaN;
  bool ok() const { return record && record->ok && std::isfinite(step) && step > 0; }
};

nlohmann::json number_or_null(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }

nlohmann::json at(const nlohmann::json& report, const char* pointer) {
  const nlohmann::json::json_pointer p(pointer);
  return report.contains(p) ? report.at(p) : nlohmann::json(nullptr);
}

std::string csv_json(const nlohmann::json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return csv_field(v.get<std::string>());
  return csv_field(v.dump());
}

// Groups of points that form one scaling curve. In a product, axes that
// change the chip count are the curve's x; every combination of the other
// axes is its own curve. A zip is one curve.
std::vector<std::vector<std::size_t>> curves(const SweepSpec& spec, const std::vector<SweepPoint>& points) {
  std::set<std::uint32_t> chips;
  for (const auto& p : points) chips.insert(p.chips);
  std::vector<std::vector<std::size_t>> out;
  if (spec.combine == Combine::zip || chips.size() <= 1 || spec.axes.size() == 1) {
    out.emplace_back();
    for (std::size_t i = 0; i < points.size(); ++i) out.back().push_back(i);
    return out;
  }
  std::vector<bool> chip_axis(spec.axes.size(), false);
  for (std::size_t a = 0; a < spec.axes.size(); ++a) {
    std::map<std::vector<std::string>, std::set<std::uint32_t>> by_others;
    for (const auto& p : points) {
      std::vector<std::string> others = p.values;
      others.erase(others.begin() + static_cast<long>(a));
      by_others[others].insert(p.chips);
    }
    for (const auto& [others, c] : by_others) chip_axis[a] = chip_axis[a] || c.size() > 1;
  }
  std::map<std::vector<std::string>, std::size_t> index;
  for (std::size_t i = 0; i < points.size(); ++i) {
    std::vector<std::string> key;
    for (std::size_t a = 0; a < spec.axes.size(); ++a)
      if (!chip_axis[a]) key.push_back(points[i].values[a]);
    auto [it, fresh] = index.emplace(key, out.size());
    if (fresh) out.emplace_back();
    out[it->second].push_back(i);
  }
  return out;
}

std::string failure_text(const PointRecord& r) {
  std::string first_line = r.error.substr(0, r.error.find('\n'));
  return "exit " + std::to_string(r.exit_code) + (first_line.empty() ? "" : ": " + first_line);
}

// Speedups, efficiencies and the fit of one curve; fills its rows.
nlohmann::json analyse_curve(const SweepSpec& spec, std::vector<Row>& rows, const std::vector<std::size_t>& members) {
  nlohmann::json g;
  g["points"] = nlohmann::json::array();
  for (auto i : members) g["points"].push_back(rows[i].point->id);
  g["baseline"] = nullptr;
  g["amdahl"] = nullptr;
  g["gustafson"] = nullptr;
  g["scaling_limit"] = nullptr;
  g["curve"] = nlohmann::json::array();

  const Row* base = nullptr;
  for (auto i : members)
    if (rows[i].ok() && (!base || rows[i].point->chips < base->point->chips)) base = &rows[i];
  std::set<std::uint32_t> distinct;
  for (auto i : members)
    if (rows[i].ok()) distinct.insert(rows[i].point->chips);
  if (!base || spec.scaling == Scaling::none || distinct.size() < 2) return g;

  const double n0 = base->point->chips, t0 = base->step;
  std::string note = "speedups are against " + std::to_string(base->point->chips) + " chip" + (n0 == 1 ? "" : "s") +
                     " (" + base->point->id + "), the smallest chip count that ran";
  for (auto i : members) {
    const Row& r = rows[i];
    if (r.record && !r.record->ok && r.point->chips < base->point->chips)
      note = std::to_string(r.point->chips) + " chip" + (r.point->chips == 1 ? "" : "s") + " (" + r.point->id +
             ") failed: " + failure_text(*r.record) + "; " + note;
  }
  g["baseline"] = {{"id", base->point->id}, {"chips", base->point->chips}, {"step_time_s", t0}, {"note", note}};

  std::vector<ScalingSample> samples;
  const Row* best = nullptr;
  double last_half = kNaN, first_below = kNaN;
  for (auto i : members) {
    Row& r = rows[i];
    if (!r.ok()) continue;
    const double n = r.point->chips;
    if (spec.scaling == Scaling::strong) {
      r.speedup = t0 / r.step;  // S(N) = T(N0) / T(N)
      r.efficiency = r.speedup / (n / n0);
    } else {
      r.speedup = (n / n0) * t0 / r.step;  // scaled speedup: N/N0 times the work in the same time
      r.efficiency = t0 / r.step;
    }
    samples.push_back({n, r.speedup});
    if (!best || r.speedup > best->speedup) best = &r;
    if (r.efficiency >= 0.5 && !(n <= last_half)) last_half = n;
    if (r.efficiency < 0.5 && !(n >= first_below)) first_below = n;
    g["curve"].push_back({{"id", r.point->id},
                          {"chips", r.point->chips},
                          {"step_time_s", r.step},
                          {"speedup", r.speedup},
                          {"efficiency", r.efficiency}});
  }
  g["scaling_limit"] = {{"best", {{"id", best->point->id}, {"chips", best->point->chips}, {"speedup", best->speedup}}},
                        {"last_chips_with_efficiency_at_least_half", number_or_null(last_half)},
                        {"first_chips_with_efficiency_below_half", number_or_null(first_below)}};
  if (spec.scaling == Scaling::strong) {
    if (auto f = fit_amdahl(samples, n0)) {
      const double p = f->fraction;
      g["amdahl"] = {{"p", p},
                     {"serial_fraction", 1 - p},
                     {"r2", f->r2},
                     {"max_speedup", number_or_null(1 / (1 - p))},
                     {"max_speedup_vs_baseline", number_or_null(amdahl_speedup(p, INFINITY, n0))},
                     {"half_efficiency_chips", number_or_null(amdahl_half_efficiency_chips(p, n0))},
                     {"baseline_chips", n0},
                     {"samples", f->samples}};
    }
  } else if (auto f = fit_gustafson(samples, n0)) {
    g["gustafson"] = {{"serial_fraction", f->fraction}, {"r2", f->r2}, {"baseline_chips", n0}, {"samples", f->samples}};
  }
  return g;
}

// The published figures beside the simulated ones, point by point; error =
// simulated / published - 1 (for MFU, positive is optimistic; for a step
// time, negative is).
nlohmann::json compare_published(const SweepSpec& spec, const std::vector<Row>& rows) {
  const PublishedSeries& pub = spec.published;
  if (pub.points.empty()) return nullptr;
  nlohmann::json points = nlohmann::json::array();
  std::vector<double> errors;
  for (const auto& p : pub.points) {
    for (const Row& r : rows) {
      if (r.point->values.front() != p.at) continue;
      const nlohmann::json sim = r.ok() ? at(r.record->report, report_pointer(pub.metric)) : nlohmann::json(nullptr);
      nlohmann::json error = nullptr;
      if (sim.is_number()) {
        errors.push_back(sim.get<double>() / p.value - 1);
        error = errors.back();
      }
      points.push_back(
          {{"value", p.at}, {"id", r.point->id}, {"published", p.value}, {"simulated", sim}, {"error", error}});
    }
  }
  double worst = kNaN, mean = kNaN;
  if (!errors.empty()) {
    worst = 0;
    mean = 0;
    for (double e : errors) {
      worst = std::max(worst, std::fabs(e));
      mean += e / double(errors.size());
    }
  }
  return {{"metric", to_string(pub.metric)},
          {"source", pub.source},
          {"axis", spec.axes.front().key},
          {"points", points},
          {"compared", errors.size()},
          {"worst_abs_error", number_or_null(worst)},
          {"signed_mean_error", number_or_null(mean)}};
}

}  // namespace

SweepOutputs summarize_sweep(const SweepSpec& spec, const std::vector<SweepPoint>& points,
                             const std::map<std::string, PointRecord>& finished) {
  std::vector<Row> rows(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    rows[i].point = &points[i];
    auto it = finished.find(points[i].id);
    if (it == finished.end()) continue;
    rows[i].record = &it->second;
    const nlohmann::json step = at(it->second.report, "/result/step_time_s");
    if (it->second.ok && step.is_number()) rows[i].step = step.get<double>();
  }

  nlohmann::json groups = nlohmann::json::array();
  const auto members_of = curves(spec, points);
  for (const auto& members : members_of) {
    nlohmann::json g = analyse_curve(spec, rows, members);
    nlohmann::json fixed = nlohmann::json::object();
    if (members_of.size() > 1) {
      // The values shared by the curve's points (the axes that do not change the chip count).
      for (std::size_t a = 0; a < spec.axes.size(); ++a) {
        bool same = true;
        for (auto i : members) same = same && points[i].values[a] == points[members[0]].values[a];
        if (same) fixed[spec.axes[a].key] = points[members[0]].values[a];
      }
    }
    g["values"] = fixed;
    groups.push_back(g);
  }

  std::string csv = "id";
  for (const auto& a : spec.axes) csv += "," + csv_field(a.key);
  csv +=
      ",chips,status,step_time_s,speedup,efficiency,mfu,achieved_flops_per_s,flops,hbm_bytes,ici_bytes,"
      "arithmetic_intensity,bound,collective_time_s,exposed_communication_s,overlap_fraction,bubble_fraction,"
      "per_chip_memory_bytes,energy_j,average_power_w,exit_code,error\n";
  nlohmann::json table = nlohmann::json::array(), failures = nlohmann::json::array();
  int ok = 0, failed = 0;
  for (const Row& r : rows) {
    const SweepPoint& p = *r.point;
    const std::string status = !r.record ? "not_run" : r.record->ok ? "ok" : "failed";
    const nlohmann::json& rep = r.record ? r.record->report : nlohmann::json(nullptr);
    const bool has = r.record && r.record->ok;
    auto field = [&](const char* ptr) { return has ? at(rep, ptr) : nlohmann::json(nullptr); };
    csv += p.id;
    for (const auto& v : p.values) csv += "," + csv_field(v);
    csv += "," + (p.chips ? std::to_string(p.chips) : std::string()) + "," + status;
    for (const nlohmann::json& v :
         {number_or_null(r.step), number_or_null(r.speedup), number_or_null(r.efficiency), field("/result/mfu"),
          field("/result/achieved_flops_per_s"), field("/result/flops"), field("/result/hbm_bytes"),
          field("/result/ici_bytes"), field("/result/arithmetic_intensity"), field("/result/roofline/bound"),
          field("/result/communication/collective_time_s"), field("/result/communication/exposed_time_s"),
          field("/result/communication/overlap_fraction"), field("/result/pipeline/bubble_fraction"),
          field("/result/memory/per_chip_bytes"), field("/result/energy/total_j"),
          field("/result/energy/average_power_w")})
      csv += "," + csv_json(v);
    csv += "," + (r.record ? std::to_string(r.record->exit_code) : std::string()) + "," +
           csv_field(r.record && !r.record->ok ? r.record->error : std::string()) + "\n";

    nlohmann::json values = nlohmann::json::object();
    for (std::size_t a = 0; a < spec.axes.size(); ++a) values[spec.axes[a].key] = p.values[a];
    table.push_back({{"id", p.id},
                     {"values", values},
                     {"chips", p.chips},
                     {"status", status},
                     {"step_time_s", number_or_null(r.step)},
                     {"speedup", number_or_null(r.speedup)},
                     {"efficiency", number_or_null(r.efficiency)},
                     {"report", has ? nlohmann::json("points/" + p.id + "/report.json") : nlohmann::json(nullptr)}});
    if (r.record && r.record->ok) ++ok;
    if (r.record && !r.record->ok) {
      ++failed;
      failures.push_back({{"id", p.id},
                          {"chips", p.chips},
                          {"exit_code", r.record->exit_code},
                          {"signal", r.record->signal},
                          {"error", r.record->error}});
    }
  }

  nlohmann::json axes = nlohmann::json::array(), set = nlohmann::json::object(), per_chip = nlohmann::json::object();
  for (const auto& a : spec.axes) {
    nlohmann::json vals = nlohmann::json::array();
    for (const auto& v : a.values) vals.push_back(v.yaml);
    axes.push_back({{"key", a.key}, {"values", vals}});
  }
  for (const auto& f : spec.fixed) set[f.key] = f.value.yaml;
  for (const auto& pc : spec.per_chip) per_chip[pc.key] = pc.per_chip;

  nlohmann::json s;
  s["schema"] = kSweepSchema;
  s["tpusim_version"] = TPUSIM_VERSION;
  s["sweep"] = {{"name", spec.name},
                {"config_path", spec.path},
                {"experiment", spec.experiment_path},
                {"scaling", to_string(spec.scaling)},
                {"combine", to_string(spec.combine)},
                {"axes", axes},
                {"set", set},
                {"per_chip", per_chip}};
  s["points"] = {{"total", points.size()},
                 {"ok", ok},
                 {"failed", failed},
                 {"not_run", static_cast<int>(points.size()) - ok - failed}};
  // One curve: its results at the top level, as docs/interface.md names them.
  const bool one = groups.size() == 1;
  for (const char* k : {"baseline", "amdahl", "gustafson", "scaling_limit"})
    s[k] = one ? groups[0][k] : nlohmann::json(nullptr);
  s["groups"] = groups;
  s["published"] = compare_published(spec, rows);
  s["rows"] = table;
  s["failures"] = failures;
  return {csv, s};
}

void write_sweep_outputs(const std::string& out_dir, const SweepOutputs& outputs, const nlohmann::json& execution) {
  namespace fs = std::filesystem;
  nlohmann::json s = outputs.summary;
  s["execution"] = execution;
  sim::write_file_atomic((fs::path(out_dir) / "sweep.csv").string(), outputs.csv);
  sim::write_file_atomic((fs::path(out_dir) / "summary.json").string(), s.dump(2) + "\n");
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace sweep
