#pragma once
// What happened to one sweep point, kept in DIR/points/<id>/point.json next
// to the point's report.json. Written atomically once the point's process
// has ended, so a point with a record is finished and --resume keeps it.
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace sweep {

struct PointRecord {
  std::string id;
  bool ok = false;
  int exit_code = 0;  // of `tpusim run` (0 ok, 1 internal, 2 bad input, 3 the system fails); -1: a signal
  int signal = 0;     // the signal that ended it, if any
  std::string error;  // what the point said when it failed
  std::vector<std::string> overrides;
  std::string experiment_digest;  // inputs_digest of the point when it ran
  double wall_time_s = 0;
  nlohmann::json report;  // report.json of an ok point (kept in its own file)

  // An outcome of the simulator itself (ran, or failed on bad input or as
  // a simulated system), as opposed to a crash or a kill: --resume keeps it.
  bool settled() const { return ok || exit_code == 2 || exit_code == 3; }
};

std::string point_dir(const std::string& out_dir, const std::string& id);

// point.json, without the report.
nlohmann::json record_json(const PointRecord& r);
PointRecord record_from_json(const nlohmann::json& j);

// Writes point.json (and report.json when `with_report`) atomically.
void write_point_record(const std::string& out_dir, const PointRecord& r, bool with_report);

// Reads a finished point back; nullopt when its record or (for an ok point)
// its report is missing or unreadable.
std::optional<PointRecord> read_point_record(const std::string& out_dir, const std::string& id);

// FNV-1a (64-bit) of a file's bytes, hex; "" when unreadable.
std::string file_digest(const std::string& path);

// What --resume compares: FNV-1a over the tpusim version, `program` (the
// executable's file_digest) and every input file's name and bytes, hex. An
// edited experiment, chip or pod file, or another tpusim, changes it.
std::string inputs_digest(const std::vector<std::string>& inputs, const std::string& program);

}  // namespace sweep
