#pragma once
// Every MaxText key tpusim knows, classified once (docs/maxtext.md):
//   modelled    read into MaxTextConfig (spec.h), typed and range-checked,
//               for the training workload to act on;
//   ignored     accepted with no effect on a step's performance (names,
//               paths, logging, checkpointing, learning rate, ...), each
//               with its reason; listed in MaxTextConfig::ignored_keys;
//   unmodelled  changes performance in a way tpusim does not model: an error
//               (exit 2) unless allow_unmodelled: true, then listed in
//               MaxTextConfig::approximations. A value equal to base.yml's
//               default (`neutral`) changes nothing and is only listed as
//               ignored.
// The keys are those of MaxText's base.yml at the recipe commits of
// docs/reference/maxtext-recipes.md (Oct 2024 to Oct 2025); a key of none
// of them is unknown. The table is what the loader (config.h) and
// describe() (`tpusim explain`, once the kind is wired) read; it is a
// sim::ParamTable's cousin: one entry per key, but three classes and no
// defaults of its own (base.yml's come from configs/maxtext/base.yml).
#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/params.h"
#include "sim/yaml_node.h"
#include "workloads/maxtext/spec.h"

namespace workloads {

enum class KeyClass { modelled, ignored, unmodelled };
const char* to_string(KeyClass c);

struct MaxTextKey {
  std::string name;
  KeyClass cls = KeyClass::ignored;
  std::string type, unit, range;       // documentation (modelled keys)
  std::string meaning;                 // modelled: what it sets; otherwise why it is in its class
  std::optional<std::string> neutral;  // unmodelled: base.yml's value, which changes nothing (none: a list)
  std::function<void(const sim::YamlNode&, MaxTextConfig&)> read;  // modelled keys only
};

class MaxTextKeyTable {
 public:
  // Modelled keys: the value read and range-checked as sim::ParamTable does.
  template <class I>
  MaxTextKeyTable& integer(const char* name, sim::NoDeduceT<sim::Field<MaxTextConfig, I>> field, const char* unit,
                           sim::Range range, const char* meaning) {
    const std::string u = unit;
    return add({name, KeyClass::modelled, "integer", unit, range.str(), meaning, std::nullopt,
                [field, range, u](const sim::YamlNode& n, MaxTextConfig& c) {
                  field.get(c) = sim::read_integer_as<I>(n, range, u);
                }});
  }
  MaxTextKeyTable& real(const char* name, sim::Field<MaxTextConfig, double> field, const char* unit, sim::Range range,
                        const char* meaning);
  MaxTextKeyTable& flag(const char* name, sim::Field<MaxTextConfig, bool> field, const char* meaning);
  MaxTextKeyTable& text(const char* name, sim::Field<MaxTextConfig, std::string> field, const char* meaning);
  template <class E>
  MaxTextKeyTable& enumeration(const char* name, sim::NoDeduceT<sim::Field<MaxTextConfig, E>> field,
                               const sim::EnumNames<E>& names, const char* meaning) {
    return add({name, KeyClass::modelled, names.type(), "", "", meaning, std::nullopt,
                [field, &names](const sim::YamlNode& n, MaxTextConfig& c) { field.get(c) = names.parse(n); }});
  }
  // A modelled key with its own reader.
  MaxTextKeyTable& custom(const char* name, const char* type, const char* meaning,
                          std::function<void(const sim::YamlNode&, MaxTextConfig&)> read);
  // Keys with no effect on performance, sharing one reason.
  MaxTextKeyTable& ignored(std::vector<const char*> names, const char* why);
  // A key that changes performance and is not modelled; `neutral` is
  // base.yml's value (a value equal to it is accepted as ignored); nullptr:
  // no value is neutral (base.yml's is a list tpusim does not compare).
  MaxTextKeyTable& unmodelled(const char* name, const char* neutral, const char* why);

  const MaxTextKey* find(const std::string& name) const;
  std::vector<std::string> names() const;
  std::vector<std::string> names(KeyClass c) const;
  const std::vector<MaxTextKey>& keys() const { return keys_; }
  // {component, description, params: [{name, class, type, unit, range, description}]}
  nlohmann::json describe() const;

 private:
  MaxTextKeyTable& add(MaxTextKey k);
  std::vector<MaxTextKey> keys_;
};

// The one table.
const MaxTextKeyTable& maxtext_keys();

// Whether a value as written equals a neutral value: numbers compare as
// numbers (1.0 = 1 = 1.e0), booleans as booleans (True = true), else text.
bool same_value(const std::string& written, const std::string& neutral);

}  // namespace workloads
