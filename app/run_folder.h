#pragma once
// Where `tpusim run` writes when no --out is given (docs/interface.md).
#include <string>

namespace app {

// runs/<name>/, unless an earlier run's report.json is there: then the first
// of runs/<name>-2/, runs/<name>-3/, ... that holds none. A run so never
// replaces another one's outputs unless --out names its folder, and the two
// can be compared (`tpusim compare runs/<name> runs/<name>-2`).
std::string default_run_folder(const std::string& name, const std::string& root = "runs");

}  // namespace app
