#pragma once
// A sweep's pictures from DIR/summary.json, each drawn by a script with
// Debian's /usr/bin/python3 and matplotlib: speedup.png (scripts/plot_speedup:
// measured speedup vs chips, the ideal line and the fitted Amdahl or
// Gustafson curve) and published.png (scripts/plot_published: the published
// figure and tpusim's against the swept value) or, for a sweep of decode
// steps, serving.png (scripts/plot_serving: step time and tokens/s vs batch
// against the roofline, with its knee). A missing Python or matplotlib is
// not an error: the sweep's results are complete without them.
#include <string>

namespace sweep {

struct PlotResult {
  bool drawn = false;
  std::string path;  // the image, when drawn
  std::string note;  // why not, when not
};

// DIR/<image> drawn by scripts/<script_name> from DIR/<input> (tpusim
// plan's plot reads plan.json).
PlotResult draw_plot(const std::string& out_dir, const std::string& script_name, const std::string& image,
                     const std::string& input = "summary.json");

// The script, from the source tree or beside the binary; "" when not found.
std::string find_plot_script(const std::string& name);

}  // namespace sweep
