#pragma once
// Helpers for the MaxText configuration tests: a config mapping from text,
// and the error its loading throws.
#include <catch2/catch.hpp>

#include <string>

#include "sim/error.h"
#include "sim/yaml_node.h"
#include "workloads/maxtext/config.h"

namespace maxtext_fixture {

// "config:" holds the MaxText keys; the origin names a file beside
// tests/data so that configs/maxtext is found through the source tree.
inline workloads::MaxTextConfig load(const std::string& config_yaml, std::uint32_t chips, std::uint32_t slices = 1,
                                     const std::string& flags = "") {
  const sim::YamlNode doc =
      sim::YamlNode::load_string("config: " + config_yaml + "\nxla_flags: \"" + flags + "\"\n", "maxtext-test.yaml");
  const sim::YamlNode f = doc["xla_flags"];
  return workloads::load_maxtext_config(doc["config"], flags.empty() ? nullptr : &f, chips, slices);
}

// The ConfigError loading throws ("" location when none is thrown).
inline sim::ConfigError error_of(const std::string& config_yaml, std::uint32_t chips, std::uint32_t slices = 1,
                                 const std::string& flags = "") {
  try {
    load(config_yaml, chips, slices, flags);
  } catch (const sim::ConfigError& e) {
    return e;
  }
  return sim::ConfigError({}, "", "no error");
}

}  // namespace maxtext_fixture
