// The report.json fields of `simulator` that measure the host, not the
// simulation: they differ between two runs of one experiment, so tests that
// compare reports leave them out (scripts/compare-reports has the same list
// as WALL_CLOCK).
#pragma once

namespace testing_cli {

inline constexpr const char* kHostFields[] = {"wall_time_s", "events_per_s", "peak_rss_bytes"};

}  // namespace testing_cli
