#include "app/html_page.h"

#include <exception>
#include <filesystem>

#include "app/cli.h"
#include "sim/output.h"

namespace app {

void check_output_file(const std::string& option, const std::string& path) {
  if (path.empty()) throw UsageError(option + ": expected a file name");
  // sim::write_file_atomic would create a missing folder; a mistyped one is
  // refused instead.
  const std::filesystem::path folder = std::filesystem::absolute(path).parent_path();
  if (!std::filesystem::is_directory(folder))
    throw UsageError(option + ": cannot write '" + path + "': no folder '" + folder.string() + "'");
  // The one output-path policy (sim/output.h): a regular file or nothing.
  const std::string problem = sim::output_path_problem(path);
  if (!problem.empty()) throw UsageError(option + ": cannot write '" + path + "': it " + problem);
}

void write_html_page(const std::string& option, const std::string& path, const std::string& page) {
  try {
    sim::write_file_atomic(path, page);
  } catch (const std::exception& e) {
    throw UsageError(option + ": cannot write '" + path + "': " + e.what());
  }
}

std::string fill_html_page(const std::string& page, std::string json) {
  // Inside <script>, "</" could end the element early (HTML spec, "script
  // data"); "<\/" is the same JSON string.
  for (std::size_t at = json.find("</"); at != std::string::npos; at = json.find("</", at + 3))
    json.insert(at + 1, "\\");
  std::string out = page;
  const std::string marker = "__DATA__";
  out.replace(out.find(marker), marker.size(), json);
  return out;
}

}  // namespace app
