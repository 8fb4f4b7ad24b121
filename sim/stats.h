#pragma once
// Statistics in groups named like the module hierarchy (gem5 / DRAMSys
// style). Hot code keeps plain counters; at dump time each component adds
// them to its group, and derived figures (utilization = busy / elapsed,
// bandwidth = bytes / time) are formulas evaluated then, never bookkeeping
// in the hot path.
#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace sim {

class StatGroup {
 public:
  explicit StatGroup(std::string name = "") : name_(std::move(name)) {}
  // Copies are deep: a report keeps the statistics of a run it outlives.
  StatGroup(const StatGroup& other);
  StatGroup& operator=(const StatGroup& other);
  StatGroup(StatGroup&&) = default;
  StatGroup& operator=(StatGroup&&) = default;

  StatGroup& group(const std::string& name);  // created on first use, kept in insertion order
  void scalar(const std::string& name, double value, const std::string& unit, const std::string& desc);
  void formula(const std::string& name, std::function<double()> f, const std::string& unit, const std::string& desc);

  const std::string& name() const { return name_; }
  // {"stat": {"value": v, "unit": u, "desc": d}, "child": {...}}
  nlohmann::json to_json() const;
  // Looks up "a.b.c" (groups then stat); throws std::out_of_range if absent.
  double value(const std::string& dotted) const;
  // The child group `name`; throws std::out_of_range if absent.
  const StatGroup& child(const std::string& name) const;

 private:
  struct Stat {
    std::string name, unit, desc;
    std::function<double()> eval;
  };
  std::string name_;
  std::vector<Stat> stats_;
  std::vector<std::unique_ptr<StatGroup>> children_;
};

}  // namespace sim
