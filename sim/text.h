#pragma once
// String tests the readers share (C++17's std::string has no ends_with).
#include <string>

namespace sim {

// Whether `s` ends with `tail`, as C++20's std::string::ends_with.
inline bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace sim
