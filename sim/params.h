#pragma once
// Typed parameter declarations, one table per component (as Ramulator 2
// does): each parameter's name, type, unit, default, range and description
// live in one place, and the same table loads YAML (rejecting unknown keys,
// checking types and ranges, parsing enums once into their C++ values),
// fills defaults, and documents itself (`tpusim explain`).
//
// A table holds, in the order the keys are read:
//   real, integer, flag   numbers and booleans, each with a unit and range
//   enumeration           one of a fixed set of words, parsed into a C++ enum
//                         (EnumNames: the spellings, also used by to_string)
//   choice, text          words kept as strings
//   list                  a list of items (numbers, flags, words, enums)
//   group                 a nested mapping with its own table
//   custom                a key whose value needs its own reader (a file
//                         name or a mapping, a mapping of free names, ...)
//   then                  a check across keys read so far (not a key)
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "sim/yaml_node.h"

namespace sim {

// Lower bound (closed or open) and closed upper bound on a numeric parameter.
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
// (lo, hi]: e.g. a learning rate above 0 and at most 100.
inline Range above(double lo, double hi = std::numeric_limits<double>::infinity()) { return Range{lo, hi, true}; }

// The declared range narrowed to what an integer type holds, so that a value
// that does not fit the field (4294967298 for a 32-bit field) is out of
// range instead of wrapping around.
// (YamlNode::as_int reads 64-bit integers, so 64-bit fields need no narrowing.)
template <class I>
Range fitting(Range r) {
  static_assert(std::is_integral<I>::value, "fitting() is for integer fields");
  constexpr bool narrow_lo = static_cast<long double>(std::numeric_limits<I>::min()) >
                             static_cast<long double>(std::numeric_limits<std::int64_t>::min());
  constexpr bool narrow_hi = static_cast<long double>(std::numeric_limits<I>::max()) <
                             static_cast<long double>(std::numeric_limits<std::int64_t>::max());
  if (narrow_lo) r.lo = std::max(r.lo, static_cast<double>(std::numeric_limits<I>::min()));
  if (narrow_hi) r.hi = std::min(r.hi, static_cast<double>(std::numeric_limits<I>::max()));
  return r;
}

// Reads one number and checks it against its range; a failure names the
// node's location, key path, the range and the unit.
double read_real(const YamlNode& n, const Range& range, const std::string& unit);
std::int64_t read_integer(const YamlNode& n, const Range& range, const std::string& unit);

template <class I>
I read_integer_as(const YamlNode& n, const Range& range, const std::string& unit) {
  return static_cast<I>(read_integer(n, fitting<I>(range), unit));
}

// One spelling of an enum value. The description, when given, is shown in
// messages and by `tpusim explain`.
template <class E>
struct EnumChoice {
  E value;
  std::string name;
  std::string description;
};

// The spellings of an enum, in documentation order: the one place that maps
// words to values, used to parse YAML (with a suggestion for near misses)
// and to write values back (to_string, report.json).
template <class E>
class EnumNames {
 public:
  EnumNames(std::string what, std::vector<EnumChoice<E>> choices)
      : what_(std::move(what)), choices_(std::move(choices)) {}

  const std::string& what() const { return what_; }
  const std::vector<EnumChoice<E>>& choices() const { return choices_; }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& c : choices_) out.push_back(c.name);
    return out;
  }
  const char* name(E v) const {
    for (const auto& c : choices_)
      if (c.value == v) return c.name.c_str();
    return "?";
  }
  std::optional<E> find(const std::string& word) const {
    for (const auto& c : choices_)
      if (c.name == word) return c.value;
    return std::nullopt;
  }
  // "a | b | c", the type column of `tpusim explain`.
  std::string type() const {
    std::string s;
    for (const auto& c : choices_) s += (s.empty() ? "" : " | ") + c.name;
    return s;
  }
  // "expected one of: a (what a is), b"
  std::string expected() const {
    std::string s = "expected one of: ";
    for (std::size_t i = 0; i < choices_.size(); ++i) {
      s += (i ? ", " : "") + choices_[i].name;
      if (!choices_[i].description.empty()) s += " (" + choices_[i].description + ")";
    }
    return s;
  }
  // "unknown topology 'torus4d'; expected one of: ring, torus2d, torus3d; did you mean 'torus3d'?"
  std::string unknown(const std::string& word) const {
    std::string msg = "unknown " + what_ + " '" + word + "'; " + expected();
    const std::string hint = did_you_mean(word, names());
    return hint.empty() ? msg : msg + "; " + hint;
  }
  // Throws ConfigError at key_path (no location: for sim::located callers).
  E parse(const std::string& word, const std::string& key_path) const {
    if (auto v = find(word)) return *v;
    throw ConfigError({}, key_path, unknown(word));
  }
  // Fails located at the node.
  E parse(const YamlNode& n) const {
    const std::string word = n.as_string();
    if (auto v = find(word)) return *v;
    n.fail(unknown(word));
  }

 private:
  std::string what_;
  std::vector<EnumChoice<E>> choices_;
};

// What one item of a list is: its type, unit and range for the
// documentation, and how it is read.
template <class V>
struct Item {
  std::string type, unit, range;
  std::function<V(const YamlNode&)> read;
};
template <class I>
Item<I> integer_item(const std::string& unit, Range range) {
  return {"integer", unit, range.str(),
          [unit, range](const YamlNode& n) { return read_integer_as<I>(n, range, unit); }};
}
Item<double> real_item(const std::string& unit, Range range);
Item<bool> flag_item();
Item<std::string> text_item();
// `names` must outlive the item (enum tables are function-local statics).
template <class E>
Item<E> enum_item(const EnumNames<E>& names) {
  return {names.type(), "", "", [&names](const YamlNode& n) { return names.parse(n); }};
}

// How many items a list takes; scalar_ok: a single item stands for a list
// of one (`axes: data` for `axes: [data]`).
struct ListSize {
  std::size_t min = 0;
  std::size_t max = std::numeric_limits<std::size_t>::max();
  bool scalar_ok = false;
};

// Where a table puts a value: a member (&Spec::m) or, for a value further
// down the object, a function returning it
// ([](Spec& s) -> std::uint64_t& { return s.shape.m; }).
template <class T, class V>
struct Field {
  std::function<V&(T&)> get;
  Field(V T::*member) : get([member](T& t) -> V& { return t.*member; }) {}
  template <class F, class = std::enable_if_t<!std::is_member_pointer<F>::value &&
                                              std::is_convertible<std::invoke_result_t<F, T&>, V&>::value>>
  Field(F f) : get(std::move(f)) {}
};
// Keeps a parameter out of template argument deduction.
template <class X>
struct NoDeduce {
  using type = X;
};
template <class X>
using NoDeduceT = typename NoDeduce<X>::type;

// How a custom key is documented.
struct Doc {
  std::string type, unit, def, range;
};

template <class T>
class ParamTable {
 public:
  ParamTable(std::string component, std::string description)
      : component_(std::move(component)), description_(std::move(description)) {}

  // A real number; no default (nullopt) means required.
  ParamTable& real(const char* name, Field<T, double> field, const char* unit, std::optional<double> def, Range range,
                   const char* desc) {
    Entry e = make_entry(name, "number", unit, number_text(def), desc);
    e.range = range.str();
    e.required = !def.has_value();
    const std::string u = unit;
    e.load = [field, range, u](const YamlNode& n, T& out) { field.get(out) = read_real(n, range, u); };
    e.set_default = [field, def](T& out) {
      if (def) field.get(out) = *def;
    };
    return add(std::move(e));
  }
  // A real number that may be left out (nullopt); `absent` says what that means.
  ParamTable& real(const char* name, Field<T, std::optional<double>> field, const char* unit, const char* absent,
                   Range range, const char* desc) {
    Entry e = make_entry(name, "number", unit, absent, desc);
    e.range = range.str();
    const std::string u = unit;
    e.load = [field, range, u](const YamlNode& n, T& out) { field.get(out) = read_real(n, range, u); };
    e.set_default = [field](T& out) { field.get(out) = std::nullopt; };
    return add(std::move(e));
  }
  // A whole number (counts, sizes in bytes, cycles). Values the field's type
  // cannot hold are out of range.
  template <class I>
  ParamTable& integer(const char* name, NoDeduceT<Field<T, I>> field, const char* unit, std::optional<I> def,
                      Range range, const char* desc) {
    static_assert(std::is_integral<I>::value, "integer() takes an integral field");
    Entry e = make_entry(name, "integer", unit, number_text(def), desc);
    e.range = range.str();
    e.required = !def.has_value();
    const std::string u = unit;
    e.load = [field, range, u](const YamlNode& n, T& out) { field.get(out) = read_integer_as<I>(n, range, u); };
    e.set_default = [field, def](T& out) {
      if (def) field.get(out) = *def;
    };
    return add(std::move(e));
  }
  ParamTable& flag(const char* name, Field<T, bool> field, bool def, const char* desc) {
    Entry e = make_entry(name, "bool", "", def ? "true" : "false", desc);
    e.load = [field](const YamlNode& n, T& out) { field.get(out) = n.as_bool(); };
    e.set_default = [field, def](T& out) { field.get(out) = def; };
    return add(std::move(e));
  }
  // One of a fixed set of values, parsed once into the enum field.
  template <class E>
  ParamTable& enumeration(const char* name, NoDeduceT<Field<T, E>> field, const EnumNames<E>& names,
                          NoDeduceT<std::optional<E>> def, const char* desc) {
    Entry e = make_entry(name, names.type(), "", def ? std::string(names.name(*def)) : "(required)", desc);
    e.required = !def.has_value();
    e.missing = names.expected();
    e.load = [field, &names](const YamlNode& n, T& out) { field.get(out) = names.parse(n); };
    e.set_default = [field, def](T& out) {
      if (def) field.get(out) = *def;
    };
    return add(std::move(e));
  }
  // One of a fixed set of words, kept as the word.
  ParamTable& choice(const char* name, Field<T, std::string> field, std::vector<std::string> choices,
                     std::optional<std::string> def, const char* desc) {
    std::vector<EnumChoice<std::string>> list;
    for (const auto& c : choices) list.push_back({c, c, ""});
    const EnumNames<std::string> names(name, std::move(list));
    Entry e = make_entry(name, names.type(), "", def ? *def : std::string("(required)"), desc);
    e.load = [field, names](const YamlNode& n, T& out) { field.get(out) = names.parse(n); };
    e.set_default = [field, def](T& out) {
      if (def) field.get(out) = *def;
    };
    e.required = !def.has_value();
    return add(std::move(e));
  }
  // Free text (names, descriptions, paths); no default (nullopt) means required.
  ParamTable& text(const char* name, Field<T, std::string> field, std::optional<std::string> def, const char* desc) {
    Entry e = make_entry(name, "string", "", def ? *def : std::string("(required)"), desc);
    e.required = !def.has_value();
    e.load = [field](const YamlNode& n, T& out) { field.get(out) = n.as_string(); };
    e.set_default = [field, def](T& out) {
      if (def) field.get(out) = *def;
    };
    return add(std::move(e));
  }
  // A list of items. `absent` documents the default (what a missing key
  // means); nullptr makes the key required. A missing key leaves the field
  // as the struct initialises it, or as a later `then` step sets it.
  template <class V>
  ParamTable& list(const char* name, NoDeduceT<Field<T, std::vector<V>>> field, Item<V> item, ListSize size,
                   const char* absent, const char* desc) {
    std::string type = "list of " + item.type;
    if (size.scalar_ok) type = item.type + " or " + type;
    Entry e = make_entry(name, type, item.unit, absent ? absent : "(required)", desc);
    e.range = item.range;
    if (size.min == size.max) {
      e.range = std::to_string(size.min) + (size.min == 1 ? " item" : " items") + (e.range.empty() ? "" : ", each ") +
                e.range;
    }
    e.required = absent == nullptr;
    e.load = [field, item, size](const YamlNode& n, T& out) {
      std::vector<V> values;
      if (size.scalar_ok && n.is_scalar()) {
        values.push_back(item.read(n));
      } else {
        if (!n.is_sequence())
          n.fail("expected " + std::string(size.scalar_ok ? "one " + item.type + " or " : "") + "a list of " +
                 item.type + " values, got " + describe_yaml(n.raw()));
        for (std::size_t i = 0; i < n.size(); ++i) values.push_back(item.read(n[i]));
      }
      if (values.size() < size.min || values.size() > size.max) {
        std::string want = size.min == size.max ? std::to_string(size.min)
                           : size.max == std::numeric_limits<std::size_t>::max()
                               ? "at least " + std::to_string(size.min)
                               : "between " + std::to_string(size.min) + " and " + std::to_string(size.max);
        n.fail("expected " + want + " item" + (want == "1" ? "" : "s") + ", got " + std::to_string(values.size()));
      }
      field.get(out) = std::move(values);
    };
    e.set_default = [](T&) {};
    return add(std::move(e));
  }
  // A nested mapping with its own table; absent means all sub-defaults.
  template <class S>
  ParamTable& group(const char* name, S T::*field, const ParamTable<S>& sub) {
    Entry e = make_entry(name, "mapping", "", "", sub.description());
    e.load = [field, sub](const YamlNode& n, T& out) { sub.load(n, out.*field); };
    e.set_default = [field, sub](T& out) { sub.apply_defaults(out.*field); };
    e.describe_sub = [sub]() { return sub.describe(); };
    e.is_group = true;
    return add(std::move(e));
  }
  // A nested mapping that is either given whole or not at all: absent leaves
  // the field as it is (e.g. a blocking of zeros meaning "choose one").
  template <class S>
  ParamTable& optional_group(const char* name, S T::*field, const ParamTable<S>& sub, const char* absent) {
    Entry e = make_entry(name, "mapping", "", absent, sub.description());
    e.load = [field, sub](const YamlNode& n, T& out) { sub.load(n, out.*field); };
    e.set_default = [](T&) {};
    e.describe_sub = [sub]() { return sub.describe(); };
    return add(std::move(e));
  }
  // A key read by `load` (called only when the key is present); `sub`, when
  // given, documents the keys of a mapping it takes.
  ParamTable& custom(const char* name, Doc doc, const char* desc, std::function<void(const YamlNode&, T&)> load,
                     bool required = false, std::function<nlohmann::json()> sub = nullptr) {
    Entry e = make_entry(name, doc.type, doc.unit, required ? std::string("(required)") : doc.def, desc);
    e.range = doc.range;
    e.required = required;
    e.load = std::move(load);
    e.set_default = [](T&) {};
    e.describe_sub = std::move(sub);
    return add(std::move(e));
  }
  // A step between keys: runs with the whole mapping (present or not) and
  // what was read so far, e.g. to check one key against another or to set a
  // default that depends on another key.
  ParamTable& then(std::function<void(const YamlNode&, T&)> step) {
    Entry e;
    e.is_step = true;
    e.load = std::move(step);
    e.set_default = [](T&) {};
    return add(std::move(e));
  }

  // Marks the key declared just before as informational: it names or
  // describes the run and changes no simulated figure (the key walk in
  // tests/app/test_config_keys.cpp holds every other key to changing one).
  ParamTable& informational(const char* why) {
    entries_.back().informational = why;
    return *this;
  }

  // A key this table accepts but leaves to its caller.
  ParamTable& allow(const char* name) {
    allowed_.push_back(name);
    return *this;
  }

  // Fills `out` from a mapping: defaults first, then the keys present, in
  // declaration order.
  void load(const YamlNode& node, T& out) const {
    apply_defaults(out);
    if (!node.present()) {
      for (const auto& e : entries_)
        if (e.required) node.fail("missing the mapping that holds required key '" + e.name + "'");
      if (node.raw().IsDefined() && !node.raw().IsNull()) node.fail("expected a mapping");
      for (const auto& e : entries_)
        if (e.is_step) e.load(node, out);
      return;
    }
    if (!node.is_map()) node.fail("expected a mapping, got " + describe_yaml(node.raw()));
    std::vector<std::string> known = names();
    known.insert(known.end(), allowed_.begin(), allowed_.end());
    node.reject_unknown_keys(known);
    for (const auto& e : entries_) {
      if (e.is_step) {
        e.load(node, out);
        continue;
      }
      YamlNode child = node[e.name];
      if (!child.present()) {
        if (e.required)
          child.fail("missing required key (" + e.description + ")" + (e.missing.empty() ? "" : "; " + e.missing));
        if (e.is_group) e.load(child, out);  // still validates required sub-keys
        continue;
      }
      e.load(child, out);
    }
  }

  void apply_defaults(T& out) const {
    for (const auto& e : entries_) e.set_default(out);
  }

  // The keys, in declaration order.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : entries_)
      if (!e.is_step) out.push_back(e.name);
    return out;
  }

  const std::string& component() const { return component_; }
  const std::string& description() const { return description_; }

  // {component, description, params: [{name, type, unit, default, range, description, informational?, params?}]}
  nlohmann::json describe() const {
    nlohmann::json params = nlohmann::json::array();
    for (const auto& e : entries_) {
      if (e.is_step) continue;
      nlohmann::json p{
          {"name", e.name}, {"type", e.type}, {"unit", e.unit}, {"default", e.def}, {"description", e.description}};
      if (!e.range.empty()) p["range"] = e.range;
      if (!e.informational.empty()) p["informational"] = e.informational;
      if (e.describe_sub) p["params"] = e.describe_sub()["params"];
      params.push_back(p);
    }
    return {{"component", component_}, {"description", description_}, {"params", params}};
  }

 private:
  struct Entry {
    std::string name, type, unit, def, description, range;
    std::string missing;        // added to "missing required key", e.g. the choices
    std::string informational;  // why the key changes no simulated figure; empty: it must change one
    std::function<void(const YamlNode&, T&)> load;
    std::function<void(T&)> set_default;
    std::function<nlohmann::json()> describe_sub;
    bool required = false;
    bool is_group = false;
    bool is_step = false;
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
  static std::string number_text(const std::optional<V>& def) {
    if (!def) return "(required)";
    std::ostringstream d;
    if constexpr (std::is_integral<V>::value) {
      d << +*def;  // a number, also for 8-bit types
    } else {
      d << *def;
    }
    return d.str();
  }

  ParamTable& add(Entry e) {
    entries_.push_back(std::move(e));
    return *this;
  }

  std::string component_, description_;
  std::vector<Entry> entries_;
  std::vector<std::string> allowed_;
};

}  // namespace sim
