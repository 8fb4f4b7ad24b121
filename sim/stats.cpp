#include "sim/stats.h"

#include <stdexcept>

namespace sim {

StatGroup::StatGroup(const StatGroup& other) : name_(other.name_), stats_(other.stats_) {
  for (const auto& c : other.children_) children_.push_back(std::make_unique<StatGroup>(*c));
}

StatGroup& StatGroup::operator=(const StatGroup& other) {
  if (this != &other) *this = StatGroup(other);
  return *this;
}

StatGroup& StatGroup::group(const std::string& name) {
  for (auto& c : children_)
    if (c->name_ == name) return *c;
  children_.push_back(std::make_unique<StatGroup>(name));
  return *children_.back();
}

void StatGroup::scalar(const std::string& name, double value, const std::string& unit, const std::string& desc) {
  stats_.push_back(Stat{name, unit, desc, [value] { return value; }});
}

void StatGroup::formula(const std::string& name, std::function<double()> f, const std::string& unit,
                        const std::string& desc) {
  stats_.push_back(Stat{name, unit, desc, std::move(f)});
}

nlohmann::json StatGroup::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& s : stats_) j[s.name] = {{"value", s.eval()}, {"unit", s.unit}, {"desc", s.desc}};
  for (const auto& c : children_) j[c->name_] = c->to_json();
  return j;
}

double StatGroup::value(const std::string& dotted) const {
  auto dot = dotted.find('.');
  if (dot == std::string::npos) {
    for (const auto& s : stats_)
      if (s.name == dotted) return s.eval();
    throw std::out_of_range("no stat '" + dotted + "' in group '" + name_ + "'");
  }
  std::string head = dotted.substr(0, dot);
  for (const auto& c : children_)
    if (c->name_ == head) return c->value(dotted.substr(dot + 1));
  throw std::out_of_range("no group '" + head + "' in group '" + name_ + "'");
}

const StatGroup& StatGroup::child(const std::string& name) const {
  for (const auto& c : children_)
    if (c->name_ == name) return *c;
  throw std::out_of_range("no group '" + name + "' in group '" + name_ + "'");
}

}  // namespace sim
