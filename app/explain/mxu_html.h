#pragma once
// The walk-through as one self-contained web page (`tpusim explain mxu
// --html FILE`): inline CSS and JavaScript, no network, opens from disk. The
// page embeds the walk-through's frames as JSON and only draws them, so every
// number on it comes from the PE engine.
#include <string>

#include "app/explain/mxu_walkthrough.h"

namespace explain {

// The page for `w`. `command` is the tpusim command line that regenerates
// it (shown on the page); `command_base` the same without operands and
// output, to which the page adds the student's own --a, --b and --html.
std::string render_mxu_html(const MxuWalkthrough& w, const std::string& command, const std::string& command_base);

// The frames' numbers as JSON (the object the page embeds).
std::string mxu_walkthrough_json(const MxuWalkthrough& w, const std::string& command, const std::string& command_base);

}  // namespace explain
