#pragma once
// A run as one self-contained web page (`tpusim run EXP --html FILE`):
// inline CSS and JavaScript, no network. The page embeds the run's
// report.json and the slices of its trace.json, and only draws them: the
// engines' timeline per simulated chip, the pipeline schedule with its
// bubbles shaded, the chip's roofline with the run's point, and memory per
// chip as stacked bars.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>

namespace app {

// At most this many trace slices go into a page (a few MB of HTML): past
// it each engine track's slices are merged per time bin (the page says so).
constexpr std::size_t kPageMaxSlices = 200000;

std::string render_run_html(const nlohmann::json& report, const std::string& trace_json,
                            std::size_t max_slices = kPageMaxSlices);

}  // namespace app
