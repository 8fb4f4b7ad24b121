#pragma once
// `tpusim explain chip --diff A B`: two chips side by side, every key of
// the chip table (hw::chip_params) with each file's value, the keys that
// differ marked.
#include <string>

namespace app {

// The table for chips `a` and `b` (names as `chip:` takes them, or paths);
// throws sim::ConfigError when either is not a valid chip.
std::string chip_diff(const std::string& a, const std::string& b);

}  // namespace app
