#include "app/html_page.h"

namespace app {

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
