#include "hlo/cost.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <set>
#include <sstream>

#include "hlo/opcodes.h"
#include "sim/error.h"
#include "sim/text.h"

namespace hlo {

namespace {

[[noreturn]] void fail(const Module& m, const Instruction& in, const std::string& what) {
  throw sim::ConfigError(sim::SourceLocation{m.file, in.where.line, in.where.column}, "instruction %" + in.name, what);
}

using sim::ends_with;

// No work of their own: views, tuples, values known at compile time, and
// the `-done` halves whose work the `-start` carries.
bool is_free(const std::string& op) {
  if (ends_with(op, "-done") || ends_with(op, "-update")) return true;
  static const std::set<std::string> kFree = {"parameter",
                                              "constant",
                                              "get-tuple-element",
                                              "tuple",
                                              "bitcast",
                                              "after-all",
                                              "partition-id",
                                              "replica-id",
                                              "opt-barrier",
                                              "add-dependency",
                                              "domain",
                                              "get-dimension-size",
                                              "async-done",
                                              "copy-done",
                                              "all-reduce-done",
                                              "all-gather-done",
                                              "collective-permute-done",
                                              "send-done",
                                              "recv-done",
                                              "async-update"};
  return kFree.count(op) > 0;
}

// One vector operation per element of the result.
bool is_arithmetic(const std::string& op) {
  static const std::set<std::string> kOps = {"add",
                                             "subtract",
                                             "multiply",
                                             "divide",
                                             "maximum",
                                             "minimum",
                                             "negate",
                                             "exponential",
                                             "log",
                                             "rsqrt",
                                             "sqrt",
                                             "cbrt",
                                             "tanh",
                                             "power",
                                             "compare",
                                             "select",
                                             "convert",
                                             "abs",
                                             "sine",
                                             "cosine",
                                             "tan",
                                             "clamp",
                                             "and",
                                             "or",
                                             "not",
                                             "xor",
                                             "remainder",
                                             "floor",
                                             "ceil",
                                             "sign",
                                             "round-nearest-even",
                                             "round-nearest-afz",
                                             "logistic",
                                             "exponential-minus-one",
                                             "log-plus-one",
                                             "atan2",
                                             "is-finite",
                                             "shift-left",
                                             "shift-right-logical",
                                             "shift-right-arithmetic",
                                             "popcnt",
                                             "erf",
                                             "real",
                                             "imag",
                                             "reduce-precision",
                                             "stochastic-convert",
                                             "count-leading-zeros"};
  return kOps.count(op) > 0;
}

// Data movement: bytes and no arithmetic.
bool is_movement(const std::string& op) {
  static const std::set<std::string> kOps = {"copy",
                                             "copy-start",
                                             "broadcast",
                                             "reshape",
                                             "transpose",
                                             "slice",
                                             "dynamic-slice",
                                             "pad",
                                             "concatenate",
                                             "reverse",
                                             "gather",
                                             "scatter",
                                             "iota",
                                             "bitcast-convert",
                                             "dynamic-update-slice",
                                             "sort",
                                             "rng",
                                             "rng-bit-generator",
                                             "rng-get-and-update-state",
                                             "reduce",
                                             "reduce-window",
                                             "select-and-scatter",
                                             "map",
                                             "infeed",
                                             "outfeed",
                                             "send",
                                             "recv"};
  return kOps.count(op) > 0;
}

std::uint64_t product(const std::vector<std::int64_t>& dims, const std::vector<std::int64_t>& which) {
  std::uint64_t p = 1;
  for (const std::int64_t d : which) p *= static_cast<std::uint64_t>(dims.at(static_cast<std::size_t>(d)));
  return p;
}

// The window attribute's fields: size=3x3 pad=1_1x1_1 stride=2x2 ...
struct Window {
  std::vector<std::int64_t> size, pad_lo, pad_hi, stride, lhs_dilate, rhs_dilate;
};

Window parse_window(const std::string& text, std::size_t spatial, const Module& m, const Instruction& in) {
  Window w;
  w.size.assign(spatial, 1);
  w.pad_lo.assign(spatial, 0);
  w.pad_hi.assign(spatial, 0);
  w.stride.assign(spatial, 1);
  w.lhs_dilate.assign(spatial, 1);
  w.rhs_dilate.assign(spatial, 1);
  std::string body = text;
  if (!body.empty() && body.front() == '{') body = body.substr(1, body.size() - 2);
  std::size_t pos = 0;
  while (pos < body.size()) {
    while (pos < body.size() && body[pos] == ' ') ++pos;
    const std::size_t end = std::min(body.find(' ', pos), body.size());
    const std::string field = body.substr(pos, end - pos);
    pos = end;
    const std::size_t eq = field.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = field.substr(0, eq), value = field.substr(eq + 1);
    std::vector<std::string> parts;
    std::size_t b = 0;
    for (std::size_t i = 0; i <= value.size(); ++i)
      if (i == value.size() || value[i] == 'x') {
        parts.push_back(value.substr(b, i - b));
        b = i + 1;
      }
    if (key == "rhs_reversal") continue;
    if (value.size() > 4096) fail(m, in, "window " + key + " is too long");
    if (parts.size() != spatial)
      fail(m, in,
           "window " + key + " has " + std::to_string(parts.size()) + " entries for " + std::to_string(spatial) +
               " spatial dimensions");
    for (std::size_t d = 0; d < spatial; ++d) {
      const std::string& p = parts[d];
      try {
        if (key == "pad") {
          const std::size_t u = p.find('_');
          if (u == std::string::npos) fail(m, in, "window pad " + sim::quote_short(p) + " is not low_high");
          w.pad_lo[d] = std::stoll(p.substr(0, u));
          w.pad_hi[d] = std::stoll(p.substr(u + 1));
          if (std::llabs(w.pad_lo[d]) > (1LL << 40) || std::llabs(w.pad_hi[d]) > (1LL << 40))
            fail(m, in, "window pad " + sim::quote_short(p) + " is out of range");
        } else {
          const std::int64_t v = std::stoll(p);
          if (v < (key == "size" ? 0 : 1) || v > (1 << 20))
            fail(m, in, "window " + key + " entry " + sim::quote_short(p) + " is out of range");
          if (key == "size") w.size[d] = v;
          if (key == "stride") w.stride[d] = v;
          if (key == "lhs_dilate") w.lhs_dilate[d] = v;
          if (key == "rhs_dilate") w.rhs_dilate[d] = v;
        }
      } catch (const std::logic_error&) {
        fail(m, in, "window " + key + " entry " + sim::quote_short(p) + " is not an integer");
      }
    }
  }
  return w;
}

// Pairs (output position, window position) of one spatial dimension that
// read an input element, not padding or a dilation hole.
double valid_pairs(std::int64_t in, std::int64_t out, const Window& w, std::size_t d) {
  double n = 0;
  const std::int64_t extent = (in - 1) * w.lhs_dilate[d];
  const std::int64_t s = std::max<std::int64_t>(1, w.stride[d]), ld = std::max<std::int64_t>(1, w.lhs_dilate[d]);
  for (std::int64_t k = 0; k < w.size[d]; ++k) {
    // Output positions o with p = o s + k rd - pad_lo in [0, extent] and on
    // the dilated input's grid (p divisible by ld).
    const std::int64_t base = k * w.rhs_dilate[d] - w.pad_lo[d];
    const std::int64_t lo = base >= 0 ? 0 : (-base + s - 1) / s;
    const std::int64_t hi = extent - base < 0 ? -1 : std::min(out - 1, (extent - base) / s);
    if (ld == 1) {
      n += double(std::max<std::int64_t>(0, hi - lo + 1));
    } else {
      for (std::int64_t o = lo; o <= hi; ++o)
        if ((o * s + base) % ld == 0) n += 1;
    }
  }
  return n;
}

const Shape& operand_shape(const Module& m, const Computation& comp, const Instruction& in, std::size_t i) {
  if (in.operands.size() <= i) fail(m, in, in.opcode + " needs " + std::to_string(i + 1) + " operands");
  const Shape& s = comp.find(in.operands[i])->shape;
  if (s.tuple) fail(m, in, "operand %" + in.operands[i] + " of " + in.opcode + " is a tuple");
  return s;
}

// backend_config as JSON: printed as an object, or (older XLA) as a quoted
// string holding one. Text that is neither JSON nor a string of it is a
// located error: a loop's trip count or a kernel's cost read from it must not
// be guessed.
std::optional<nlohmann::json> backend_config(const Module& m, const Instruction& in) {
  const std::string* text = in.attribute("backend_config");
  if (!text || text->empty()) return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_string()) j = nlohmann::json::parse(j.get<std::string>(), nullptr, false);
  if (j.is_discarded())
    throw sim::ConfigError(sim::SourceLocation{m.file, in.where.line, in.where.column}, "backend_config",
                           "of %" + in.name + " is not JSON: " + sim::quote_short(*text));
  if (!j.is_object()) return std::nullopt;
  return j;
}

// A JSON number, or a number printed as a string (protobuf's int64).
std::optional<double> number(const nlohmann::json& j) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    try {
      return std::stod(j.get<std::string>());
    } catch (const std::logic_error&) {
    }
  }
  return std::nullopt;
}

// Instructions a schedule may unroll to: a program of this size is minutes
// of simulation; more is a trip count no one meant (or a fuzzer's).
constexpr std::size_t kMaxSteps = 1 << 22;

}  // namespace

const char* to_string(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::all_reduce: return "all-reduce";
    case CollectiveKind::all_gather: return "all-gather";
    case CollectiveKind::reduce_scatter: return "reduce-scatter";
    case CollectiveKind::collective_permute: return "collective-permute";
    case CollectiveKind::all_to_all: return "all-to-all";
    case CollectiveKind::none: break;
  }
  return "none";
}

CollectiveKind CostModel::collective_kind(const std::string& opcode) {
  std::string op = opcode;
  if (op.size() > 6 && op.compare(op.size() - 6, 6, "-start") == 0) op.resize(op.size() - 6);
  if (op == "all-reduce") return CollectiveKind::all_reduce;
  if (op == "all-gather") return CollectiveKind::all_gather;
  if (op == "reduce-scatter") return CollectiveKind::reduce_scatter;
  if (op == "collective-permute") return CollectiveKind::collective_permute;
  if (op == "all-to-all" || op == "ragged-all-to-all") return CollectiveKind::all_to_all;
  return CollectiveKind::none;
}

const Instruction* CostModel::collective_of(const Instruction& in) const {
  if (collective_kind(in.opcode) != CollectiveKind::none) return &in;
  if (in.opcode == "async-start") {
    const std::string* calls = in.attribute("calls");
    if (!calls) return nullptr;
    const Computation& c = module_.computation(calls->substr(calls->front() == '%' ? 1 : 0), in.where);
    const Instruction& root = c.instructions[c.root];
    if (collective_kind(root.opcode) != CollectiveKind::none) return &root;
  }
  return nullptr;
}

Matmul matmul_of(const Module& m, const Computation& comp, const Instruction& in) {
  if (in.shape.tuple) fail(m, in, in.opcode + " with a tuple result");
  const Shape& out = in.shape;
  const std::uint64_t out_elements = out.element_count();
  Matmul mm;
  if (in.opcode == "dot") {
    const Shape& lhs = operand_shape(m, comp, in, 0);
    const Shape& rhs = operand_shape(m, comp, in, 1);
    auto list = [&](const char* key) {
      const std::string* v = in.attribute(key);
      std::vector<std::int64_t> dims = v ? parse_int_list(*v, m.file, in.where) : std::vector<std::int64_t>{};
      return dims;
    };
    const auto lc = list("lhs_contracting_dims"), rc = list("rhs_contracting_dims");
    const auto lb = list("lhs_batch_dims"), rb = list("rhs_batch_dims");
    for (const auto* v : {&lc, &lb})
      for (const std::int64_t d : *v)
        if (d < 0 || d >= static_cast<std::int64_t>(lhs.dims.size())) fail(m, in, "lhs dimension out of range");
    for (const auto* v : {&rc, &rb})
      for (const std::int64_t d : *v)
        if (d < 0 || d >= static_cast<std::int64_t>(rhs.dims.size())) fail(m, in, "rhs dimension out of range");
    const std::uint64_t k = product(lhs.dims, lc);
    if (k != product(rhs.dims, rc)) fail(m, in, "contracting dimensions of lhs and rhs differ in size");
    std::uint64_t rhs_free = 1;
    for (std::size_t d = 0; d < rhs.dims.size(); ++d)
      if (std::find(rc.begin(), rc.end(), std::int64_t(d)) == rc.end() &&
          std::find(rb.begin(), rb.end(), std::int64_t(d)) == rb.end())
        rhs_free *= static_cast<std::uint64_t>(rhs.dims[d]);
    mm.k = k;
    mm.n = std::max<std::uint64_t>(1, rhs_free);
    mm.m = out_elements / mm.n;
    return mm;
  }
  // convolution: dim_labels=lhs_rhs->out, e.g. b01f_01io->b01f.
  const Shape& lhs = operand_shape(m, comp, in, 0);
  const Shape& rhs = operand_shape(m, comp, in, 1);
  const std::string* labels = in.attribute("dim_labels");
  if (!labels) fail(m, in, "convolution without dim_labels");
  const std::size_t us = labels->find('_'), arrow = labels->find("->");
  if (us == std::string::npos || arrow == std::string::npos || arrow < us)
    fail(m, in, "dim_labels " + sim::quote_short(*labels) + " is not lhs_rhs->out");
  const std::string l = labels->substr(0, us), r = labels->substr(us + 1, arrow - us - 1),
                    o = labels->substr(arrow + 2);
  if (l.size() != lhs.dims.size() || r.size() != rhs.dims.size() || o.size() != out.dims.size())
    fail(m, in, "dim_labels " + sim::quote_short(*labels) + " do not match the ranks of the operands and result");
  const std::size_t spatial = l.size() - 2;
  const std::string* wtext = in.attribute("window");
  const Window w = wtext ? parse_window(*wtext, spatial, m, in) : parse_window("", spatial, m, in);
  std::int64_t feature_groups = 1;
  if (const std::string* g = in.attribute("feature_group_count"))
    feature_groups = std::max(1LL, std::atoll(g->c_str()));
  const std::size_t in_f = r.find('i'), out_f = o.find('f');
  if (in_f == std::string::npos || out_f == std::string::npos) fail(m, in, "dim_labels without i or f");
  double pairs = 1;
  for (std::size_t d = 0; d < spatial; ++d) {
    const char digit = static_cast<char>('0' + d);
    const std::size_t li = l.find(digit), oi = o.find(digit);
    if (li == std::string::npos || oi == std::string::npos)
      fail(m, in, "dim_labels miss spatial dimension " + std::string(1, digit));
    pairs *= valid_pairs(lhs.dims[li], out.dims[oi], w, d);
  }
  // Per output element: the input features of its group times the valid
  // window positions, averaged over the output's spatial positions.
  double out_spatial = 1;
  for (std::size_t d = 0; d < spatial; ++d) out_spatial *= double(out.dims[o.find(static_cast<char>('0' + d))]);
  const double k = double(rhs.dims[in_f]) * pairs / std::max(1.0, out_spatial);
  (void)feature_groups;  // the kernel's i dimension already holds the features of one group
  mm.n = static_cast<std::uint64_t>(out.dims[out_f]);
  mm.m = mm.n ? out_elements / mm.n : 0;
  mm.k = static_cast<std::uint64_t>(std::llround(std::max(1.0, k)));
  return mm;
}

namespace {

// Bytes of a shape's arrays in host memory.
std::uint64_t host_bytes(const Shape& s) {
  if (s.tuple) {
    std::uint64_t sum = 0;
    for (const Shape& e : s.elements) sum += host_bytes(e);
    return sum;
  }
  return s.memory_space == kHostMemorySpace ? s.bytes() : 0;
}

}  // namespace

void CostModel::host_transfer(const Computation& comp, const Instruction& in, Cost& c) const {
  // XLA computes nothing in host memory: an instruction with an operand or
  // result there moves it (copy, copy-start, a dynamic slice out of an
  // offloaded buffer, a dynamic-update-slice into one). Its HBM side is the
  // other end: a copy from host memory writes HBM, one to it reads HBM.
  for (std::size_t i = 0; i < in.operands.size(); ++i) {
    const Shape& s = comp.find(in.operands[i])->shape;
    if (i == 0 && in.opcode == "dynamic-update-slice") continue;  // the buffer, updated in place
    std::uint64_t b = host_bytes(s);
    if (b && (in.opcode == "dynamic-slice" || in.opcode == "slice")) b = std::min(b, in.shape.bytes());
    c.host_read_bytes += b;
  }
  std::uint64_t w = host_bytes(in.shape);
  if (w && in.opcode == "dynamic-update-slice" && in.operands.size() > 1)
    w = std::min(w, comp.find(in.operands[1])->shape.bytes());
  c.host_written_bytes = w;
}

std::uint64_t CostModel::operand_bytes(const Computation& comp, const Instruction& in) const {
  std::uint64_t b = 0;
  for (const std::string& op : in.operands) b += comp.find(op)->shape.bytes(true);
  return b;
}

Cost CostModel::fusion_cost(const Computation& comp, const Instruction& in) {
  Cost c;
  const std::string* calls = in.attribute("calls");
  if (!calls) fail(module_, in, "fusion without calls=");
  const Computation& body = module_.computation(calls->substr(calls->front() == '%' ? 1 : 0), in.where);
  // HBM bytes: each operand as the fused computation reads it (a parameter
  // only sliced inside is read as its slices), the result as written (a
  // dynamic-update-slice root writes its update in place).
  const Instruction& root = body.instructions[body.root];
  const bool in_place = root.opcode == "dynamic-update-slice";
  for (std::size_t p = 0; p < in.operands.size(); ++p) {
    const Shape& shape = comp.find(in.operands[p])->shape;
    const Instruction* param = nullptr;
    for (const Instruction& i : body.instructions)
      if (i.opcode == "parameter" && i.literal == std::to_string(p)) param = &i;
    std::uint64_t bytes = shape.bytes(true);
    if (param && bytes > 0) {
      std::uint64_t sliced = 0;
      bool only_sliced = true, any_user = false;
      for (const Instruction& u : body.instructions) {
        if (std::find(u.operands.begin(), u.operands.end(), param->name) == u.operands.end()) continue;
        any_user = true;
        if ((u.opcode == "dynamic-slice" || u.opcode == "slice" || u.opcode == "gather") &&
            u.operands[0] == param->name)
          sliced += u.shape.bytes();
        else if (in_place && &u == &root && u.operands[0] == param->name)
          continue;  // the buffer updated in place
        else
          only_sliced = false;
      }
      if (any_user && only_sliced) bytes = std::min(bytes, sliced);
    }
    c.read_bytes += bytes;
  }
  c.written_bytes = in.shape.bytes(true);
  if (in_place && root.operands.size() > 1 && !in.shape.tuple && in.shape.memory_space == 0)
    c.written_bytes = std::min(c.written_bytes, body.find(root.operands[1])->shape.bytes());
  // Work inside: matmuls (nested fusions too), one vector op per element of
  // the result for every other instruction that computes.
  int ops = 0;
  for (const Instruction& i : body.instructions) {
    if (i.opcode == "dot" || i.opcode == "convolution") {
      c.matmuls.push_back(matmul_of(module_, body, i));
    } else if (i.opcode == "fusion") {
      const Cost inner = fusion_cost(body, i);
      c.matmuls.insert(c.matmuls.end(), inner.matmuls.begin(), inner.matmuls.end());
      ops += static_cast<int>(std::lround(inner.flops_per_element));
    } else if (is_arithmetic(i.opcode) || i.opcode == "reduce" || i.opcode == "map") {
      ++ops;
    }
  }
  for (const Matmul& mm : c.matmuls) c.flops += mm.flops();
  c.elements = in.shape.tuple ? 0 : in.shape.element_count();
  if (in.shape.tuple)
    for (const Shape& e : in.shape.elements) c.elements = std::max(c.elements, e.element_count());
  c.flops_per_element = ops;
  return c;
}

namespace {

// A kernel's FLOPs (its cost_estimate, or as the workload gives them) run
// on the MXUs as one cube-shaped matmul, m = k = n = (FLOPs / 2)^(1/3): the
// shape that keeps the arrays busy with the fewest operand bytes (one
// m x k x 1 matmul over the result's elements used one column of the
// array: 2.1 TFLOP took 2.65 s on a v5e, 243 x its peak's time). The
// kernel's bytes stay its own (add_work counts the matmul's operands
// within them). The FLOPs reported are the kernel's, not the cube's
// rounded 2 n^3.
void kernel_flops(double flops, Cost& c) {
  const auto side = static_cast<std::uint64_t>(std::max(1.0, std::round(std::cbrt(flops / 2.0))));
  c.matmuls.push_back(Matmul{side, side, side});
  c.flops = flops;
}

}  // namespace

std::string base_name(const std::string& name) {
  const std::size_t dot = name.rfind('.');
  if (dot == std::string::npos || dot + 1 == name.size() || dot == 0) return name;
  for (std::size_t i = dot + 1; i < name.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return name;
  return name.substr(0, dot);
}

Cost CostModel::cost(const Computation& comp, const Instruction& in) {
  Cost c;
  const std::string& op = in.opcode;
  if (is_free(op)) {
    c.free = true;
    return c;
  }
  if (const Instruction* coll = collective_of(in)) {
    c.collective = collective_kind(coll->opcode);
    // Sizes from the operands of the instruction that performs it (inside
    // an async wrapper, its parameters have the same shapes).
    std::uint64_t in_bytes = 0;
    int bits = 0;
    for (const std::string& o : in.operands) {
      const Shape& s = comp.find(o)->shape;
      in_bytes += s.bytes();
      if (!s.tuple) bits = std::max(bits, element_bits(s.type));
    }
    c.element_bytes = (bits == 8 || bits == 16 || bits == 32 || bits == 64) ? bits / 8 : 4;
    c.collective_bytes = in_bytes;
    if (c.collective == CollectiveKind::all_gather) {
      // The gathered output: the result; a start's is the second element of
      // its (operands, result, context...) tuple.
      const bool start = ends_with(op, "-start");
      const Shape& out = start && in.shape.tuple && in.shape.elements.size() >= 2 ? in.shape.elements[1] : in.shape;
      c.collective_bytes = out.bytes();
    }
    return c;
  }
  if (op == "fusion") return fusion_cost(comp, in);
  if (op == "async-start" || op == "call-start") {  // its wrapped instructions are steps of their own (schedule)
    c.free = true;
    return c;
  }
  if (const std::string base = sugar_base(op); !base.empty()) {
    // `<op>-start`: the wrapped op itself, its result the second element of
    // the start's (operands, result, context...) tuple.
    Instruction wrapped = in;
    wrapped.opcode = base;
    if (in.shape.tuple && in.shape.elements.size() >= 2) wrapped.shape = in.shape.elements[1];
    return cost(comp, wrapped);
  }
  if (op == "copy-start" && in.shape.tuple && !in.shape.elements.empty()) {
    // (destination, source, context): the copy writes its destination.
    Instruction copy = in;
    copy.opcode = "copy";
    copy.shape = in.shape.elements[0];
    return cost(comp, copy);
  }
  c.read_bytes = operand_bytes(comp, in);
  c.written_bytes = in.shape.bytes(true);
  c.elements = in.shape.tuple ? 0 : in.shape.element_count();
  host_transfer(comp, in, c);
  if (op == "dot" || op == "convolution") {
    c.matmuls.push_back(matmul_of(module_, comp, in));
    c.flops = c.matmuls.back().flops();
    return c;
  }
  if (op == "custom-call") {
    const std::string* target = in.attribute("custom_call_target");
    const std::string name = target ? *target : "?";
    // A Pallas kernel's cost_estimate, when its backend_config carries one.
    if (auto j = backend_config(module_, in)) {
      for (const auto& path : {"/custom_call_config/cost_estimate", "/cost_estimate"}) {
        const nlohmann::json::json_pointer ptr(path);
        if (!j->contains(ptr)) continue;
        const nlohmann::json& est = (*j)[ptr];
        // A count: not negative (flops: -1e30 ran as a number), finite, and
        // below 2^62, so the casts below cannot wrap.
        auto count = [&](const char* key) -> std::optional<double> {
          if (!est.contains(key)) return std::nullopt;
          const std::optional<double> v = number(est[key]);
          if (v && !(*v >= 0 && *v < kMaxKernelCount)) {
            std::ostringstream shown;
            shown << *v;
            fail(module_, in,
                 std::string("cost_estimate.") + key + " is " + shown.str() +
                     ": a count of the kernel's work must be at least 0 and below 2^62");
          }
          return v;
        };
        if (est.contains("flops"))
          if (auto f = count("flops")) kernel_flops(*f, c);
        if (est.contains("bytes_accessed"))
          if (auto b = count("bytes_accessed")) {
            c.read_bytes = static_cast<std::uint64_t>(*b);
            c.written_bytes = 0;
          }
        return c;
      }
    }
    auto given = custom_call_flops_.find(in.name);
    if (given == custom_call_flops_.end()) given = custom_call_flops_.find(base_name(in.name));
    if (given != custom_call_flops_.end()) {
      kernel_flops(given->second, c);
      note(in, "custom-call " + name + ": FLOPs from workload.custom_call_flops, bytes its operands and result");
      return c;
    }
    note(in,
         "custom-call " + name + ": no cost_estimate in its backend_config; costed as moving its operands and result");
    return c;
  }
  if (op == "reduce" || op == "reduce-window" || op == "map") {
    c.elements = 0;
    for (const std::string& o : in.operands) c.elements = std::max(c.elements, comp.find(o)->shape.element_count());
    c.flops_per_element = 1;
    return c;
  }
  if (is_arithmetic(op)) {
    c.flops_per_element = 1;
    return c;
  }
  if (is_movement(op)) return c;
  note(in, "unknown opcode " + op + ": costed as an elementwise op of its shape");
  c.flops_per_element = 1;
  return c;
}

namespace {

// A scalar integer constant's value.
std::optional<std::int64_t> integer_constant(const Instruction* in) {
  if (!in || in->opcode != "constant") return std::nullopt;
  char* end = nullptr;
  const long long v = std::strtoll(in->literal.c_str(), &end, 10);
  if (in->literal.empty() || *end != '\0' || v < -1000000000000LL || v > 1000000000000LL) return std::nullopt;
  return v;
}

// get-tuple-element's index=.
std::optional<std::size_t> tuple_index(const Instruction& in) {
  if (in.opcode != "get-tuple-element") return std::nullopt;
  const std::string* i = in.attribute("index");
  if (!i) return std::nullopt;
  char* end = nullptr;
  const long v = std::strtol(i->c_str(), &end, 10);
  if (*end != '\0' || v < 0) return std::nullopt;
  return static_cast<std::size_t>(v);
}

}  // namespace

std::optional<std::int64_t> CostModel::trip_count(const Instruction& loop, const Computation* parent) const {
  if (auto j = backend_config(module_, loop)) {
    const nlohmann::json::json_pointer ptr("/known_trip_count/n");
    if (j->contains(ptr))
      if (auto n = number((*j)[ptr]))
        if (*n >= 0 && *n <= 1e12) return static_cast<std::int64_t>(*n);
  }
  const std::string* cond = loop.attribute("condition");
  const std::string* body_name = loop.attribute("body");
  if (!cond || !body_name) return std::nullopt;
  const Computation& c = module_.computation(cond->substr(cond->front() == '%' ? 1 : 0), loop.where);
  const Computation& body = module_.computation(body_name->substr(body_name->front() == '%' ? 1 : 0), loop.where);
  const Instruction& root = c.instructions[c.root];
  if (root.opcode != "compare" || root.operands.size() != 2) return std::nullopt;
  const std::string* dir = root.attribute("direction");
  if (!dir) return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    const std::optional<std::int64_t> n = integer_constant(c.find(root.operands[static_cast<std::size_t>(side)]));
    const std::optional<std::size_t> index = tuple_index(*c.find(root.operands[static_cast<std::size_t>(1 - side)]));
    if (!n || !index) continue;
    // The induction variable's start: its element of the loop's init tuple.
    std::int64_t start = 0;
    if (parent && !loop.operands.empty())
      if (const Instruction* init = parent->find(loop.operands[0]); init && init->opcode == "tuple")
        if (*index < init->operands.size()) start = integer_constant(parent->find(init->operands[*index])).value_or(0);
    // Its step: the body's root tuple sets it to add(variable, constant).
    std::int64_t step = 1;
    const Instruction& out = body.instructions[body.root];
    if (out.opcode == "tuple" && *index < out.operands.size())
      if (const Instruction* next = body.find(out.operands[*index]); next && next->opcode == "add")
        for (const std::string& o : next->operands)
          if (const auto k = integer_constant(body.find(o))) step = *k;
    if (step <= 0) return std::nullopt;
    // i < N (N > i): ceil((N - start) / step) trips; i <= N: one more when N - start is a multiple.
    const std::string d = *dir;
    const std::int64_t span = *n - start;
    if ((side == 1 && d == "LT") || (side == 0 && d == "GT")) return span <= 0 ? 0 : (span + step - 1) / step;
    if ((side == 1 && d == "LE") || (side == 0 && d == "GE")) return span < 0 ? 0 : span / step + 1;
    return std::nullopt;
  }
  return std::nullopt;
}

void CostModel::expand(const Computation& comp, std::vector<Step>& out, int depth) {
  if (depth > 64) fail(module_, comp.instructions.front(), "calls nest deeper than 64 (a recursive module?)");
  for (const Instruction& in : comp.instructions) {
    auto callee = [&](const char* key) -> const Computation& {
      const std::string* v = in.attribute(key);
      if (!v) fail(module_, in, in.opcode + " without " + key + "=");
      return module_.computation(v->substr(v->front() == '%' ? 1 : 0), in.where);
    };
    if (in.opcode == "while") {
      const Computation& body = callee("body");
      const auto trips = trip_count(in, &comp);
      if (!trips) note(in, "while: trip count unknown (no known_trip_count, no compare with a constant); one trip");
      for (std::int64_t t = 0; t < (trips ? *trips : 1); ++t) {
        expand(body, out, depth + 1);
        if (out.size() > kMaxSteps)
          fail(module_, in,
               "unrolled, the program passes " + std::to_string(kMaxSteps) + " instructions (trip count " +
                   std::to_string(trips ? *trips : 1) + ")");
      }
    } else if (in.opcode == "call") {
      expand(callee("to_apply"), out, depth + 1);
    } else if (in.opcode == "conditional") {
      // The costliest branch bounds the conditional.
      std::vector<std::string> branches;
      if (const std::string* b = in.attribute("branch_computations")) {
        std::string t = b->substr(1, b->size() - 2);
        std::size_t s = 0;
        for (std::size_t i = 0; i <= t.size(); ++i)
          if (i == t.size() || t[i] == ',') {
            std::string n = t.substr(s, i - s);
            n.erase(std::remove(n.begin(), n.end(), ' '), n.end());
            if (!n.empty() && n[0] == '%') n.erase(0, 1);
            if (!n.empty()) branches.push_back(n);
            s = i + 1;
          }
      }
      for (const char* key : {"true_computation", "false_computation"})
        if (const std::string* v = in.attribute(key)) branches.push_back(v->substr(v->front() == '%' ? 1 : 0));
      if (branches.empty()) fail(module_, in, "conditional without branches");
      std::vector<Step> best;
      double best_time = -1;
      for (const std::string& b : branches) {
        std::vector<Step> steps;
        expand(module_.computation(b, in.where), steps, depth + 1);
        double t = 0;
        for (const Step& s : steps) {
          const Cost c = cost(*s.computation, *s.instruction);
          t += c.flops + c.bytes() * 100;  // a rough order: bytes at 1/100 of FLOPs' rate
        }
        if (t > best_time) {
          best_time = t;
          best = std::move(steps);
        }
      }
      note(in, "conditional: costed as its costliest branch");
      out.insert(out.end(), best.begin(), best.end());
    } else if ((in.opcode == "async-start" && !collective_of(in)) || in.opcode == "call-start") {
      // The wrapped computation runs beside the schedule until its done, on
      // the start's async_execution_thread (else the computation's own).
      const Computation& wrapped = callee(in.opcode == "call-start" ? "to_apply" : "calls");
      const std::string thread = in.async_thread() != "main" ? in.async_thread() : wrapped.execution_thread;
      out.push_back(Step{&in, &comp, -1, thread});
      const long start = static_cast<long>(out.size() - 1);
      std::vector<Step> inner;
      expand(wrapped, inner, depth + 1);
      for (Step& s : inner)
        if (s.instruction->opcode != "parameter") {
          s.started_by = start;
          if (s.thread == "main") s.thread = thread;
          out.push_back(s);
        }
    } else {
      const bool async = ends_with(in.opcode, "-start") && in.async_thread() != "main";
      out.push_back(Step{&in, &comp, -1, async ? in.async_thread() : comp.execution_thread});
    }
  }
}

std::vector<CostModel::Step> CostModel::schedule(const Computation& comp) {
  std::vector<Step> out;
  expand(comp, out, 0);
  return out;
}

std::vector<std::string> CostModel::approximations() const {
  std::vector<std::string> out;
  for (const auto& [what, names] : notes_) out.push_back(what + " (" + std::to_string(names.size()) + " instructions)");
  return out;
}

}  // namespace hlo
