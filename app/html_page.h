#pragma once
// The self-contained HTML pages tpusim writes (`explain mxu --html`,
// `run --html`): a template with inline CSS and JavaScript and one
// <script type="application/json"> element whose text is __DATA__.
#include <string>

namespace app {

// `page` with its __DATA__ marker replaced by `json`, made safe inside a
// <script> element.
std::string fill_html_page(const std::string& page, std::string json);

}  // namespace app
