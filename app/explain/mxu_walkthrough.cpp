#include "app/explain/mxu_walkthrough.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "hw/systolic_array.h"
#include "sim/error.h"

namespace explain {

namespace {

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

std::string u64(std::uint64_t x) { return std::to_string(x); }

std::vector<std::string> labels(const std::string& prefix, std::size_t count) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < count; ++i) out.push_back(prefix + u64(i));
  return out;
}

// A titled table, one cell per (row, column), columns padded to equal width
// (at least one wider than the widest column label).
std::string grid(const std::string& title, const std::vector<std::string>& row_labels,
                 const std::vector<std::string>& col_labels,
                 const std::function<std::string(std::size_t, std::size_t)>& cell) {
  const std::size_t rows = row_labels.size(), cols = col_labels.size();
  std::vector<std::string> cells(rows * cols);
  std::size_t width = 0, label_width = 0;
  for (const std::string& l : col_labels) width = std::max(width, l.size() + 1);
  for (const std::string& l : row_labels) label_width = std::max(label_width, l.size() + 1);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) {
      cells[r * cols + c] = cell(r, c);
      width = std::max(width, cells[r * cols + c].size());
    }
  }
  auto padded = [width](const std::string& s) { return s + std::string(width - s.size() + 2, ' '); };
  std::string out = title + "\n" + std::string(label_width, ' ') + " ";
  auto end_line = [&out] {
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += "\n";
  };
  for (const std::string& l : col_labels) out += padded(l);
  end_line();
  for (std::size_t r = 0; r < rows; ++r) {
    out += " " + row_labels[r] + std::string(label_width - row_labels[r].size(), ' ');
    for (std::size_t c = 0; c < cols; ++c) out += padded(cells[r * cols + c]);
    end_line();
  }
  return out;
}

// Rows of cells, left-aligned in columns two spaces apart, indented by two.
std::string table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()), 0);
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line = " ";
    for (std::size_t c = 0; c < row.size(); ++c) line += " " + row[c] + std::string(width[c] - row[c].size() + 1, ' ');
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string pe_grid(const std::string& title, std::uint32_t rows, std::uint32_t cols,
                    const std::function<std::string(std::uint32_t, std::uint32_t)>& cell) {
  return grid(title, labels("r", rows), labels("c", cols), [&cell](std::size_t r, std::size_t c) {
    return cell(static_cast<std::uint32_t>(r), static_cast<std::uint32_t>(c));
  });
}

std::string feeder_line(const hw::ArrayStateView& v) {
  if (v.injected_tile < 0) return "feeder: idle";
  return "feeder: tile " + std::to_string(v.injected_tile) + " vector " + u64(v.injected_vector);
}

// The columns of a weight load that shift this cycle: column c shifts
// during start+c .. start+c+R-1.
std::pair<std::uint64_t, std::uint64_t> shifting_columns(const hw::ArrayStateView& v, const hw::MxuWeightLoad& load) {
  const std::uint64_t since = v.cycle - load.start_cycle;
  return {since >= v.rows ? since - v.rows + 1 : 0, std::min<std::uint64_t>(since, v.cols - 1)};
}

std::string loader_line(const hw::ArrayStateView& v) {
  if (v.load_count == 0) return "loader: idle";
  std::string s = "loader:";
  for (std::size_t i = 0; i < v.load_count; ++i) {
    const auto [first, last] = shifting_columns(v, v.loads[i]);
    s += (i ? "; tile " : " tile ") + u64(v.loads[i].tile) + " -> bank " + u64(v.loads[i].bank) +
         (first == last ? ", column " + u64(first) : ", columns " + u64(first) + "-" + u64(last)) + " shifting";
  }
  return s;
}

// The same two, short enough for an 80-column compact frame with two loads.
std::string feeder_short(const hw::ArrayStateView& v) {
  if (v.injected_tile < 0) return "feed: idle";
  return "feed: t" + std::to_string(v.injected_tile) + " v" + u64(v.injected_vector);
}

std::string loader_short(const hw::ArrayStateView& v) {
  if (v.load_count == 0) return "load: idle";
  std::string s = "load:";
  for (std::size_t i = 0; i < v.load_count; ++i) {
    const auto [first, last] = shifting_columns(v, v.loads[i]);
    s += (i ? ", t" : " t") + u64(v.loads[i].tile) + ">b" + u64(v.loads[i].bank) + " col " +
         (first == last ? u64(first) : u64(first) + "-" + u64(last));
  }
  return s;
}

std::string frame_head(const hw::ArrayStateView& v) {
  return "cycle " + u64(v.cycle) + " | " + feeder_line(v) + " | " + loader_line(v) + "\n";
}

// Weights, activations and psums over the PEs.
std::string frame_grids(const hw::ArrayStateView& v) {
  std::string out;
  out += pe_grid("weights (bank 0/bank 1, * = bank the activation selects)", v.rows, v.cols,
                 [&v](std::uint32_t r, std::uint32_t c) {
                   std::string s;
                   for (unsigned b = 0; b < 2; ++b) {
                     if (b) s += "/";
                     if (v.valid(r, c) && v.bank(r, c) == b) s += "*";
                     s += number(v.weight(b, r, c));
                   }
                   return s;
                 });
  out += pe_grid("activations (value @tile:vector, . = bubble)", v.rows, v.cols,
                 [&v](std::uint32_t r, std::uint32_t c) -> std::string {
                   if (!v.valid(r, c)) return ".";
                   const hw::MxuVectorSlot& s = v.slot(r, c);
                   return number(v.activation(r, c)) + " @" + std::to_string(s.tile) + ":" + u64(s.vector);
                 });
  out += pe_grid(
      "psums produced (p_in + a * w)", v.rows, v.cols,
      [&v](std::uint32_t r, std::uint32_t c) -> std::string { return v.valid(r, c) ? number(v.psum(r, c)) : "."; });
  return out;
}

// ---------------------------------------------------------------------------
// The walk-through of one op.

// Where tile j sits in B (docs/mxu.md "Tiles": order for nt: for kt:).
struct TilePlace {
  std::uint64_t k0, k_rows, n0, n_cols;
};

TilePlace tile_place(const hw::MxuConfig& config, const hw::MxuShape& shape, const hw::MxuTiling& tiling,
                     std::uint64_t j) {
  const std::uint64_t nt = j / tiling.k_tiles, kt = j % tiling.k_tiles;
  TilePlace p;
  p.k0 = kt * config.rows;
  p.k_rows = std::min<std::uint64_t>(config.rows, shape.k - p.k0);
  p.n0 = nt * config.cols;
  p.n_cols = std::min<std::uint64_t>(config.cols, shape.n - p.n0);
  return p;
}

std::string range(std::uint64_t first, std::uint64_t count) {
  return count == 1 ? u64(first) : u64(first) + "-" + u64(first + count - 1);
}

// Draws the frames as the engine runs, and plays the collector: every psum
// leaving row R-1 is added into its Y entry, in the order it leaves.
class FrameRenderer {
 public:
  explicit FrameRenderer(MxuWalkthrough& w) : w_(w), tiling_(hw::mxu_tiling(w.config, w.shape)) {
    w_.collected.assign(w.shape.m * w.shape.n, 0.0f);
    arrived_.assign(w.shape.m * w.shape.n, false);
  }

  void operator()(const hw::ArrayStateView& v) {
    std::string f = "===== cycle " + u64(v.cycle) + " (of 0.." + u64(w_.cycles - 1) + ") =====\n";
    f += frame_head(v);
    f += left_edge(v);
    f += frame_grids(v);
    f += bottom_edge(v);
    f += render_matrix("Y so far (. = nothing has arrived yet)", w_.shape.m, w_.shape.n,
                       [this](std::size_t i, std::size_t j) {
                         return arrived_[i * w_.shape.n + j] ? double(w_.collected[i * w_.shape.n + j])
                                                             : std::numeric_limits<double>::quiet_NaN();
                       });
    w_.frames.push_back(std::move(f));
    w_.states.push_back(state(v));
    if (v.rows <= kCompactMaxSide && v.cols <= kCompactMaxSide) w_.compact_frames.push_back(compact_frame(v));
  }

 private:
  static constexpr std::uint64_t kLookahead = 3;

  // What enters row r at cycle `at`: vector i of tile j enters row r at
  // cycle s_j + i + r, A[i][k0 + r] or a zero padding a ragged tile.
  struct Entering {
    bool any = false, pad = false;
    std::uint64_t i = 0, k = 0;
  };
  Entering entering(std::uint32_t r, std::uint64_t at) const {
    for (std::uint64_t j = 0; j < w_.schedule.size(); ++j) {
      const std::uint64_t s = w_.schedule[j].feed_start + r;
      if (at < s || at - s >= w_.shape.m) continue;
      const TilePlace p = tile_place(w_.config, w_.shape, tiling_, j);
      return {true, r >= p.k_rows, at - s, p.k0 + r};
    }
    return {};
  }
  double a_value(const Entering& e) const { return e.pad ? 0.0 : double(w_.a[e.i * w_.shape.k + e.k].to_float()); }

  // The skew made visible: which element of A enters each row in the next
  // cycles.
  std::string left_edge(const hw::ArrayStateView& v) const {
    std::vector<std::string> cols;
    for (std::uint64_t d = kLookahead; d >= 1; --d) cols.push_back("+" + u64(d));
    return grid("left edge: what enters each row in the next cycles (+1 = next cycle)", labels("r", v.rows), cols,
                [&](std::size_t r, std::size_t col) -> std::string {
                  const Entering e = entering(static_cast<std::uint32_t>(r), v.cycle + (kLookahead - col));
                  if (!e.any) return ".";
                  if (e.pad) return "0 (pad)";
                  return "A[" + u64(e.i) + "][" + u64(e.k) + "]=" + number(a_value(e));
                });
  }

  // The numbers of the full frame (after bottom_edge has collected).
  MxuFrameState state(const hw::ArrayStateView& v) const {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    MxuFrameState s;
    s.feeder = feeder_line(v);
    s.loader = loader_line(v);
    const std::size_t pes = std::size_t(v.rows) * v.cols;
    for (unsigned b = 0; b < 2; ++b) s.weights[b].assign(v.weights[b], v.weights[b] + pes);
    for (std::uint32_t r = 0; r < v.rows; ++r) {
      for (std::uint32_t c = 0; c < v.cols; ++c) {
        const bool valid = v.valid(r, c);
        s.activations.push_back(valid ? v.activation(r, c) : float(nan));
        s.psums.push_back(valid ? v.psum(r, c) : float(nan));
        s.tiles.push_back(v.slot(r, c).tile);
        s.vectors.push_back(valid ? v.slot(r, c).vector : 0);
        s.banks.push_back(static_cast<std::uint8_t>(v.bank(r, c)));
      }
      for (std::uint64_t d = kLookahead; d >= 1; --d) {
        const Entering e = entering(r, v.cycle + d);
        s.next_in.push_back(e.any ? a_value(e) : nan);
      }
    }
    for (std::size_t at = 0; at < w_.collected.size(); ++at)
      s.y.push_back(arrived_[at] ? double(w_.collected[at]) : nan);
    s.bottom = leaving_;
    return s;
  }

  std::string bottom_edge(const hw::ArrayStateView& v) {
    leaving_.clear();
    std::string line = "bottom edge:";
    bool any = false;
    const std::uint32_t r = v.rows - 1;
    for (std::uint32_t c = 0; c < v.cols; ++c) {
      if (!v.valid(r, c)) continue;
      const hw::MxuVectorSlot& slot = v.slot(r, c);
      const TilePlace p = tile_place(w_.config, w_.shape, tiling_, static_cast<std::uint64_t>(slot.tile));
      const std::uint64_t i = slot.vector, j = p.n0 + c;
      line += any ? "," : "";
      any = true;
      if (c >= p.n_cols) {
        line += " c" + u64(c) + " padding (dropped)";
        continue;
      }
      const std::size_t at = i * w_.shape.n + j;
      w_.collected[at] = hw::mxu_add(w_.collected[at], v.psum(r, c));
      if (!arrived_[at]) ++arrived_count_;
      arrived_[at] = true;
      newest_ = at;
      leaving_.push_back("Y[" + u64(i) + "][" + u64(j) + "] += " + number(v.psum(r, c)));
      line += " " + leaving_.back() + " (tile " + std::to_string(slot.tile) + ")";
    }
    return line + (any ? "\n" : " nothing leaves this cycle\n");
  }

  // The compact frame (kCompactMaxSide): the left edge, activations and
  // psums side by side, the Y row each column's result goes to, the weight
  // banks side by side, and one line about Y. Cells are padded to a width
  // fixed for the op (operands in [-3, 3]; an in-array psum is a sum of at
  // most `rows` products of magnitude 9), so frames do not jump.
  std::string compact_frame(const hw::ArrayStateView& v) const {
    static const std::string kGreen = "\033[32m", kYellow = "\033[1;33m", kCyan = "\033[36m", kOff = "\033[0m";
    const std::size_t small = 3, wide = number(-9.0 * v.rows).size() + 1;
    auto cell = [](const std::string& text, std::size_t width, const std::string& colour = "") {
      const std::string pad(width > text.size() ? width - text.size() : 0, ' ');
      return colour.empty() ? pad + text : pad + colour + text + kOff;
    };
    auto heads = [&](std::size_t width, std::uint32_t count) {
      std::string s;
      for (std::uint32_t c = 0; c < count; ++c) s += cell("c" + u64(c), width);
      return s;
    };
    auto trim = [](std::string line) {
      while (!line.empty() && line.back() == ' ') line.pop_back();
      return line + "\n";
    };
    const std::string left_pad(3, ' '), gap = " |";
    const std::size_t left_width = kLookahead * small, act_width = v.cols * small;
    auto title = [](const std::string& t, std::size_t width) {
      return t.size() >= width ? t : t + std::string(width - t.size(), ' ');
    };

    std::string f =
        trim("cycle " + u64(v.cycle) + "/" + u64(w_.cycles - 1) + " | " + feeder_short(v) + " | " + loader_short(v));
    f += trim(left_pad + title("next in", left_width) + gap + title(" activations a", act_width) + gap +
              " psums p_in + a*w");
    std::string head = left_pad;
    for (std::uint64_t d = kLookahead; d >= 1; --d) head += cell("+" + u64(d), small);
    f += trim(head + gap + heads(small, v.cols) + gap + heads(wide, v.cols));
    for (std::uint32_t r = 0; r < v.rows; ++r) {
      std::string line = "r" + u64(r) + std::string(left_pad.size() - 1 - u64(r).size(), ' ');
      for (std::uint64_t d = kLookahead; d >= 1; --d) {
        const Entering e = entering(r, v.cycle + d);
        line += cell(e.any ? number(a_value(e)) : ".", small);
      }
      line += gap;
      for (std::uint32_t c = 0; c < v.cols; ++c)
        line += v.valid(r, c) ? cell(number(v.activation(r, c)), small, kGreen) : cell(".", small);
      line += gap;
      for (std::uint32_t c = 0; c < v.cols; ++c) {
        const bool leaving = r + 1 == v.rows;
        line += v.valid(r, c) ? cell(number(v.psum(r, c)), wide, leaving ? kYellow : "") : cell(".", wide);
      }
      f += trim(line);
    }
    // Where each result leaving the bottom edge goes: Y row i (its column is
    // n0 + c), or a dropped padding column.
    std::string out = left_pad + title("to Y row", left_width) + gap + std::string(act_width, ' ') + gap;
    for (std::uint32_t c = 0; c < v.cols; ++c) {
      const std::uint32_t r = v.rows - 1;
      if (!v.valid(r, c)) {
        out += cell("", wide);
        continue;
      }
      const hw::MxuVectorSlot& slot = v.slot(r, c);
      const TilePlace p = tile_place(w_.config, w_.shape, tiling_, static_cast<std::uint64_t>(slot.tile));
      out += cell(c >= p.n_cols ? "pad" : "i" + u64(slot.vector), wide);
    }
    f += trim(out);

    const unsigned banks = v.double_buffer ? 2 : 1;
    const std::size_t bank_width = v.cols * (small + 1);
    std::string bank_title = left_pad, bank_head = left_pad;
    for (unsigned b = 0; b < banks; ++b) {
      bank_title += (b ? gap : "") + title(" weights bank " + u64(b) + (b ? "" : " (* = in use)"), bank_width);
      bank_head += (b ? gap : "") + heads(small + 1, v.cols);
    }
    f += trim(bank_title) + trim(bank_head);
    for (std::uint32_t r = 0; r < v.rows; ++r) {
      std::string line = "r" + u64(r) + std::string(left_pad.size() - 1 - u64(r).size(), ' ');
      for (unsigned b = 0; b < banks; ++b) {
        line += b ? gap : "";
        for (std::uint32_t c = 0; c < v.cols; ++c) {
          const bool in_use = v.valid(r, c) && v.bank(r, c) == b;
          line += in_use ? cell(number(v.weight(b, r, c)) + "*", small + 1, kCyan)
                         : cell(number(v.weight(b, r, c)) + " ", small + 1);
        }
      }
      f += trim(line);
    }
    std::string y = "Y: " + u64(arrived_count_) + " of " + u64(w_.shape.m * w_.shape.n) + " entries reached";
    if (arrived_count_ > 0) {
      const std::uint64_t i = newest_ / w_.shape.n, j = newest_ % w_.shape.n;
      y += "; newest Y[" + u64(i) + "][" + u64(j) + "] = " + number(w_.collected[newest_]);
    }
    return f + trim(y + " (f: full frame with Y)");
  }

  MxuWalkthrough& w_;
  hw::MxuTiling tiling_;
  std::vector<bool> arrived_;
  std::vector<std::string> leaving_;  // this cycle's bottom edge
  std::uint64_t arrived_count_ = 0;
  std::size_t newest_ = 0;
};

std::string intro_text(const MxuWalkthrough& w) {
  const hw::MxuConfig& c = w.config;
  const hw::MxuShape& s = w.shape;
  const hw::MxuTiling tiling = hw::mxu_tiling(c, s);
  const std::string R = u64(c.rows), C = u64(c.cols);
  std::string out = "Weight-stationary " + R + "x" + C + " systolic array (" +
                    (c.double_buffer ? "double-buffered" : "single-buffered") + " weights): Y (" + u64(s.m) + "x" +
                    u64(s.n) + ") = A (" + u64(s.m) + "x" + u64(s.k) + ") x B (" + u64(s.k) + "x" + u64(s.n) +
                    ").\nBF16 operands (small integers here, so every FP32 sum is exact), FP32 partial sums.\n\n";
  out += "B is cut into " + u64(tiling.count()) + " weight tile" + (tiling.count() == 1 ? "" : "s") + " of " + R + "x" +
         C + " (" + u64(tiling.k_tiles) + " along k, " + u64(tiling.n_tiles) +
         " along n; ragged edges padded with zeros).\nEach tile stays in the array while all " + u64(s.m) +
         " rows of A stream past it:\n";
  const std::vector<std::string> head = {"tile", "k rows", "n cols", "bank", "load L", "feed s", "last out E"};
  std::vector<std::vector<std::string>> rows = {head};
  for (std::size_t j = 0; j < w.schedule.size(); ++j) {
    const TilePlace p = tile_place(c, s, tiling, j);
    const hw::MxuTileTiming& t = w.schedule[j];
    rows.push_back({u64(j), range(p.k0, p.k_rows), range(p.n0, p.n_cols), u64(c.double_buffer ? j % 2 : 0),
                    u64(t.load_start), u64(t.feed_start), u64(t.last_output)});
  }
  out += table(rows);
  out += "The op takes " + u64(w.cycles) + " cycles (0.." + u64(w.cycles - 1) +
         "): cycle 0 is the first weight-load cycle, the last is the one in which\n"
         "the last result leaves the bottom edge (docs/mxu.md derives L, s and E).\n\n"
         "How to read a frame:\n"
         "  left edge    row i of A enters skewed: A[i][k0+r] enters row r at cycle s + i + r,\n"
         "               then moves one PE to the right per cycle.\n"
         "  weights      PE(r,c) of a tile holds B[k0+r][n0+c] in the tile's bank; column c shifts\n"
         "               down from the top edge during cycles L+c .. L+c+" +
         u64(c.rows - 1) +
         " and latches.\n"
         "  activations  the value each PE multiplies in this cycle (@tile:vector, vector = row of A).\n"
         "  psums        p_out = p_in from the PE above + a * w, passed down; the bottom row's\n"
         "               p_out leaves the array and is added into Y (bottom edge).\n";
  if (c.rows <= kCompactMaxSide && c.cols <= kCompactMaxSide)
    out += "Compact frames (80x24) say t2 for tile 2, v5 for vector 5, b1 for bank 1.\n";
  return out;
}

void check_limits(const hw::MxuConfig& config, const hw::MxuShape& shape) {
  if (config.rows > kWalkthroughMaxSide || config.cols > kWalkthroughMaxSide) {
    throw sim::ConfigError({"command line"}, "--walk/--html",
                           "the walk-through prints every PE every cycle: arrays up to " + u64(kWalkthroughMaxSide) +
                               "x" + u64(kWalkthroughMaxSide) + ", got " + u64(config.rows) + "x" + u64(config.cols) +
                               " (without --walk, explain mxu gives cycles and utilization for any size)");
  }
  for (auto [name, value] : {std::pair<const char*, std::uint64_t>{"m", shape.m}, {"k", shape.k}, {"n", shape.n}}) {
    if (value > kWalkthroughMaxDim) {
      throw sim::ConfigError({"command line"}, "--walk/--html",
                             std::string("the walk-through prints the operands: --") + name + " up to " +
                                 u64(kWalkthroughMaxDim) + ", got " + u64(value));
    }
  }
}

}  // namespace

std::string render_walkthrough_frame(const hw::ArrayStateView& v) { return frame_head(v) + frame_grids(v); }

std::string strip_colour(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\033' && i + 1 < text.size() && text[i + 1] == '[') {
      std::size_t end = i + 2;
      while (end < text.size() && text[end] != 'm') ++end;
      i = end;
      continue;
    }
    out += text[i];
  }
  return out;
}

void mxu_teaching_operands(const hw::MxuShape& shape, std::uint64_t seed, std::vector<hw::bf16>& a,
                           std::vector<hw::bf16>& b) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> pick(-3, 3);
  a.resize(shape.m * shape.k);
  b.resize(shape.k * shape.n);
  for (hw::bf16& x : a) x = hw::bf16::from_float(static_cast<float>(pick(rng)));
  for (hw::bf16& x : b) x = hw::bf16::from_float(static_cast<float>(pick(rng)));
}

std::vector<double> host_gemm(const hw::MxuShape& shape, const std::vector<hw::bf16>& a,
                              const std::vector<hw::bf16>& b) {
  std::vector<double> y(shape.m * shape.n, 0.0);
  for (std::uint64_t i = 0; i < shape.m; ++i)
    for (std::uint64_t j = 0; j < shape.n; ++j)
      for (std::uint64_t p = 0; p < shape.k; ++p)
        y[i * shape.n + j] += double(a[i * shape.k + p].to_float()) * double(b[p * shape.n + j].to_float());
  return y;
}

std::string render_matrix(const std::string& title, std::size_t rows, std::size_t cols,
                          const std::function<double(std::size_t, std::size_t)>& value, const std::string& row_label,
                          const std::string& col_label) {
  return grid(title, labels(row_label, rows), labels(col_label, cols), [&value](std::size_t r, std::size_t c) {
    const double x = value(r, c);
    return std::isnan(x) ? std::string(".") : number(x);
  });
}

MxuWalkthrough mxu_walkthrough(const hw::MxuConfig& config, const hw::MxuShape& shape, std::uint64_t seed) {
  std::vector<hw::bf16> a, b;
  mxu_teaching_operands(shape, seed, a, b);
  return mxu_walkthrough(config, shape, std::move(a), std::move(b));
}

MxuWalkthrough mxu_walkthrough(const hw::MxuConfig& config, const hw::MxuShape& shape, std::vector<hw::bf16> a,
                               std::vector<hw::bf16> b) {
  validate(config);
  validate(shape);
  check_limits(config, shape);
  if (a.size() != shape.m * shape.k || b.size() != shape.k * shape.n)
    throw std::logic_error("walk-through: operand sizes do not match the shape");
  MxuWalkthrough w;
  w.config = config;
  w.shape = shape;
  w.a = std::move(a);
  w.b = std::move(b);
  w.schedule = hw::mxu_tile_schedule(config, shape);
  // Frames are titled "cycle t (of 0..N-1)" as they are drawn; the engine's
  // own count must then agree (it is checked against the formula in tests).
  w.cycles = hw::mxu_tile_cycles(config, shape);
  w.intro = intro_text(w);

  hw::SystolicArray array;
  FrameRenderer renderer(w);
  hw::MxuPeResult pe = array.run(config, shape, w.a.data(), w.b.data(), std::ref(renderer));
  if (pe.cycles != w.cycles || w.frames.size() != pe.cycles) {
    throw std::logic_error("walk-through: the PE engine took " + u64(pe.cycles) + " cycles, the schedule says " +
                           u64(w.cycles));
  }
  w.y = std::move(pe.y);

  w.reference = host_gemm(shape, w.a, w.b);

  std::string mismatches;
  std::size_t bad = 0;
  for (std::uint64_t i = 0; i < shape.m; ++i) {
    for (std::uint64_t j = 0; j < shape.n; ++j) {
      const std::size_t at = i * shape.n + j;
      if (double(w.y[at]) == w.reference[at] && w.collected[at] == w.y[at]) continue;
      if (++bad <= 5) {
        mismatches += "  Y[" + u64(i) + "][" + u64(j) + "]: array " + number(w.y[at]) + ", bottom edge " +
                      number(w.collected[at]) + ", host " + number(w.reference[at]) + "\n";
      }
    }
  }
  w.matches_reference = bad == 0;

  const std::size_t m = shape.m, k = shape.k, n = shape.n;
  w.summary = render_matrix(
      "A (" + u64(m) + "x" + u64(k) + ", activations, streamed)", m, k,
      [&w, k](std::size_t i, std::size_t p) { return double(w.a[i * k + p].to_float()); }, "i", "k");
  w.summary += render_matrix(
      "B (" + u64(k) + "x" + u64(n) + ", weights, stationary)", k, n,
      [&w, n](std::size_t p, std::size_t j) { return double(w.b[p * n + j].to_float()); }, "k", "j");
  w.summary += render_matrix("Y = A x B, as it left the array (FP32)", m, n,
                             [&w, n](std::size_t i, std::size_t j) { return double(w.y[i * n + j]); });
  w.summary += "cycles: " + u64(w.cycles) + "\n";
  if (w.matches_reference) {
    w.summary += "check: Y equals the host reference (a double-precision GEMM of the same A and B) in all " +
                 u64(m * n) + " entries\n";
  } else {
    w.summary +=
        "check: MISMATCH with the host reference in " + u64(bad) + " of " + u64(m * n) + " entries:\n" + mismatches;
  }
  return w;
}

}  // namespace explain
