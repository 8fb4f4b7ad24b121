#include "sweep/plot.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "sim/output.h"
#include "sweep/process.h"

namespace sweep {

namespace fs = std::filesystem;

namespace {

constexpr const char* kPython = "/usr/bin/python3";

std::string last_line(const fs::path& p) {
  std::ifstream in(p);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

}  // namespace

std::string find_plot_script(const std::string& name) {
  std::vector<fs::path> candidates;
#ifdef TPUSIM_SOURCE_DIR
  candidates.push_back(fs::path(TPUSIM_SOURCE_DIR) / "scripts" / name);
#endif
  const fs::path bin = fs::path(self_executable()).parent_path();
  candidates.push_back(bin / ".." / "scripts" / name);
  candidates.push_back(bin / ".." / "share" / "tpusim" / name);
  for (const auto& c : candidates)
    if (fs::is_regular_file(c)) return c.lexically_normal().string();
  return "";
}

PlotResult draw_plot(const std::string& out_dir, const std::string& script_name, const std::string& image,
                     const std::string& input) {
  PlotResult r;
  const std::string script = find_plot_script(script_name);
  if (script.empty()) {
    r.note = "no plot: scripts/" + script_name + " not found";
    return r;
  }
  if (::access(kPython, X_OK) != 0) {
    r.note = std::string("no plot: ") + kPython + " not found (Debian: apt-get install python3-matplotlib)";
    return r;
  }
  const fs::path dir(out_dir);
  const fs::path log = dir / (script_name + ".log");
  r.path = (dir / image).string();
  ChildExit ex;
  // Drawn under a temporary name ending in .png (matplotlib picks the format
  // from it) and renamed into place (sim::OutputSet: the output-path policy).
  sim::OutputSet picture(out_dir, {image});
  try {
    const std::string staged = picture.stage(image, ".png");
    ex = wait_for(spawn_process({kPython, script, (dir / input).string(), staged}, log.string()));
    if (ex.exit_code == 0) picture.commit();
  } catch (const std::runtime_error& e) {
    r.note = std::string("no plot: ") + e.what();
    return r;
  }
  if (ex.exit_code != 0) {
    r.note = "no plot: scripts/" + script_name + " failed: " + last_line(log) + " (see " + log.string() + ")";
    return r;
  }
  std::error_code ec;
  fs::remove(log, ec);
  r.drawn = true;
  return r;
}

}  // namespace sweep
