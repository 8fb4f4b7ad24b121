#include "sweep/record.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/output.h"
#include "workloads/report.h"

namespace sweep {

namespace fs = std::filesystem;

namespace {

constexpr const char* kPointSchema = "tpusim.sweep_point/1";

std::optional<std::string> read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::string point_dir(const std::string& out_dir, const std::string& id) {
  return (fs::path(out_dir) / "points" / id).string();
}

nlohmann::json record_json(const PointRecord& r) {
  return {{"schema", kPointSchema},
          {"id", r.id},
          {"status", r.ok ? "ok" : "failed"},
          {"exit_code", r.exit_code},
          {"signal", r.signal},
          {"error", r.error},
          {"overrides", r.overrides},
          {"experiment_digest", r.experiment_digest},
          {"wall_time_s", r.wall_time_s}};
}

PointRecord record_from_json(const nlohmann::json& j) {
  PointRecord r;
  r.id = j.at("id").get<std::string>();
  r.ok = j.at("status").get<std::string>() == "ok";
  r.exit_code = j.at("exit_code").get<int>();
  r.signal = j.at("signal").get<int>();
  r.error = j.at("error").get<std::string>();
  r.overrides = j.at("overrides").get<std::vector<std::string>>();
  r.experiment_digest = j.at("experiment_digest").get<std::string>();
  r.wall_time_s = j.at("wall_time_s").get<double>();
  return r;
}

void write_point_record(const std::string& out_dir, const PointRecord& r, bool with_report) {
  const fs::path dir = point_dir(out_dir, r.id);
  // The report first: a record always finds its report in place.
  if (with_report && r.ok)
    sim::write_file_atomic((dir / "report.json").string(),
                           workloads::report_text(r.report, workloads::ReportDetail::summary));
  sim::write_file_atomic((dir / "point.json").string(), record_json(r).dump(2) + "\n");
}

std::optional<PointRecord> read_point_record(const std::string& out_dir, const std::string& id) {
  const fs::path dir = point_dir(out_dir, id);
  const auto text = read_text(dir / "point.json");
  if (!text) return std::nullopt;
  PointRecord r;
  try {
    r = record_from_json(nlohmann::json::parse(*text));
    if (r.id != id) return std::nullopt;
    if (r.ok) {
      const auto report = read_text(dir / "report.json");
      if (!report) return std::nullopt;
      r.report = nlohmann::json::parse(*report);
      // A report that is not one (`{}`, another file's JSON, a half-edited
      // copy) is no result to reuse: the point runs again.
      const auto& rep = r.report;
      if (!rep.is_object() || rep.value("schema", "") != workloads::kReportSchema || !rep.contains("result") ||
          !rep["result"].is_object())
        return std::nullopt;
    }
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
  return r;
}

namespace {

constexpr std::uint64_t kFnvBasis = 14695981039346656037ull;  // FNV-1a offset basis

void fnv(std::uint64_t& h, const std::string& bytes) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;  // FNV prime
  }
}

std::string hex(std::uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace

std::string file_digest(const std::string& path) {
  const auto text = read_text(path);
  if (!text) return "";
  std::uint64_t h = kFnvBasis;
  fnv(h, *text);
  return hex(h);
}

std::string inputs_digest(const std::vector<std::string>& inputs, const std::string& program) {
  std::uint64_t h = kFnvBasis;
  fnv(h, std::string("tpusim ") + TPUSIM_VERSION + '\0' + program + '\0');
  for (const auto& path : inputs) {
    const auto text = read_text(path);
    fnv(h, path + '\0' + (text ? *text : std::string("(unreadable)")) + '\0');
  }
  return hex(h);
}

}  // namespace sweep
