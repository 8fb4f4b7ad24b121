#include "app/compare.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "sim/error.h"
#include "sim/output.h"

namespace app {

namespace {

using nlohmann::json;

// The numbers of one report that a comparison reads, by row key, in order.
struct Figure {
  std::string group, key, unit;
  double value;
};

void numeric_leaves(const json& node, const std::string& prefix, const std::string& group, const std::string& unit,
                    std::vector<Figure>& out) {
  if (!node.is_object()) return;
  for (const auto& [k, v] : node.items()) {
    if (v.is_number() && (unit != "B" || (k.size() > 6 && k.compare(k.size() - 6, 6, "_bytes") == 0)))
      out.push_back({group, prefix + k, unit, v.get<double>()});
  }
}

std::vector<Figure> figures(const json& report) {
  std::vector<Figure> out;
  const json& result = report.value("result", json::object());
  if (result.contains("step_time_s") && result["step_time_s"].is_number())
    out.push_back({"step", "result.step_time_s", "s", result["step_time_s"].get<double>()});
  numeric_leaves(result.value("phases", json::object()), "result.phases.", "phases", "s", out);
  const json& comm = result.value("communication", json::object());
  for (const char* k : {"exposed_time_s", "collective_time_s", "compute_time_s"})
    if (comm.contains(k) && comm[k].is_number())
      out.push_back({"communication", std::string("result.communication.") + k, "s", comm[k].get<double>()});
  numeric_leaves(result.value("memory", json::object()), "result.memory.", "memory", "B", out);
  // Busy fractions: the roofline's (HBM, ICI, MXU), or else each engine's
  // busy time averaged over the chips, over the step time: per_chip_summary's
  // means (every chip, where per_chip may list only the outliers), or in a
  // report without it the mean over per_chip.
  const json& roofline_busy = result.value("roofline", json::object()).value("busy_fraction", json::object());
  numeric_leaves(roofline_busy, "result.roofline.busy_fraction.", "busy", "", out);
  const double step = result.value("step_time_s", 0.0);
  std::map<std::string, double> busy;  // engine's busy key ("mxu_s") -> mean over the chips
  if (roofline_busy.empty() && report.contains("per_chip_summary")) {
    const json fields = report["per_chip_summary"].value("fields", json::object());
    for (const auto& [key, d] : fields.items())
      if (key.rfind("busy.", 0) == 0) busy[key.substr(5)] = d.at("mean").get<double>();
  } else if (roofline_busy.empty()) {
    std::size_t chips = 0;
    for (const json& c : report.value("per_chip", json::array())) {
      if (!c.contains("busy") || !c["busy"].is_object()) continue;
      ++chips;
      for (const auto& [k, v] : c["busy"].items())
        if (v.is_number()) busy[k] += v.get<double>();
    }
    for (auto& [k, total] : busy) total /= double(chips);
  }
  for (const auto& [k, mean] : busy) {
    const std::string engine = k.size() > 2 && k.compare(k.size() - 2, 2, "_s") == 0 ? k.substr(0, k.size() - 2) : k;
    if (step > 0) out.push_back({"busy", "busy_fraction." + engine, "", mean / step});
  }
  for (const char* k : {"mxu_utilization", "mfu", "flops", "hbm_bytes", "ici_bytes"})
    if (result.contains(k) && result[k].is_number())
      out.push_back({"work", std::string("result.") + k, k[0] == 'm' ? "" : (k[0] == 'f' ? "FLOP" : "B"),
                     result[k].get<double>()});
  return out;
}

json value_or_null(const std::map<std::string, Figure>& side, const std::string& key) {
  const auto it = side.find(key);
  return it == side.end() ? json(nullptr) : json(it->second.value);
}

std::string signed_si(double v, const std::string& unit) {
  if (unit.empty()) return (v >= 0 ? "+" : "") + sim::fixed(v, 4);
  return (v >= 0 ? "+" : "-") + sim::si(std::fabs(v), unit);
}

std::string shown(const json& v, const std::string& unit) {
  if (v.is_null()) return "-";
  return unit.empty() ? sim::fixed(v.get<double>(), 4) : sim::si(v.get<double>(), unit);
}

}  // namespace

json read_report(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path file = fs::is_directory(path) ? fs::path(path) / "report.json" : fs::path(path);
  const sim::SourceLocation where{file.string(), 0, 0};
  std::ifstream in(file);
  if (!in) throw sim::ConfigError(where, "", "no report to read (a run folder or a report.json file)");
  std::stringstream text;
  text << in.rdbuf();
  json report = json::parse(text.str(), nullptr, false);
  if (report.is_discarded() || !report.is_object() || !report.contains("result"))
    throw sim::ConfigError(where, "", "not a tpusim report.json (no JSON object with a `result`)");
  return report;
}

json compare_reports(const json& a, const json& b, const std::string& a_path, const std::string& b_path) {
  const std::vector<Figure> fa = figures(a), fb = figures(b);
  std::map<std::string, Figure> ma, mb;
  for (const Figure& f : fa) ma.emplace(f.key, f);
  for (const Figure& f : fb) mb.emplace(f.key, f);
  // A's rows in A's order, then those only B has.
  std::vector<Figure> order = fa;
  for (const Figure& f : fb)
    if (!ma.count(f.key)) order.push_back(f);
  json rows = json::array();
  for (const Figure& f : order) {
    json row = {{"group", f.group},
                {"key", f.key},
                {"unit", f.unit},
                {"a", value_or_null(ma, f.key)},
                {"b", value_or_null(mb, f.key)},
                {"delta", nullptr},
                {"relative", nullptr}};
    if (!row["a"].is_null() && !row["b"].is_null()) {
      const double va = row["a"].get<double>(), vb = row["b"].get<double>();
      row["delta"] = vb - va;
      if (va != 0) row["relative"] = (vb - va) / std::fabs(va);
    }
    rows.push_back(row);
  }
  const auto name = [](const json& r) { return r.value("experiment", json::object()).value("name", std::string()); };
  json out = {{"a", {{"name", name(a)}, {"path", a_path}}},
              {"b", {{"name", name(b)}, {"path", b_path}}},
              {"rows", rows},
              {"step_time_delta_s", nullptr},
              {"largest_contributor", nullptr}};
  for (const json& r : rows)
    if (r["key"] == "result.step_time_s") out["step_time_delta_s"] = r["delta"];
  // What moved the step most, in seconds: a phase or the exposed
  // communication; for reports without phases, the resource whose busy
  // time (busy fraction x step time) moved most.
  const double step_a = a.value("result", json::object()).value("step_time_s", 0.0);
  const double step_b = b.value("result", json::object()).value("step_time_s", 0.0);
  const auto seconds = [&](const json& r) {
    if (r["delta"].is_null()) return 0.0;
    if (r["group"] != "busy") return r["delta"].get<double>();
    return r["b"].get<double>() * step_b - r["a"].get<double>() * step_a;
  };
  const auto pick = [&](auto&& eligible) {
    const json* best = nullptr;
    for (const json& r : rows)
      if (eligible(r) && seconds(r) != 0 && (!best || std::fabs(seconds(r)) > std::fabs(seconds(*best)))) best = &r;
    return best;
  };
  const json* best =
      pick([](const json& r) { return r["group"] == "phases" || r["key"] == "result.communication.exposed_time_s"; });
  if (!best) best = pick([](const json& r) { return r["group"] == "busy"; });
  if (best) {
    json c = {{"key", (*best)["key"]}, {"delta_s", seconds(*best)}, {"share", nullptr}};
    if (!out["step_time_delta_s"].is_null() && out["step_time_delta_s"].get<double>() != 0)
      c["share"] = seconds(*best) / out["step_time_delta_s"].get<double>();
    out["largest_contributor"] = c;
  }
  return out;
}

std::string compare_text(const json& cmp) {
  std::ostringstream s;
  s << "compare: A = " << cmp["a"]["path"].get<std::string>() << " (" << cmp["a"]["name"].get<std::string>()
    << "), B = " << cmp["b"]["path"].get<std::string>() << " (" << cmp["b"]["name"].get<std::string>() << ")\n";
  std::vector<std::array<std::string, 5>> lines = {{"", "A", "B", "B - A", ""}};
  std::string group;
  for (const json& r : cmp["rows"]) {
    if (r["group"] != group) {
      group = r["group"].get<std::string>();
      lines.push_back({group + ":", "", "", "", ""});
    }
    const std::string unit = r["unit"].get<std::string>();
    std::string rel;
    if (!r["relative"].is_null())
      rel = "(" + (r["relative"].get<double>() >= 0 ? std::string("+") : std::string()) +
            sim::fixed(100 * r["relative"].get<double>(), 1) + "%)";
    lines.push_back({"  " + r["key"].get<std::string>(), shown(r["a"], unit), shown(r["b"], unit),
                     r["delta"].is_null() ? "-" : signed_si(r["delta"].get<double>(), unit), rel});
  }
  std::array<std::size_t, 5> width{};
  for (const auto& l : lines)
    for (std::size_t i = 0; i < 5; ++i) width[i] = std::max(width[i], l[i].size());
  for (const auto& l : lines) {
    std::string line = l[0] + std::string(width[0] - l[0].size(), ' ');
    for (std::size_t i = 1; i < 5; ++i) line += "  " + std::string(width[i] - l[i].size(), ' ') + l[i];
    while (!line.empty() && line.back() == ' ') line.pop_back();
    s << line << "\n";
  }
  const json& c = cmp["largest_contributor"];
  if (c.is_null()) {
    s << "largest contributor: none (nothing that splits the step time changed)\n";
  } else {
    const std::string key = c["key"].get<std::string>();
    s << "largest contributor: " << key << (key.find("busy_fraction") != std::string::npos ? " (busy time) " : " ")
      << signed_si(c["delta_s"].get<double>(), "s");
    if (!c["share"].is_null()) s << " (" << sim::fixed(100 * c["share"].get<double>(), 0) << "% of the step's change)";
    s << "\n";
  }
  return s.str();
}

}  // namespace app
