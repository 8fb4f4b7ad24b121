#pragma once
// Two runs side by side (`tpusim compare A B`, tpusim.compare in Python):
// the signed change of the step time, its phases, exposed communication,
// memory per category and busy fractions, from A to B, and the largest
// contributor to the step time's change (docs/interface.md).
#include <nlohmann/json.hpp>

#include <string>

namespace app {

// A run folder (its report.json) or a report.json file, read; throws
// sim::ConfigError naming `path` when it is neither.
nlohmann::json read_report(const std::string& path);

// {"a": {name, path}, "b": ..., "rows": [{group, key, unit, a, b, delta,
// relative}], "step_time_delta_s", "largest_contributor": {key, delta_s,
// share} or null}: the phase or exposed communication whose time moved
// most, or for reports without phases the busy fraction whose busy time
// (fraction x step time) did, with its share of the step's change. A
// figure only one report has keeps null on the other side and no delta.
nlohmann::json compare_reports(const nlohmann::json& a, const nlohmann::json& b, const std::string& a_path,
                               const std::string& b_path);

// The comparison as the text table `tpusim compare` prints.
std::string compare_text(const nlohmann::json& cmp);

// The comparison as one self-contained web page (app/compare_page.cpp): the
// two runs' figures in two columns, the change between them, a bar for each.
std::string compare_html(const nlohmann::json& cmp);

}  // namespace app
