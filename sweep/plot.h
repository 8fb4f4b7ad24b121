#pragma once
// DIR/speedup.png from DIR/summary.json: measured speedup vs chips, the
// ideal line and the fitted Amdahl (or Gustafson) curve, drawn by
// scripts/plot_speedup with Debian's /usr/bin/python3 and matplotlib.
// A missing Python or matplotlib is not an error: the sweep's results are
// complete without the picture.
#include <string>

namespace sweep {

struct PlotResult {
  bool drawn = false;
  std::string path;  // the image, when drawn
  std::string note;  // why not, when not
};

PlotResult plot_speedup(const std::string& out_dir);

// The script, from the source tree or beside the binary; "" when not found.
std::string find_plot_script();

}  // namespace sweep
