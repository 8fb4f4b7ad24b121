#pragma once
// A sweep's picture from DIR/summary.json, drawn by a script of scripts/
// with Debian's /usr/bin/python3 and matplotlib: DIR/speedup.png
// (scripts/plot_speedup: measured speedup vs chips, the ideal line and the
// fitted Amdahl or Gustafson curve) or, for a sweep of decode steps,
// DIR/serving.png (scripts/plot_serving: step time and tokens/s vs batch
// against the roofline, with its knee). A missing Python or matplotlib is
// not an error: the sweep's results are complete without the picture.
#include <string>

namespace sweep {

struct PlotResult {
  bool drawn = false;
  std::string path;  // the image, when drawn
  std::string note;  // why not, when not
};

PlotResult plot_speedup(const std::string& out_dir);
PlotResult plot_serving(const std::string& out_dir);

// The script `name` (plot_speedup, plot_serving), from the source tree or
// beside the binary; "" when not found.
std::string find_plot_script(const std::string& name);

}  // namespace sweep
