#pragma once
// Typed parameter declarations, one table per component (as Ramulator 2
// does): each parameter's name, type, unit, default, range and description
// live in one place, and the same table loads YAML (rejecting unknown keys,
// checking types and ranges), fills defaults, and documents itself.
#include <nlohmann/json.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "sim/yaml_node.h"

namespace sim {

// Closed or open lower bound and closed upper bound on a numeric parameter.
struct Range {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false;
  bool contains(double v) const { return (lo_open ? v > lo : v >= lo) && v <= hi; }
  std::string str() const;
};
inline Range positive() { return Range{0.0, std::numeric_limits<double>::infinity(), true}; }
inline Range at_least(double lo) { return Range{lo, std::numeric_limits<double>::infinity(), false}; }
inline Range between(double lo, double hi) { return Range{lo, hi, false}; }

template <class T>
class ParamTable {
 public:
  ParamTable(std::string component, std::string description)
      : component_(std::move(component)), description_(std::move(description)) {}

  // A real number; no default (nullopt) means required.
  ParamTable& real(const char* name, double T::*field, const char* unit, std::optional<double> def, Range range,
                   const char* desc) {
    return numeric<double>(name, field, unit, def, range, desc, "number");
  }
  // A whole number (counts, sizes in bytes, cycles).
  template <class I>
  ParamTable& integer(const char* name, I T::*field, const char* unit, std::optional<I> def, Range range,
                      const char* desc) {
    static_assert(std::is_integral<I>::value, "integer() takes an integral field");
    return numeric<I>(name, field, unit, def, range, desc, "integer");
  }
  ParamTable& flag(const char* name, bool T::*field, bool def, const char* desc) {
    Entry e = make_entry(name, "bool", "", def ? "true" : "false", desc);
    e.load = [field](const YamlNode& n, T& out) { out.*field = n.as_bool(); };
    e.set_default = [field, def](T& out) { out.*field = def; };
    entries_.push_back(std::move(e));
    return *this;
  }
  // One of a fixed set of words.
  ParamTable& choice(const char* name, std::string T::*field, std::vector<std::string> choices,
                     std::optional<std::string> def, const char* desc) {
    std::string type = "one of";
    for (const auto& c : choices) type += " " + c;
    Entry e = make_entry(name, type, "", def ? *def : std::string("(required)"), desc);
    e.load = [field, choices, name](const YamlNode& n, T& out) {
      std::string v = n.as_string();
      for (const auto& c : choices)
        if (c == v) {
          out.*field = v;
          return;
        }
      std::string msg = "'" + v + "' is not a valid " + std::string(name) + "; expected one of:";
      for (const auto& c : choices) msg += " " + c;
      std::string hint = did_you_mean(v, choices);
      if (!hint.empty()) msg += " (" + hint + ")";
      n.fail(msg);
    };
    e.set_default = [field, def](T& out) {
      if (def) out.*field = *def;
    };
    e.required = !def.has_value();
    entries_.push_back(std::move(e));
    return *this;
  }
  // Free text (names, descriptions).
  ParamTable& text(const char* name, std::string T::*field, std::string def, const char* desc) {
    Entry e = make_entry(name, "string", "", def, desc);
    e.load = [field](const YamlNode& n, T& out) { out.*field = n.as_string(); };
    e.set_default = [field, def](T& out) { out.*field = def; };
    entries_.push_back(std::move(e));
    return *this;
  }
  // A nested mapping with its own table; absent means all sub-defaults.
  template <class S>
  ParamTable& group(const char* name, S T::*field, const ParamTable<S>& sub) {
    Entry e = make_entry(name, "mapping", "", "", sub.description());
    e.load = [field, sub](const YamlNode& n, T& out) { sub.load(n, out.*field); };
    e.set_default = [field, sub](T& out) { sub.apply_defaults(out.*field); };
    e.describe_sub = [sub]() { return sub.describe(); };
    e.is_group = true;
    entries_.push_back(std::move(e));
    return *this;
  }

  // A key this table accepts but leaves to its caller (e.g. `kind`).
  ParamTable& allow(const char* name) {
    allowed_.push_back(name);
    return *this;
  }

  // Fills `out` from a mapping: defaults first, then the keys present.
  void load(const YamlNode& node, T& out) const {
    apply_defaults(out);
    if (!node.present()) {
      for (const auto& e : entries_)
        if (e.required) node.fail("missing the mapping that holds required key '" + e.name + "'");
      if (node.raw().IsDefined() && !node.raw().IsNull()) node.fail("expected a mapping");
      return;
    }
    if (!node.is_map()) node.fail("expected a mapping, got " + describe_yaml(node.raw()));
    std::vector<std::string> known = names();
    known.insert(known.end(), allowed_.begin(), allowed_.end());
    node.reject_unknown_keys(known);
    for (const auto& e : entries_) {
      YamlNode child = node[e.name];
      if (!child.present()) {
        if (e.required) child.fail("missing required key (" + e.description + ")");
        if (e.is_group) e.load(child, out);  // still validates required sub-keys
        continue;
      }
      e.load(child, out);
    }
  }

  void apply_defaults(T& out) const {
    for (const auto& e : entries_) e.set_default(out);
  }

  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : entries_) out.push_back(e.name);
    return out;
  }

  const std::string& description() const { return description_; }

  // {component, description, params: [{name, type, unit, default, range, description}]}
  nlohmann::json describe() const {
    nlohmann::json params = nlohmann::json::array();
    for (const auto& e : entries_) {
      nlohmann::json p{
          {"name", e.name}, {"type", e.type}, {"unit", e.unit}, {"default", e.def}, {"description", e.description}};
      if (!e.range.empty()) p["range"] = e.range;
      if (e.describe_sub) p["params"] = e.describe_sub()["params"];
      params.push_back(p);
    }
    return {{"component", component_}, {"description", description_}, {"params", params}};
  }

 private:
  struct Entry {
    std::string name, type, unit, def, description, range;
    std::function<void(const YamlNode&, T&)> load;
    std::function<void(T&)> set_default;
    std::function<nlohmann::json()> describe_sub;
    bool required = false;
    bool is_group = false;
  };

  static Entry make_entry(std::string name, std::string type, std::string unit, std::string def, std::string desc) {
    Entry e;
    e.name = std::move(name);
    e.type = std::move(type);
    e.unit = std::move(unit);
    e.def = std::move(def);
    e.description = std::move(desc);
    return e;
  }

  template <class V>
  ParamTable& numeric(const char* name, V T::*field, const char* unit, std::optional<V> def, Range range,
                      const char* desc, const char* type) {
    std::ostringstream d;
    if (def)
      d << *def;
    else
      d << "(required)";
    Entry e = make_entry(name, type, unit, d.str(), desc);
    e.range = range.str();
    e.required = !def.has_value();
    e.load = [field, range, unit](const YamlNode& n, T& out) {
      double v;
      if constexpr (std::is_integral<V>::value) {
        v = static_cast<double>(n.as_int());
      } else {
        v = n.as_double();
      }
      if (!range.contains(v)) {
        std::ostringstream m;
        m << "value " << n.scalar() << " is out of range: expected " << range.str();
        if (unit && *unit) m << " " << unit;
        n.fail(m.str());
      }
      out.*field = static_cast<V>(v);
    };
    e.set_default = [field, def](T& out) {
      if (def) out.*field = *def;
    };
    entries_.push_back(std::move(e));
    return *this;
  }

  std::string component_, description_;
  std::vector<Entry> entries_;
  std::vector<std::string> allowed_;
};

}  // namespace sim
