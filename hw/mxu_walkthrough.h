#pragma once
// Text picture of the PE array during one cycle, for teaching
// (`tpusim explain mxu`). Meant for small arrays (up to about 8 x 8).
#include <string>

#include "hw/mxu_state_view.h"

namespace hw {

// Draws, for cycle v.cycle: what the feeder and the weight loader do, and
// three grids over the PEs: the weights in both banks (the one the PE's
// activation selects marked *), the activation wavefront (value and
// tile:vector, '.' for a bubble) and the psum each PE produces.
std::string render_walkthrough_frame(const ArrayStateView& v);

}  // namespace hw
