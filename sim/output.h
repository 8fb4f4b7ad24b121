#pragma once
// Writing results: atomically (temp file + rename, so an interrupted run
// never leaves a half-written report) and as aligned text tables.
#include <string>
#include <utility>
#include <vector>

namespace sim {

// The output-path policy, the one place that decides whether tpusim may
// write a file (report.json, trace.json, mxu.vcd, --html pages, explain's
// VCD, SCALE-Sim's CSVs, a sweep's outputs and points, plots): `path` must
// be absent or a regular file, never a device, FIFO, socket or directory
// (renaming over /dev/null replaced it), and a symbolic link may only point
// at such a file inside the path's own folder (a link leaving it would let a
// run alter a file elsewhere). Returns what is wrong, or "" when the path may
// be written. Callers ask before any work and say which option named it.
std::string output_path_problem(const std::string& path);

// Throws std::runtime_error("PATH: problem") unless output_path_problem is "".
void check_output_path(const std::string& path);

// Writes `content` to `path` via a temporary file in the same directory and
// rename(2), after check_output_path. Creates parent directories. Throws
// std::runtime_error on failure.
void write_file_atomic(const std::string& path, const std::string& content);

// The temporary name of `path` while this process writes it:
// PATH.tmp.PID, or PATH.tmp.PID.EXT when a writer needs the extension
// (SystemC's VCD writer appends ".vcd" itself).
std::string temp_path(const std::string& path, const std::string& ext = "");

// Removes the temporary files in `dir` (not below it) whose writing process
// has ended: what a killed run or sweep worker left. Returns how many.
std::size_t remove_stale_temps(const std::string& dir);

// Creates the temporary file `tmp` afresh (a file or link of that name is
// removed first; the new one is opened with O_EXCL | O_NOFOLLOW, so no link
// planted there redirects the write) and writes `content` into it.
void write_new_file(const std::string& tmp, const std::string& content);

// A run's output files, replaced as one set: each is written (or staged,
// for a file another writer fills) under its temporary name, and commit()
// renames them all into place, removing the older outputs of the set that
// this run does not produce. Without commit() (the run failed), the
// temporary files are removed and the folder keeps the earlier run's set.
class OutputSet {
 public:
  // `names`: every file of the set (report.json, trace.json, mxu.vcd). Each
  // staged or written file is checked against the output-path policy.
  OutputSet(std::string dir, std::vector<std::string> names);
  ~OutputSet();
  OutputSet(const OutputSet&) = delete;
  OutputSet& operator=(const OutputSet&) = delete;

  void write(const std::string& name, const std::string& content);
  // A temporary path, ending in `ext`, for another writer to fill with `name`
  // (created empty here, so the other writer opens a regular file of ours).
  std::string stage(const std::string& name, const std::string& ext = "");
  // Renames every written or staged file into place (the report last) and
  // removes the set's other files. Throws std::runtime_error on failure.
  void commit();

 private:
  std::string dir_;
  std::vector<std::string> names_;
  std::vector<std::pair<std::string, std::string>> staged_;  // name, temporary path
};

// A two-column "name  value  unit" table, printed with aligned columns.
class Table {
 public:
  explicit Table(std::string title) : title_(std::move(title)) {}
  void row(const std::string& name, const std::string& value, const std::string& unit = "");
  void section(const std::string& heading);
  std::string str() const;

 private:
  std::string title_;
  std::vector<std::vector<std::string>> rows_;  // size 1 = section heading
};

// Engineering formatting for tables: 3 significant digits with SI prefix.
std::string si(double value, const std::string& unit);
std::string fixed(double value, int decimals);
// 3 significant digits without a prefix, for values far outside the SI
// prefixes' span (messages about a 1e-30 B/s link): "4.19e+07 s".
std::string g3(double value, const std::string& unit);

}  // namespace sim
