#pragma once
// Writing results: atomically (temp file + rename, so an interrupted run
// never leaves a half-written report) and as aligned text tables.
#include <string>
#include <utility>
#include <vector>

namespace sim {

// Writes `content` to `path` via a temporary file in the same directory and
// rename(2). Creates parent directories. Throws std::runtime_error on failure.
void write_file_atomic(const std::string& path, const std::string& content);

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
