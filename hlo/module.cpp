#include "hlo/module.h"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <set>

#include "hlo/opcodes.h"
#include "sim/checked_size.h"
#include "sim/error.h"
#include "sim/input_file.h"
#include "sim/yaml_node.h"

namespace hlo {

namespace {

[[noreturn]] void fail(const std::string& file, const Location& at, const std::string& construct,
                       const std::string& what) {
  throw sim::ConfigError(sim::SourceLocation{file, at.line, at.column}, construct, what);
}

bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' || c == '$';
}

// A cursor over the text that knows its line and column.
class Cursor {
 public:
  Cursor(const std::string& text, const std::string& file) : text_(text), file_(file) {}

  bool eof() const { return pos_ >= text_.size(); }
  char peek(std::size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }
  Location where() const { return {line_, column_}; }
  const std::string& file() const { return file_; }

  void advance() {
    if (eof()) return;
    if (text_[pos_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++pos_;
  }

  // Spaces, tabs, /*comments*/ and // comments to the end of the line
  // (hlo_lexer's), on this line (and newlines with `lines`).
  void skip_space(bool lines = false) {
    for (;;) {
      const char c = peek();
      if (c == ' ' || c == '\t' || c == '\r' || (lines && c == '\n')) {
        advance();
      } else if (c == '/' && peek(1) == '/') {
        while (!eof() && peek() != '\n') advance();
      } else if (c == '/' && peek(1) == '*') {
        const Location at = where();
        advance();
        advance();
        while (!eof() && !(peek() == '*' && peek(1) == '/')) advance();
        if (eof()) fail(file_, at, "comment", "'/*' without '*/'");
        advance();
        advance();
      } else {
        return;
      }
    }
  }

  bool consume(const std::string& word) {
    if (text_.compare(pos_, word.size(), word) != 0) return false;
    for (std::size_t i = 0; i < word.size(); ++i) advance();
    return true;
  }

  void expect(const std::string& word, const std::string& construct) {
    skip_space();
    if (!consume(word)) fail(file_, where(), construct, "expected '" + word + "', found " + found());
  }

  // What is here, for error messages.
  std::string found() const {
    if (eof()) return "the end of the file (the text is truncated)";
    if (peek() == '\n') return "the end of the line";
    std::size_t end = pos_;
    while (end < text_.size() && end - pos_ < 24 && text_[end] != '\n') ++end;
    return sim::quote_short(text_.substr(pos_, end - pos_));
  }

  // A name: [%]letters, digits, _ . - $.
  std::string name(const std::string& construct) {
    skip_space();
    consume("%");
    const std::size_t start = pos_;
    while (name_char(peek())) advance();
    if (pos_ == start) fail(file_, where(), construct, "expected a name, found " + found());
    return text_.substr(start, pos_ - start);
  }

  // Text up to (not including) a ',' or newline outside brackets and
  // strings, or up to the bracket that closes an enclosing one.
  // With `lists`, commas and newlines do not end it (a parenthesized list).
  std::string balanced(const std::string& construct, bool lists = false) {
    const std::size_t start = pos_;
    std::vector<std::pair<char, Location>> open;
    while (!eof()) {
      const char c = peek();
      if (open.empty() && (c == ')' || c == '}' || c == ']' || (!lists && (c == ',' || c == '\n')))) break;
      if (c == '"') {
        const Location at = where();
        advance();
        while (!eof() && peek() != '"') {
          if (peek() == '\\') advance();
          advance();
        }
        if (eof()) fail(file_, at, construct, "string without its closing '\"' (the text is truncated)");
      } else if (c == '(' || c == '{' || c == '[') {
        open.emplace_back(c, where());
      } else if (c == ')' || c == '}' || c == ']') {
        const char want = open.back().first == '(' ? ')' : open.back().first == '{' ? '}' : ']';
        if (c != want)
          fail(file_, where(), construct,
               std::string("'") + c + "' closes '" + open.back().first + "' opened at line " +
                   std::to_string(open.back().second.line) + ", column " + std::to_string(open.back().second.column));
        open.pop_back();
      }
      advance();
    }
    if (!open.empty())
      fail(file_, open.back().second, construct,
           std::string("'") + open.back().first + "' is never closed (the text is truncated)");
    return text_.substr(start, pos_ - start);
  }

  std::int64_t integer(const std::string& construct) {
    skip_space();
    const std::size_t start = pos_;
    if (peek() == '-') advance();
    while (std::isdigit(static_cast<unsigned char>(peek()))) advance();
    const std::string digits = text_.substr(start, pos_ - start);
    if (digits.empty() || digits == "-") fail(file_, where(), construct, "expected an integer, found " + found());
    try {
      return std::stoll(digits);
    } catch (const std::out_of_range&) {
      fail(file_, where(), construct, "integer " + sim::quote_short(digits) + " is out of range");
    }
  }

 private:
  const std::string& text_;
  const std::string& file_;
  std::size_t pos_ = 0;
  int line_ = 1, column_ = 1;
};

// Tuples nest a few levels in what XLA prints; a bound keeps the recursion
// here (and in Shape::bytes and str) off the end of the stack (a tuple
// 50,000 deep was a SIGSEGV).
constexpr int kMaxShapeDepth = 64;

// A parenthesized list of integers, `*` (a tile's combined dimension) as -1.
std::vector<std::int64_t> layout_ints(Cursor& c, const std::string& construct) {
  std::vector<std::int64_t> v;
  c.expect("(", construct);
  c.skip_space();
  if (c.consume(")")) return v;
  for (;;) {
    c.skip_space();
    v.push_back(c.consume("*") ? -1 : c.integer(construct));
    c.skip_space();
    if (c.consume(")")) return v;
    c.expect(",", construct);
  }
}

// The layout `{minor_to_major:items}` (xla/layout.cc, Layout::Print): items
// D(dim level types) T(tile)(tile)... L(index type) P(pointer type)
// E(element bits) S(memory space) SC(split configs) M(dynamic metadata
// bytes) #(physical shape). S(n) decides where the array lives; tiles are
// kept; the others change no cost. Anything else stops the parse.
void parse_layout(Cursor& c, Shape& s) {
  const std::string kC = "layout";
  c.expect("{", kC);
  c.skip_space();
  while (c.peek() != ':' && c.peek() != '}') {
    s.minor_to_major.push_back(c.integer(kC));
    c.skip_space();
    if (c.peek() == ',') c.advance();
    c.skip_space();
  }
  if (c.consume(":")) {
    for (;;) {
      c.skip_space();
      if (c.peek() == '}') break;
      const Location at = c.where();
      std::string item;
      while (std::isupper(static_cast<unsigned char>(c.peek())) || c.peek() == '#') {
        item += c.peek();
        c.advance();
      }
      if (item == "T") {
        while (c.peek() == '(') {
          s.tiles.push_back(layout_ints(c, kC + " tile"));
          for (const std::int64_t t : s.tiles.back())
            if (t == 0 || t < -1) fail(c.file(), at, kC, "a tile's dimensions are positive, or '*'");
        }
      } else if (item == "S") {
        const std::vector<std::int64_t> v = layout_ints(c, kC + " memory space");
        if (v.size() != 1 || v[0] < 0 || v[0] > 255)
          fail(c.file(), at, kC, "S(n) takes one memory space from 0 to 255");
        s.memory_space = static_cast<int>(v[0]);
      } else if (item == "E" || item == "M") {
        layout_ints(c, kC);
      } else if (item == "D" || item == "L" || item == "P" || item == "SC" || item == "#") {
        c.expect("(", kC);
        c.balanced(kC, true);
        c.expect(")", kC);
        while (item == "SC" && c.peek() == '(') {  // one group per split config
          c.advance();
          c.balanced(kC, true);
          c.expect(")", kC);
        }
      } else {
        fail(c.file(), at, kC,
             "unknown layout item " + (item.empty() ? c.found() : sim::quote_short(item)) +
                 " (XLA prints D, T, L, P, E, S, SC, M and #)");
      }
    }
  }
  c.expect("}", kC);
}

Shape parse_shape(Cursor& c, int depth = 0) {
  c.skip_space();
  Shape s;
  const Location at = c.where();
  if (c.consume("(")) {
    if (depth >= kMaxShapeDepth)
      fail(c.file(), at, "shape", "tuple shapes nest deeper than " + std::to_string(kMaxShapeDepth) + " levels");
    s.tuple = true;
    c.skip_space();
    if (c.consume(")")) return s;
    sim::Size bits = 0;  // the tuple's arrays, checked: Shape::bytes may then sum them unchecked
    for (;;) {
      s.elements.push_back(parse_shape(c, depth + 1));
      try {
        bits = bits.plus(s.elements.back().bytes(), "bytes of the tuple's arrays");
      } catch (const std::overflow_error& e) {
        fail(c.file(), at, "shape", std::string(e.what()) + ": no device holds it");
      }
      c.skip_space();
      if (c.consume(")")) return s;
      c.expect(",", "shape");
    }
  }
  while (std::isalnum(static_cast<unsigned char>(c.peek()))) {
    s.type += c.peek();
    c.advance();
  }
  if (s.type.empty()) fail(c.file(), at, "shape", "expected a shape (e.g. f32[4,8] or a tuple), found " + c.found());
  if (element_bits(s.type) == 0 && s.type != "token")
    fail(c.file(), at, "shape", "unknown element type " + sim::quote_short(s.type));
  if (!c.consume("[")) fail(c.file(), c.where(), "shape", "expected '[' after " + s.type + ", found " + c.found());
  c.skip_space();
  if (!c.consume("]")) {
    for (;;) {
      c.skip_space();
      c.consume("<=");  // a bounded dynamic dimension: its bound
      if (c.consume("?")) fail(c.file(), c.where(), "shape", "unbounded dynamic dimension '?' has no size to cost");
      const std::int64_t d = c.integer("shape dimension");
      if (d < 0 || d > (std::int64_t(1) << 40))
        fail(c.file(), c.where(), "shape", "dimension " + std::to_string(d) + " is out of range [0, 2^40]");
      s.dims.push_back(d);
      c.skip_space();
      if (c.consume("]")) break;
      c.expect(",", "shape");
    }
  }
  // Element counts and bits in checked arithmetic (sim/checked_size.h):
  // f32[2^32, 2^32] wrapped to 0 elements and was costed as nothing.
  try {
    sim::Size bits = 1;
    for (const std::int64_t d : s.dims) bits = bits.times(static_cast<std::uint64_t>(d), "elements");
    bits.times(static_cast<std::uint64_t>(std::max(1, element_bits(s.type))), "bits").plus(7, "bits");
  } catch (const std::overflow_error& e) {
    fail(c.file(), at, "shape", s.str() + ": " + e.what() + ": no device holds it");
  }
  if (c.peek() == '{') {
    const Location layout_at = c.where();
    parse_layout(c, s);
    std::vector<std::int64_t> order = s.minor_to_major;
    std::sort(order.begin(), order.end());
    bool permutation = order.empty() || order.size() == s.dims.size();
    for (std::size_t i = 0; permutation && i < order.size(); ++i) permutation = order[i] == std::int64_t(i);
    if (!permutation) {
      std::string listed;
      for (const std::int64_t d : s.minor_to_major) listed += (listed.empty() ? "" : ",") + std::to_string(d);
      fail(c.file(), layout_at, "layout",
           "{" + listed + "} is no order of the " + std::to_string(s.dims.size()) + " dimensions of " + s.str());
    }
    try {
      sim::Size(s.stored_element_count())
          .times(static_cast<std::uint64_t>(std::max(1, element_bits(s.type))), "bits")
          .plus(7, "bits");
    } catch (const std::overflow_error& e) {
      fail(c.file(), layout_at, "layout", s.str() + " in its tiles: " + e.what() + ": no device holds it");
    }
  }
  return s;
}

// The attributes after an instruction's operands, or the module header's.
void parse_attributes(Cursor& c, std::map<std::string, std::string>& out, const std::string& construct) {
  for (;;) {
    c.skip_space();
    if (c.eof() || c.peek() == '\n') return;
    c.expect(",", construct);
    c.skip_space();
    const Location at = c.where();
    std::string key;
    while (name_char(c.peek())) {
      key += c.peek();
      c.advance();
    }
    if (key.empty()) fail(c.file(), at, construct, "expected an attribute name, found " + c.found());
    c.expect("=", construct + " attribute " + key);
    c.skip_space();
    std::string value = c.balanced(construct + " attribute " + key);
    // A mesh replica group prints a space before its axes: mesh[...] {'x'}.
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.pop_back();
    out[key] = value;
  }
}

std::string strip(const std::string& s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

// The operands between an instruction's parentheses, at depth 0 split on
// commas, with /*index=N*/ comments and (long form) their shapes dropped.
std::vector<std::string> split_operands(const std::string& text) {
  std::vector<std::string> parts;
  std::string cur;
  int depth = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (ch == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      const std::size_t end = text.find("*/", i + 2);
      i = end == std::string::npos ? text.size() : end + 1;
      continue;
    }
    if (ch == '(' || ch == '{' || ch == '[') ++depth;
    if (ch == ')' || ch == '}' || ch == ']') --depth;
    if (ch == ',' && depth == 0) {
      parts.push_back(strip(cur));
      cur.clear();
    } else {
      cur += ch;
    }
  }
  if (!strip(cur).empty() || !parts.empty()) parts.push_back(strip(cur));
  return parts;
}

Instruction parse_instruction(Cursor& c) {
  Instruction in;
  in.where = c.where();
  if (c.consume("ROOT ")) in.root = true;
  in.name = c.name("instruction");
  c.expect("=", "instruction %" + in.name);
  in.shape = parse_shape(c);
  c.skip_space();
  const Location op_at = c.where();
  while (name_char(c.peek())) {
    in.opcode += c.peek();
    c.advance();
  }
  if (in.opcode.empty())
    fail(c.file(), op_at, "instruction %" + in.name, "expected an opcode after the shape, found " + c.found());
  if (!known_opcode(in.opcode)) {
    const std::string hint = sim::did_you_mean(in.opcode, opcode_names());
    fail(c.file(), op_at, "instruction %" + in.name,
         "unknown opcode " + sim::quote_short(in.opcode) + " (not one of XLA's)" + (hint.empty() ? "" : "; " + hint));
  }
  if (c.peek() != '(')
    fail(c.file(), c.where(), "instruction %" + in.name,
         "expected '(' after opcode " + in.opcode + ", found " + c.found());
  c.advance();
  const Location operands_at = c.where();
  const std::string operands = c.balanced("operands of %" + in.name, true);
  c.expect(")", "operands of %" + in.name);
  if (in.opcode == "constant" || in.opcode == "parameter") {
    in.literal = strip(operands);
  } else {
    for (const std::string& part : split_operands(operands)) {
      // Long form "f32[4] %x": the name is the last word.
      const std::size_t space = part.find_last_of(" \t");
      std::string name = space == std::string::npos ? part : part.substr(space + 1);
      if (!name.empty() && name[0] == '%') name.erase(0, 1);
      if (name.empty() || !std::all_of(name.begin(), name.end(), name_char))
        fail(c.file(), operands_at, "operands of %" + in.name,
             "expected operand names, found " + sim::quote_short(part));
      in.operands.push_back(name);
    }
  }
  parse_attributes(c, in.attributes, "instruction %" + in.name);
  return in;
}

std::string unquote(const std::string& s) {
  return s.size() >= 2 && s.front() == '"' && s.back() == '"' ? s.substr(1, s.size() - 2) : s;
}

// `, execution_thread="..."`: the one attribute a computation carries.
void parse_computation_attributes(Cursor& c, Computation& comp) {
  const std::string construct = "computation %" + comp.name;
  c.skip_space();
  while (c.peek() == ',') {
    c.advance();
    c.skip_space();
    const Location at = c.where();
    std::string key;
    while (name_char(c.peek())) {
      key += c.peek();
      c.advance();
    }
    if (key != "execution_thread")
      fail(c.file(), at, construct,
           "unknown computation attribute " + (key.empty() ? c.found() : sim::quote_short(key)) +
               " (XLA prints execution_thread)");
    c.expect("=", construct + " " + key);
    c.skip_space();
    const Location value_at = c.where();
    comp.execution_thread = unquote(c.balanced(construct + " " + key));
    if (comp.execution_thread.empty()) fail(c.file(), value_at, construct, "execution_thread is empty");
    c.skip_space();
  }
}

Computation parse_computation(Cursor& c) {
  Computation comp;
  comp.where = c.where();
  if (c.consume("ENTRY")) comp.entry = true;
  comp.name = c.name("computation");
  c.skip_space();
  if (c.peek() == '(') {  // the signature's parameters
    c.advance();
    c.balanced("parameters of %" + comp.name, true);
    c.expect(")", "parameters of %" + comp.name);
    c.expect("->", "computation %" + comp.name);
    parse_shape(c);
  }
  parse_computation_attributes(c, comp);
  c.expect("{", "computation %" + comp.name);
  for (;;) {
    c.skip_space(true);
    if (c.eof())
      fail(c.file(), c.where(), "computation %" + comp.name,
           "the text ends inside computation %" + comp.name + " (opened at line " + std::to_string(comp.where.line) +
               "): it is truncated");
    if (c.consume("}")) break;
    Instruction in = parse_instruction(c);
    if (comp.index.count(in.name))
      fail(c.file(), in.where, "instruction %" + in.name, "name defined twice in computation %" + comp.name);
    comp.index[in.name] = comp.instructions.size();
    if (in.root) comp.root = comp.instructions.size();
    comp.instructions.push_back(std::move(in));
  }
  parse_computation_attributes(c, comp);  // XLA prints them after the body: `}, execution_thread="sparsecore"`
  if (comp.instructions.empty()) fail(c.file(), comp.where, "computation %" + comp.name, "has no instructions");
  if (std::none_of(comp.instructions.begin(), comp.instructions.end(), [](const Instruction& i) { return i.root; }))
    comp.root = comp.instructions.size() - 1;
  return comp;
}

// Names of the computations an instruction calls, from its attributes.
std::vector<std::string> called(const Instruction& in) {
  static const char* const kKeys[] = {
      "calls", "to_apply", "condition", "body", "true_computation", "false_computation", "branch_computations"};
  std::vector<std::string> names;
  for (const char* key : kKeys) {
    const std::string* v = in.attribute(key);
    if (!v) continue;
    std::string text = *v;
    if (!text.empty() && text.front() == '{') text = text.substr(1, text.size() - 2);
    for (const std::string& part : split_operands(text)) {
      std::string n = part;
      if (!n.empty() && n[0] == '%') n.erase(0, 1);
      if (!n.empty()) names.push_back(n);
    }
  }
  return names;
}

void check_references(const Module& m) {
  for (const Computation& comp : m.computations) {
    for (const Instruction& in : comp.instructions) {
      for (const std::string& op : in.operands)
        if (!comp.find(op))
          fail(m.file, in.where, "instruction %" + in.name,
               "operand %" + op + " is not an instruction of computation %" + comp.name);
      for (const std::string& callee : called(in)) m.computation(callee, in.where);
    }
  }
}

// XLA's call graph has no cycles; a computation that calls itself, directly
// or through others, would send every cost walk round it forever. Depth-first
// over the computations, with an explicit stack (a chain of 50,000 calls
// must not recurse 50,000 deep): meeting one still on the path is a cycle.
void check_no_call_cycle(const Module& m) {
  enum class Mark { unseen, on_path, done };
  std::vector<Mark> mark(m.computations.size(), Mark::unseen);
  struct Frame {
    std::size_t comp;
    std::vector<std::pair<const Instruction*, std::string>> calls;  // what it calls, in order
    std::size_t next = 0;
  };
  auto frame = [&](std::size_t c) {
    Frame f{c, {}, 0};
    for (const Instruction& in : m.computations[c].instructions)
      for (std::string& callee : called(in)) f.calls.emplace_back(&in, std::move(callee));
    mark[c] = Mark::on_path;
    return f;
  };
  for (std::size_t root = 0; root < m.computations.size(); ++root) {
    if (mark[root] != Mark::unseen) continue;
    std::vector<Frame> path{frame(root)};
    while (!path.empty()) {
      Frame& f = path.back();
      if (f.next == f.calls.size()) {
        mark[f.comp] = Mark::done;
        path.pop_back();
        continue;
      }
      const auto& [in, callee] = f.calls[f.next++];
      const std::size_t k = m.index.at(callee);
      if (mark[k] == Mark::on_path)
        fail(m.file, in->where, "instruction %" + in->name,
             "calls %" + callee + ", which is already calling it: a cycle in the call graph (XLA's has none)");
      if (mark[k] == Mark::unseen) path.push_back(frame(k));
    }
  }
}

}  // namespace

int element_bits(const std::string& type) {
  static const std::map<std::string, int> kBits = {{"pred", 8},       {"s2", 2},
                                                   {"u2", 2},         {"s4", 4},
                                                   {"u4", 4},         {"s8", 8},
                                                   {"u8", 8},         {"s16", 16},
                                                   {"u16", 16},       {"s32", 32},
                                                   {"u32", 32},       {"s64", 64},
                                                   {"u64", 64},       {"f16", 16},
                                                   {"bf16", 16},      {"f32", 32},
                                                   {"f64", 64},       {"c64", 64},
                                                   {"c128", 128},     {"f8e5m2", 8},
                                                   {"f8e4m3fn", 8},   {"f8e4m3b11fnuz", 8},
                                                   {"f8e5m2fnuz", 8}, {"f8e4m3fnuz", 8},
                                                   {"f8e4m3", 8},     {"f8e3m4", 8},
                                                   {"f4e2m1fn", 4},   {"f8e8m0fnu", 8}};
  const auto it = kBits.find(type);
  return it == kBits.end() ? 0 : it->second;
}

std::uint64_t Shape::element_count() const {
  std::uint64_t n = 1;
  for (const std::int64_t d : dims) n *= static_cast<std::uint64_t>(d);
  return n;
}

namespace {

// `dims` (major to minor) tiled by `tile`, which applies to the most minor
// dimensions (missing ones on the major side count as 1): each tiled
// dimension becomes its count of tiles, rounded up, and the tile's own
// dimensions follow, so the result holds the padding. A '*' dimension (-1)
// is left whole.
std::vector<std::int64_t> tiled(std::vector<std::int64_t> dims, const std::vector<std::int64_t>& tile) {
  if (dims.size() < tile.size()) dims.insert(dims.begin(), tile.size() - dims.size(), 1);
  const std::size_t first = dims.size() - tile.size();
  for (std::size_t i = 0; i < tile.size(); ++i) {
    const std::int64_t d = dims[first + i];
    if (tile[i] > 0) dims[first + i] = d == 0 ? 0 : (d - 1) / tile[i] + 1;
    dims.push_back(std::max<std::int64_t>(tile[i], 1));
  }
  return dims;
}

}  // namespace

// XLA's tiled layout (openxla.org/xla/tiled_layout): the physical shape
// (the dimensions major to minor, as minor_to_major orders them) is tiled
// by the first tile, padding included; each later tile (T(8,128)(2,1): the
// (2,1)) tiles the minor dimensions of that result, the tile itself, in
// turn. So a bf16[3,100]{1,0:T(8,128)(2,1)} occupies one 8 x 128 tile,
// 2 KiB, not 600 B.
std::uint64_t Shape::stored_element_count() const {
  if (tiles.empty()) return element_count();
  std::vector<std::int64_t> shape = dims;
  if (minor_to_major.size() == dims.size())
    for (std::size_t i = 0; i < dims.size(); ++i)
      shape[dims.size() - 1 - i] = dims[static_cast<std::size_t>(minor_to_major[i])];
  for (const std::vector<std::int64_t>& tile : tiles) shape = tiled(shape, tile);
  sim::Size n = 1;
  for (const std::int64_t d : shape) n = n.times(static_cast<std::uint64_t>(d), "elements");
  return n.value();
}

std::uint64_t Shape::bytes(bool only_hbm) const {
  if (tuple) {
    std::uint64_t sum = 0;
    for (const Shape& e : elements) sum += e.bytes(only_hbm);
    return sum;
  }
  if (only_hbm && memory_space != 0) return 0;
  return (stored_element_count() * static_cast<std::uint64_t>(element_bits(type)) + 7) / 8;
}

std::string Shape::str() const {
  std::string s;
  if (tuple) {
    s = "(";
    for (std::size_t i = 0; i < elements.size(); ++i) s += (i ? ", " : "") + elements[i].str();
    return s + ")";
  }
  s = type + "[";
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

const std::string* Instruction::attribute(const std::string& key) const {
  const auto it = attributes.find(key);
  return it == attributes.end() ? nullptr : &it->second;
}

std::string Instruction::async_thread() const {
  const std::string* t = attribute("async_execution_thread");
  return t ? unquote(*t) : "main";
}

const Instruction* Computation::find(const std::string& n) const {
  const auto it = index.find(n);
  return it == index.end() ? nullptr : &instructions[it->second];
}

const Computation* Module::find(const std::string& n) const {
  const auto it = index.find(n);
  return it == index.end() ? nullptr : &computations[it->second];
}

const Computation& Module::computation(const std::string& n, const Location& at) const {
  const Computation* c = find(n);
  if (!c) fail(file, at, "computation %" + n, "no computation of that name in module " + name);
  return *c;
}

Module parse_module(const std::string& full_text, const std::string& file, bool cut_short) {
  // Cut short: up to the '}' that closes the last whole computation.
  std::string text = full_text;
  if (cut_short) {
    const std::size_t end = text.rfind("\n}");
    if (end != std::string::npos) text.resize(end + 2);
  }
  Cursor c(text, file);
  Module m;
  m.file = file;
  c.skip_space(true);
  m.where = c.where();
  if (!c.consume("HloModule"))
    fail(file, c.where(), "HloModule", "expected the header 'HloModule NAME, ...', found " + c.found());
  m.name = c.name("HloModule");
  std::map<std::string, std::string> header;
  parse_attributes(c, header, "HloModule");
  if (const auto it = header.find("is_scheduled"); it != header.end()) m.scheduled = it->second == "true";
  auto count = [&](const char* key, int& field) {
    const auto it = header.find(key);
    if (it == header.end()) return;
    char* end = nullptr;
    const long v = std::strtol(it->second.c_str(), &end, 10);
    if (*end != '\0' || v < 1 || v > (1 << 20))
      fail(file, m.where, std::string("HloModule ") + key,
           "expected a positive count, found " + sim::quote_short(it->second));
    field = static_cast<int>(v);
  };
  count("num_partitions", m.num_partitions);
  count("replica_count", m.replica_count);
  if (std::int64_t(m.num_partitions) * m.replica_count > (1 << 20))
    fail(file, m.where, "HloModule", "num_partitions x replica_count is above 2^20 devices");
  for (;;) {
    c.skip_space(true);
    if (c.eof()) break;
    // The stack-frame tables XLA prints after the header (their rows,
    // `N "text"` or `N {...}`, are metadata, not program).
    bool section = false;
    for (const char* s : {"FileNames", "FunctionNames", "FileLocations", "StackFrames"})
      if (c.consume(s)) section = true;
    if (section) {
      for (;;) {
        while (!c.eof() && c.peek() != '\n') c.advance();
        c.skip_space(true);
        if (!std::isdigit(static_cast<unsigned char>(c.peek()))) break;
      }
      continue;
    }
    Computation comp = parse_computation(c);
    if (m.index.count(comp.name))
      fail(file, comp.where, "computation %" + comp.name, "name defined twice in module " + m.name);
    if (comp.entry) {
      if (m.entry) fail(file, comp.where, "computation %" + comp.name, "a second ENTRY computation");
      m.entry = m.computations.size();
    }
    m.index[comp.name] = m.computations.size();
    m.computations.push_back(std::move(comp));
  }
  if (!m.entry && !cut_short)
    fail(file, c.where(), "ENTRY", "module " + m.name + " has no ENTRY computation (is the text truncated?)");
  check_references(m);
  check_no_call_cycle(m);
  // Every collective's groups or pairs read now: a bad group is an error of
  // the text, whatever runs.
  for (const Computation& comp : m.computations)
    for (const Instruction& in : comp.instructions) {
      const std::string base = in.opcode.size() > 6 && in.opcode.compare(in.opcode.size() - 6, 6, "-start") == 0
                                   ? in.opcode.substr(0, in.opcode.size() - 6)
                                   : in.opcode;
      if (base == "collective-permute")
        check_pairs(m, in);
      else if (base == "all-reduce" || base == "all-gather" || base == "reduce-scatter" || base == "all-to-all" ||
               base == "ragged-all-to-all" || base == "collective-broadcast")
        check_groups(m, in);
    }
  return m;
}

Module load_module(const std::string& path, bool cut_short) {
  return parse_module(sim::read_input_text(path, kMaxModuleBytes, "an HLO module"), path, cut_short);
}

namespace {

// More devices than any pod tpusim runs (and than any group list worth
// expanding): a located error, not an allocation of the fuzzer's choosing.
constexpr std::int64_t kMaxDevices = 1 << 20;

// A list of integers between braces ("{1,2}"), or of such lists.
std::vector<std::int64_t> ints_of(Cursor& c, const std::string& construct) {
  std::vector<std::int64_t> v;
  c.expect("{", construct);
  c.skip_space();
  if (c.consume("}")) return v;
  for (;;) {
    v.push_back(c.integer(construct));
    c.skip_space();
    if (c.consume("}")) return v;
    c.expect(",", construct);
  }
}

void at_end(Cursor& c, const std::string& construct) {
  c.skip_space();
  if (!c.eof()) fail(c.file(), c.where(), construct, "unexpected " + c.found());
}

// Shifts a cursor's location to the attribute's place in the file (values
// are parsed apart from the module text; they never span lines).
struct Shifted {
  std::string file;
  Location base;
  [[noreturn]] void rethrow(const sim::ConfigError& e) const {
    const int col = base.column + std::max(0, e.where().column - 1);
    throw sim::ConfigError(sim::SourceLocation{file, base.line, col}, e.key_path(), e.detail());
  }
};

std::vector<std::vector<std::int64_t>> iota_groups(Cursor& c) {
  const std::string kC = "replica_groups";
  c.expect("[", kC);
  const std::int64_t groups = c.integer(kC);
  c.expect(",", kC);
  const std::int64_t size = c.integer(kC);
  c.expect("]", kC);
  c.expect("<=", kC);
  c.expect("[", kC);
  std::vector<std::int64_t> reshape;
  for (;;) {
    reshape.push_back(c.integer(kC));
    c.skip_space();
    if (c.consume("]")) break;
    c.expect(",", kC);
  }
  std::vector<std::int64_t> perm(reshape.size());
  std::iota(perm.begin(), perm.end(), 0);
  c.skip_space();
  if (c.consume("T")) {
    c.expect("(", kC);
    perm.clear();
    for (;;) {
      perm.push_back(c.integer(kC));
      c.skip_space();
      if (c.consume(")")) break;
      c.expect(",", kC);
    }
  }
  at_end(c, kC);
  std::int64_t total = 1;
  for (const std::int64_t d : reshape) {
    if (d <= 0) fail(c.file(), c.where(), kC, "iota dimensions must be positive");
    if (d > kMaxDevices || total * d > kMaxDevices)
      fail(c.file(), c.where(), kC, "more than " + std::to_string(kMaxDevices) + " devices");
    total *= d;
  }
  if (groups <= 0 || size <= 0 || groups > kMaxDevices || size > kMaxDevices || groups * size != total)
    fail(c.file(), c.where(), kC,
         "iota groups [" + std::to_string(groups) + "," + std::to_string(size) + "] do not hold the " +
             std::to_string(total) + " devices of the reshape");
  std::vector<std::int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != static_cast<std::int64_t>(i) || perm.size() != reshape.size())
      fail(c.file(), c.where(), kC, "T(...) must be a permutation of the reshape's dimensions");
  // iota(total) reshaped to `reshape`, transposed by `perm`, flattened.
  const std::size_t r = reshape.size();
  std::vector<std::int64_t> stride(r, 1);
  for (std::size_t i = r - 1; i > 0; --i) stride[i - 1] = stride[i] * reshape[i];
  std::vector<std::int64_t> flat;
  flat.reserve(static_cast<std::size_t>(total));
  std::vector<std::int64_t> idx(r, 0);  // index in the transposed array
  for (std::int64_t n = 0; n < total; ++n) {
    std::int64_t v = 0;
    for (std::size_t i = 0; i < r; ++i) v += idx[i] * stride[static_cast<std::size_t>(perm[i])];
    flat.push_back(v);
    for (std::size_t i = r; i-- > 0;) {
      if (++idx[i] < reshape[static_cast<std::size_t>(perm[i])]) break;
      idx[i] = 0;
    }
  }
  std::vector<std::vector<std::int64_t>> out(static_cast<std::size_t>(groups));
  for (std::int64_t g = 0; g < groups; ++g)
    out[static_cast<std::size_t>(g)].assign(flat.begin() + g * size, flat.begin() + (g + 1) * size);
  return out;
}

// mesh['a'=2,'b'=2] {'b'}: devices row-major over the mesh axes (the first
// major), one group per coordinate of the axes not named, each group in the
// order of the named axes.
std::vector<std::vector<std::int64_t>> mesh_groups(Cursor& c) {
  const std::string kC = "replica_groups";
  c.expect("mesh", kC);
  c.expect("[", kC);
  std::vector<std::pair<std::string, std::int64_t>> axes;
  std::int64_t devices_so_far = 1;
  auto quoted = [&]() {
    c.expect("'", kC);
    std::string n;
    while (!c.eof() && c.peek() != '\'' && c.peek() != '\n') {
      n += c.peek();
      c.advance();
    }
    c.expect("'", kC);
    return n;
  };
  for (;;) {
    const std::string n = quoted();
    c.expect("=", kC);
    const std::int64_t size = c.integer(kC);
    if (size <= 0) fail(c.file(), c.where(), kC, "mesh axis '" + n + "' must have a positive size");
    if (size > kMaxDevices || devices_so_far * size > kMaxDevices)
      fail(c.file(), c.where(), kC, "more than " + std::to_string(kMaxDevices) + " devices");
    devices_so_far *= size;
    axes.emplace_back(n, size);
    c.skip_space();
    if (c.consume("]")) break;
    c.expect(",", kC);
  }
  c.expect("{", kC);
  std::vector<std::size_t> chosen;
  c.skip_space();
  while (!c.consume("}")) {
    const Location at = c.where();
    const std::string n = quoted();
    const auto it = std::find_if(axes.begin(), axes.end(), [&](const auto& a) { return a.first == n; });
    if (it == axes.end()) fail(c.file(), at, kC, "axis '" + n + "' is not an axis of the mesh");
    chosen.push_back(static_cast<std::size_t>(it - axes.begin()));
    c.skip_space();
    if (c.peek() == ',') c.advance();
    c.skip_space();
  }
  at_end(c, kC);
  const std::size_t r = axes.size();
  std::vector<std::int64_t> stride(r, 1);
  for (std::size_t i = r - 1; i > 0; --i) stride[i - 1] = stride[i] * axes[i].second;
  std::int64_t total = stride[0] * axes[0].second;
  std::map<std::vector<std::int64_t>, std::vector<std::int64_t>> groups;  // other axes' coordinates -> devices
  // Walk the chosen axes major first within each group.
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < r; ++i)
    if (std::find(chosen.begin(), chosen.end(), i) == chosen.end()) order.push_back(i);
  for (const std::size_t a : chosen) order.push_back(a);
  std::vector<std::int64_t> idx(r, 0);
  for (std::int64_t n = 0; n < total; ++n) {
    std::int64_t dev = 0;
    std::vector<std::int64_t> key;
    for (std::size_t i = 0; i < r; ++i) {
      dev += idx[order[i]] * stride[order[i]];
      if (i + chosen.size() < r) key.push_back(idx[order[i]]);
    }
    groups[key].push_back(dev);
    for (std::size_t i = r; i-- > 0;) {
      if (++idx[order[i]] < axes[order[i]].second) break;
      idx[order[i]] = 0;
    }
  }
  std::vector<std::vector<std::int64_t>> out;
  for (auto& g : groups) out.push_back(std::move(g.second));
  return out;
}

}  // namespace

std::vector<std::vector<std::int64_t>> parse_replica_groups(const std::string& text, std::int64_t devices,
                                                            const std::string& file, const Location& where,
                                                            const std::string& ids) {
  const Shifted shift{file, where};
  std::vector<std::vector<std::int64_t>> groups;
  try {
    Cursor c(text, file);
    c.skip_space();
    if (c.peek() == '[') {
      groups = iota_groups(c);
    } else if (c.peek() == 'm') {
      groups = mesh_groups(c);
    } else {
      c.expect("{", "replica_groups");
      c.skip_space();
      if (!c.consume("}")) {
        for (;;) {
          c.skip_space();
          groups.push_back(ints_of(c, "replica_groups"));
          c.skip_space();
          if (c.consume("}")) break;
          c.expect(",", "replica_groups");
        }
      }
      at_end(c, "replica_groups");
    }
  } catch (const sim::ConfigError& e) {
    shift.rethrow(e);
  }
  if (groups.empty()) {
    if (devices > kMaxDevices)
      fail(file, where, "replica_groups", "more than " + std::to_string(kMaxDevices) + " devices");
    groups.emplace_back(static_cast<std::size_t>(devices));
    std::iota(groups[0].begin(), groups[0].end(), 0);
  }
  std::set<std::int64_t> seen;
  for (const auto& g : groups)
    for (const std::int64_t d : g) {
      if (d < 0 || d >= devices)
        fail(file, where, "replica_groups",
             "device " + std::to_string(d) + " is not one of the module's " + std::to_string(devices) + " " + ids);
      if (!seen.insert(d).second)
        fail(file, where, "replica_groups", "device " + std::to_string(d) + " is in two groups");
    }
  return groups;
}

std::vector<std::pair<std::int64_t, std::int64_t>> parse_pairs(const std::string& text, const std::string& file,
                                                               const Location& where) {
  const Shifted shift{file, where};
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
  try {
    Cursor c(text, file);
    c.expect("{", "source_target_pairs");
    c.skip_space();
    if (!c.consume("}")) {
      for (;;) {
        c.skip_space();
        const Location at = c.where();
        const std::vector<std::int64_t> p = ints_of(c, "source_target_pairs");
        if (p.size() != 2) fail(file, at, "source_target_pairs", "each pair is {source,target}");
        pairs.emplace_back(p[0], p[1]);
        c.skip_space();
        if (c.consume("}")) break;
        c.expect(",", "source_target_pairs");
      }
    }
    at_end(c, "source_target_pairs");
  } catch (const sim::ConfigError& e) {
    shift.rethrow(e);
  }
  return pairs;
}

std::vector<std::int64_t> parse_int_list(const std::string& text, const std::string& file, const Location& where) {
  const Shifted shift{file, where};
  try {
    Cursor c(text, file);
    std::vector<std::int64_t> v = ints_of(c, "integer list");
    at_end(c, "integer list");
    return v;
  } catch (const sim::ConfigError& e) {
    shift.rethrow(e);
  }
}

namespace {

enum class GroupMode { cross_replica, cross_partition, cross_replica_and_partition, flattened_id };

GroupMode group_mode(const Module& m, const Instruction& in) {
  const bool channel = in.attribute("channel_id") != nullptr;
  const std::string* global = in.attribute("use_global_device_ids");
  if (global && *global != "true" && *global != "false")
    fail(m.file, in.where, "instruction %" + in.name,
         "use_global_device_ids is true or false, found " + sim::quote_short(*global));
  const bool has_flag = in.opcode.rfind("all-reduce", 0) == 0 || in.opcode.rfind("all-gather", 0) == 0 ||
                        in.opcode.rfind("reduce-scatter", 0) == 0;
  const bool global_ids = global && *global == "true";
  if (!channel) {
    if (global_ids)
      fail(m.file, in.where, "instruction %" + in.name,
           "use_global_device_ids=true needs a channel_id (XLA rejects the combination)");
    return GroupMode::cross_replica;
  }
  if (global_ids) return GroupMode::flattened_id;
  return has_flag ? GroupMode::cross_replica_and_partition : GroupMode::cross_partition;
}

// The groups as the text gives them, checked against the range of ids
// (replicas, partitions or devices) their group mode gives them.
std::vector<std::vector<std::int64_t>> mode_groups(const Module& m, const Instruction& in, GroupMode mode) {
  const std::int64_t replicas = m.replica_count, partitions = m.num_partitions;
  const std::string* text = in.attribute("replica_groups");
  const std::int64_t ids = mode == GroupMode::flattened_id      ? replicas * partitions
                           : mode == GroupMode::cross_partition ? partitions
                                                                : replicas;
  return parse_replica_groups(text ? *text : "{}", ids, m.file, in.where,
                              mode == GroupMode::flattened_id ? "partitions (num_partitions x replica_count)"
                              : mode == GroupMode::cross_partition
                                  ? "partitions (a channel_id without use_global_device_ids: partition ids)"
                                  : "replicas (without use_global_device_ids=true the groups are replica ids)");
}

// Each group once per copy (0..copies-1), id i of a group in copy c as
// device(i, c).
template <class Device>
std::vector<std::vector<std::int64_t>> repeated_groups(const std::vector<std::vector<std::int64_t>>& groups,
                                                       std::int64_t copies, Device device) {
  std::vector<std::vector<std::int64_t>> out;
  for (std::int64_t c = 0; c < copies; ++c)
    for (const auto& g : groups) {
      out.emplace_back();
      for (const std::int64_t i : g) out.back().push_back(device(i, c));
    }
  return out;
}

}  // namespace

void check_groups(const Module& m, const Instruction& in) { mode_groups(m, in, group_mode(m, in)); }

std::vector<std::vector<std::int64_t>> device_groups(const Module& m, const Instruction& in) {
  const std::int64_t replicas = m.replica_count, partitions = m.num_partitions;
  const GroupMode mode = group_mode(m, in);
  const auto groups = mode_groups(m, in, mode);
  std::vector<std::vector<std::int64_t>> out;
  switch (mode) {
    case GroupMode::flattened_id: return groups;
    case GroupMode::cross_replica:  // each group of replicas, once in every partition
      return repeated_groups(groups, partitions, [&](std::int64_t r, std::int64_t p) { return r * partitions + p; });
    case GroupMode::cross_partition:  // each group of partitions, once in every replica
      return repeated_groups(groups, replicas, [&](std::int64_t p, std::int64_t r) { return r * partitions + p; });
    case GroupMode::cross_replica_and_partition:  // the group's replicas, all their partitions
      for (const auto& g : groups) {
        out.emplace_back();
        for (const std::int64_t r : g)
          for (std::int64_t p = 0; p < partitions; ++p) out.back().push_back(r * partitions + p);
      }
      return out;
  }
  return out;
}

namespace {

// The pairs as the text gives them: partition ids with a channel_id,
// replica ids without, each checked against its range.
std::vector<std::pair<std::int64_t, std::int64_t>> checked_pairs(const Module& m, const Instruction& in) {
  const std::string* text = in.attribute("source_target_pairs");
  if (!text) fail(m.file, in.where, "instruction %" + in.name, in.opcode + " without source_target_pairs");
  const bool channel = in.attribute("channel_id") != nullptr;
  const std::int64_t ids = channel ? m.num_partitions : m.replica_count;
  auto pairs = parse_pairs(*text, m.file, in.where);
  for (const auto& [src, dst] : pairs)
    if (src < 0 || dst < 0 || src >= ids || dst >= ids)
      fail(m.file, in.where, "source_target_pairs",
           "pair {" + std::to_string(src) + "," + std::to_string(dst) + "} names " +
               (channel ? "a partition outside the module's " + std::to_string(m.num_partitions) + " partitions"
                        : "a replica outside the module's " + std::to_string(m.replica_count) +
                              " replicas (no channel_id: the pairs are replica ids)"));
  return pairs;
}

}  // namespace

void check_pairs(const Module& m, const Instruction& in) { checked_pairs(m, in); }

std::vector<std::pair<std::int64_t, std::int64_t>> device_pairs(const Module& m, const Instruction& in) {
  const bool channel = in.attribute("channel_id") != nullptr;
  const std::int64_t partitions = m.num_partitions, copies = channel ? m.replica_count : partitions;
  const auto pairs = checked_pairs(m, in);
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  for (std::int64_t k = 0; k < copies; ++k)
    for (const auto& [src, dst] : pairs)
      out.emplace_back(channel ? k * partitions + src : src * partitions + k,
                       channel ? k * partitions + dst : dst * partitions + k);
  return out;
}

}  // namespace hlo
