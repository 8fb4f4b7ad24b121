#pragma once
// String tests and pieces the readers and writers share (C++17's
// std::string has no ends_with).
#include <string>
#include <vector>

namespace sim {

// Whether `s` ends with `tail`, as C++20's std::string::ends_with.
inline bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// A YAML flow sequence: "[a, b]" (`separator` "," for "[a,b]", one shell
// word in a --set argument).
inline std::string flow_list(const std::vector<std::string>& items, const char* separator = ", ") {
  std::string s = "[";
  for (std::size_t i = 0; i < items.size(); ++i) s += (i ? separator : "") + items[i];
  return s + "]";
}

// A torus or slice shape as people write it: "16x16", "4x4x8".
template <typename Int>
std::string shape_text(const std::vector<Int>& shape) {
  std::string s;
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

}  // namespace sim
