#pragma once
// The self-contained HTML pages tpusim writes (`explain mxu --html`,
// `run --html`): a template with inline CSS and JavaScript and one
// <script type="application/json"> element whose text is __DATA__.
#include <string>

namespace app {

// `page` with its __DATA__ marker replaced by `json`, made safe inside a
// <script> element.
std::string fill_html_page(const std::string& page, std::string json);

// Refuses (UsageError, exit 2) a file `path` given to `option` (a page, a VCD) that cannot
// be written: an empty name, a folder that does not exist, or a path the
// output-path policy refuses (a device, FIFO, socket, directory or a link
// leaving its folder; sim::output_path_problem), checked before the work
// that fills the page, which would otherwise be lost.
void check_output_file(const std::string& option, const std::string& path);

// Writes `page` to `path` atomically (sim::write_file_atomic).
void write_html_page(const std::string& option, const std::string& path, const std::string& page);

}  // namespace app
