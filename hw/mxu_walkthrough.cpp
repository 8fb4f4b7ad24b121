#include "hw/mxu_walkthrough.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <vector>

namespace hw {

namespace {

std::string number(float x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", static_cast<double>(x));
  return buf;
}

std::string u64(std::uint64_t x) { return std::to_string(x); }

// A titled table with one cell per PE, columns padded to equal width.
std::string grid(const std::string& title, std::uint32_t rows, std::uint32_t cols,
                 const std::function<std::string(std::uint32_t, std::uint32_t)>& cell) {
  std::vector<std::string> cells(static_cast<std::size_t>(rows) * cols);
  std::size_t width = 2 + u64(cols - 1).size();
  for (std::uint32_t r = 0; r < rows; ++r) {
    for (std::uint32_t c = 0; c < cols; ++c) {
      cells[r * cols + c] = cell(r, c);
      width = std::max(width, cells[r * cols + c].size());
    }
  }
  const std::string row_label_pad(2 + u64(rows - 1).size(), ' ');
  auto padded = [width](const std::string& s) { return s + std::string(width - s.size() + 2, ' '); };
  std::string out = title + "\n" + row_label_pad + " ";
  auto end_line = [&out] {
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += "\n";
  };
  for (std::uint32_t c = 0; c < cols; ++c) out += padded("c" + u64(c));
  end_line();
  for (std::uint32_t r = 0; r < rows; ++r) {
    const std::string label = "r" + u64(r);
    out += " " + label + std::string(row_label_pad.size() - label.size(), ' ');
    for (std::uint32_t c = 0; c < cols; ++c) out += padded(cells[r * cols + c]);
    end_line();
  }
  return out;
}

std::string feeder_line(const ArrayStateView& v) {
  if (v.injected_tile < 0) return "feeder: idle";
  return "feeder: tile " + std::to_string(v.injected_tile) + " vector " + u64(v.injected_vector);
}

std::string loader_line(const ArrayStateView& v) {
  if (v.load_count == 0) return "loader: idle";
  std::string s = "loader:";
  for (std::size_t i = 0; i < v.load_count; ++i) {
    const MxuWeightLoad& load = v.loads[i];
    // Column c shifts during start+c .. start+c+R-1.
    const std::uint64_t since = v.cycle - load.start_cycle;
    const std::uint64_t first = since >= v.rows ? since - v.rows + 1 : 0;
    const std::uint64_t last = std::min<std::uint64_t>(since, v.cols - 1);
    s += (i ? "; tile " : " tile ") + u64(load.tile) + " -> bank " + u64(load.bank) +
         (first == last ? ", column " + u64(first) : ", columns " + u64(first) + "-" + u64(last)) +
         " shifting";
  }
  return s;
}

}  // namespace

std::string render_walkthrough_frame(const ArrayStateView& v) {
  std::string out = "cycle " + u64(v.cycle) + " | " + feeder_line(v) + " | " + loader_line(v) + "\n";
  out += grid("weights (bank 0/bank 1, * = bank the activation selects)", v.rows, v.cols,
              [&v](std::uint32_t r, std::uint32_t c) {
                std::string s;
                for (unsigned b = 0; b < 2; ++b) {
                  if (b) s += "/";
                  if (v.valid(r, c) && v.bank(r, c) == b) s += "*";
                  s += number(v.weight(b, r, c));
                }
                return s;
              });
  out += grid("activations (value @tile:vector, . = bubble)", v.rows, v.cols,
              [&v](std::uint32_t r, std::uint32_t c) -> std::string {
                if (!v.valid(r, c)) return ".";
                const MxuVectorSlot& s = v.slot(r, c);
                return number(v.activation(r, c)) + " @" + std::to_string(s.tile) + ":" +
                       u64(s.vector);
              });
  out += grid("psums produced (p_in + a * w)", v.rows, v.cols,
              [&v](std::uint32_t r, std::uint32_t c) -> std::string {
                return v.valid(r, c) ? number(v.psum(r, c)) : ".";
              });
  return out;
}

}  // namespace hw
