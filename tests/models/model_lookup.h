#pragma once
// Finding ops and layers of a ModelSpec by name, for tests.
#include <catch2/catch.hpp>

#include <string>

#include "models/model_spec.h"

namespace model_lookup {

inline const models::LayerSpec& layer(const models::ModelSpec& m, const std::string& name) {
  for (const auto& l : m.layers)
    if (l.name == name) return l;
  FAIL("no layer " << name);
  throw;  // unreachable: FAIL throws
}

inline const models::MatmulSpec& matmul(const models::LayerSpec& l, const std::string& name) {
  for (const auto* list : {&l.forward, &l.backward})
    for (const auto& mm : *list)
      if (mm.name == name) return mm;
  FAIL("no matmul " << name << " in " << l.name);
  throw;
}

inline bool has_matmul(const models::LayerSpec& l, const std::string& name) {
  for (const auto* list : {&l.forward, &l.backward})
    for (const auto& mm : *list)
      if (mm.name == name) return true;
  return false;
}

}  // namespace model_lookup
