#include "workloads/scalesim.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <sstream>

#include "hw/mxu_timing.h"
#include "hw/systolic_array.h"
#include "runtime/run_budget.h"
#include "sim/error.h"
#include "sim/host.h"
#include "sim/input_file.h"
#include "sim/output.h"
#include "sim/units.h"

namespace workloads {

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  // A byte-order mark (spreadsheet exports) is not part of the first line.
  std::istringstream in(text.rfind("\xEF\xBB\xBF", 0) == 0 ? text.substr(3) : text);
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

std::string yaml_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

const sim::ParamTable<ScaleSimArchitecture>& architecture_params() {
  static const sim::ParamTable<ScaleSimArchitecture> t = [] {
    using A = ScaleSimArchitecture;
    sim::ParamTable<A> p("architecture_presets", "the systolic array and its three SRAM buffers");
    // tpusim's array model takes 2..256 rows and columns (hw/mxu_config.h).
    const sim::Range side = sim::between(2, 256);
    const sim::Range kb = sim::between(1, 1 << 30);
    p.integer<std::uint32_t>("ArrayHeight", &A::array_height, "PEs", std::nullopt, side,
                             "rows of the array (R): the contraction extent of a weight-stationary fold")
        .integer<std::uint32_t>("ArrayWidth", &A::array_width, "PEs", std::nullopt, side,
                                "columns of the array (C): output columns of a fold")
        .integer<std::uint64_t>("IfmapSramSzkB", &A::ifmap_kb, "kB", std::nullopt, kb,
                                "input feature map SRAM (1-byte words, as SCALE-Sim's word size)")
        .integer<std::uint64_t>("FilterSramSzkB", &A::filter_kb, "kB", std::nullopt, kb,
                                "filter (weight) SRAM (os and is re-read filters that do not fit; ws reads each once)")
        .integer<std::uint64_t>("OfmapSramSzkB", &A::ofmap_kb, "kB", std::nullopt, kb, "output feature map SRAM")
        .integer<std::uint64_t>("IfmapOffset", &A::ifmap_offset, "", 0, sim::at_least(0),
                                "base address of the IFMAP in SCALE-Sim's traces")
        .informational("addresses in SCALE-Sim's trace files, which tpusim does not write")
        .integer<std::uint64_t>("FilterOffset", &A::filter_offset, "", 10000000, sim::at_least(0),
                                "base address of the filters in SCALE-Sim's traces")
        .informational("addresses in SCALE-Sim's trace files, which tpusim does not write")
        .integer<std::uint64_t>("OfmapOffset", &A::ofmap_offset, "", 20000000, sim::at_least(0),
                                "base address of the OFMAP in SCALE-Sim's traces")
        .informational("addresses in SCALE-Sim's trace files, which tpusim does not write")
        .enumeration("Dataflow", &A::dataflow, hw::mxu_dataflow_names(), std::nullopt,
                     "what stays in the array (mxu.dataflow of a chip file): ws weights, os outputs, is inputs")
        .custom("Bandwidth", {"comma-separated integers", "words/cycle", "(needed in USER mode)", "each at least 1"},
                "DRAM interface bandwidth of each operand buffer, read in USER mode (SCALE-Sim uses the first value)",
                [](const sim::YamlNode& n, A& a) {
                  a.bandwidth.clear();
                  std::stringstream s(n.as_string());
                  std::string item;
                  while (std::getline(s, item, ',')) {
                    item = trim(item);
                    if (item.empty() || item.size() > 12 || item.find_first_not_of("0123456789") != std::string::npos ||
                        std::stoull(item) == 0)
                      n.fail("expected comma-separated positive integers (words per cycle), got " +
                             sim::quote_short(n.as_string()));
                    a.bandwidth.push_back(std::stoull(item));
                  }
                  if (a.bandwidth.empty()) n.fail("expected comma-separated positive integers (words per cycle)");
                })
        .integer<std::uint32_t>("MemoryBanks", &A::memory_banks, "banks", 1, sim::between(1, 1024),
                                "SRAM banks (written by later SCALE-Sim versions' examples)")
        .informational("accepted for compatibility; v2 and tpusim model one bank");
    return p;
  }();
  return t;
}

using GeneralSection = ScaleSimConfig::General;
using RunPresets = ScaleSimConfig::RunPresets;
using NetworkPresets = ScaleSimConfig::NetworkPresets;

const sim::ParamTable<GeneralSection>& general_params() {
  static const sim::ParamTable<GeneralSection> t = [] {
    sim::ParamTable<GeneralSection> p("general", "the run");
    p.custom(
         "run_name", {"string", "", "(required)", "letters, digits, '.', '_', '-'; at most 100"},
         "names the run and its default output folder (runs/RUN_NAME)",
         [](const sim::YamlNode& n, GeneralSection& g) {
           g.run_name = n.as_string();
           if (g.run_name.empty() || g.run_name.size() > 100 || g.run_name == "." || g.run_name == ".." ||
               g.run_name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
                   std::string::npos)
             n.fail("a run name is 1 to 100 letters, digits, '.', '_' or '-' (it names a folder), got " +
                    sim::quote_short(g.run_name));
         },
         true)
        .informational("names the run and its folder");
    return p;
  }();
  return t;
}

const sim::ParamTable<RunPresets>& run_presets_params() {
  static const sim::ParamTable<RunPresets> t = [] {
    sim::ParamTable<RunPresets> p("run_presets", "how DRAM bandwidth is treated");
    p.choice("InterfaceBandwidth", &RunPresets::interface_bandwidth, {"CALC", "USER"}, std::nullopt,
             "CALC: stall-free, bandwidth as needed; USER: Bandwidth words per cycle per operand, stalls modelled");
    return p;
  }();
  return t;
}

const sim::ParamTable<NetworkPresets>& network_presets_params() {
  static const sim::ParamTable<NetworkPresets> t = [] {
    sim::ParamTable<NetworkPresets> p("network_presets", "the topology file (written by SCALE-Sim's config writer)");
    p.text("TopologyCsvLoc", &NetworkPresets::topology_csv, "", "a topology path; the command line's is used")
        .informational("the topology named on the command line is the one run");
    return p;
  }();
  return t;
}

// Where an INI line's key and value start, and where the YAML made from it
// puts them: messages from the YAML are moved back to the INI's columns.
struct LineColumns {
  int key = 1, value = 1, yaml_value = 0;
};

// The declared spelling of a key, matched case-insensitively (configparser
// lower-cases keys), or the key as written when no declared key matches.
std::string canonical_key(const nlohmann::json& section_table, const std::string& key) {
  for (const auto& p : section_table["params"])
    if (lower(p["name"].get<std::string>()) == lower(key)) return p["name"];
  return key;
}

const nlohmann::json* section_table(const nlohmann::json& tables, const std::string& name) {
  for (const auto& p : tables["params"])
    if (p["name"] == name) return &p;
  return nullptr;
}

}  // namespace

const sim::ParamTable<ScaleSimConfig>& scalesim_config_params() {
  static const sim::ParamTable<ScaleSimConfig> t = [] {
    sim::ParamTable<ScaleSimConfig> p("scalesim",
                                      "a SCALE-Sim v2 config file (.cfg, INI sections), as `tpusim scalesim` reads it");
    p.group("general", &ScaleSimConfig::general, general_params())
        .group("architecture_presets", &ScaleSimConfig::arch, architecture_params())
        .group("run_presets", &ScaleSimConfig::run, run_presets_params())
        .group("network_presets", &ScaleSimConfig::network, network_presets_params())
        .then([](const sim::YamlNode& root, ScaleSimConfig& c) {
          const sim::YamlNode arch = root["architecture_presets"];
          try {
            hw::validate(scalesim_mxu(c));
          } catch (const sim::ConfigError& e) {
            arch["Dataflow"].fail(e.detail());
          }
          if (c.run.interface_bandwidth == "USER" && c.arch.bandwidth.empty())
            arch["Bandwidth"].fail("InterfaceBandwidth: USER needs Bandwidth (words per cycle)");
        });
    return p;
  }();
  return t;
}

ScaleSimConfig parse_scalesim_config(const std::string& text, const std::string& origin) {
  sim::check_utf8(text, origin);
  const nlohmann::json tables = scalesim_config_params().describe();
  const std::vector<std::string> lines = split_lines(text);
  std::ostringstream yaml;
  std::map<int, LineColumns> columns;
  std::map<std::string, int> sections_seen;
  std::map<std::string, int> keys_seen;  // "section\nkey" (lower-cased key)
  std::string section;
  const nlohmann::json* table = nullptr;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const int line = int(i) + 1;
    const std::string& raw = lines[i];
    const std::string t = trim(raw);
    auto fail = [&](int column, const std::string& what) {
      throw sim::ConfigError({origin, line, column}, section, what);
    };
    if (t.empty() || t[0] == '#' || t[0] == ';') {
      yaml << "\n";
      continue;
    }
    if (raw[0] == ' ' || raw[0] == '\t')
      fail(1, "an indented line continues the previous value in configparser; multi-line values are not supported");
    if (t[0] == '[') {
      if (t.back() != ']') fail(1, "a section header is [name]");
      section = t.substr(1, t.size() - 2);
      if (sections_seen.count(section))
        fail(1,
             "section [" + section + "] appears twice (first on line " + std::to_string(sections_seen[section]) + ")");
      sections_seen[section] = line;
      table = section_table(tables, section);
      yaml << yaml_quote(section) << ":\n";
      columns[line] = {1, 1, 0};
      continue;
    }
    const std::size_t sep = raw.find_first_of("=:");
    if (sep == std::string::npos) fail(1, "expected KEY = VALUE or KEY : VALUE");
    const std::string key = trim(raw.substr(0, sep));
    if (key.empty()) fail(1, "a key is missing before '" + std::string(1, raw[sep]) + "'");
    if (section.empty()) fail(1, "key '" + key + "' comes before any [section]");
    const std::string value = trim(raw.substr(sep + 1));
    const std::string name = table ? canonical_key(*table, key) : key;
    const std::string seen = section + "\n" + lower(key);
    if (keys_seen.count(seen))
      throw sim::ConfigError(
          {origin, line, 1}, section + "." + name,
          "the key appears twice in [" + section + "] (first on line " + std::to_string(keys_seen[seen]) + ")");
    keys_seen[seen] = line;
    const std::size_t value_at = raw.find_first_not_of(" \t", sep + 1);
    const std::string prefix = "  " + yaml_quote(name) + ": ";
    yaml << prefix << yaml_quote(value) << "\n";
    columns[line] = {1, value_at == std::string::npos ? int(sep) + 2 : int(value_at) + 1, int(prefix.size()) + 1};
  }
  // A missing section, said as such (the YAML would say "mapping").
  for (const auto& p : tables["params"]) {
    const std::string name = p["name"];
    if (sections_seen.count(name)) continue;
    bool required = false;
    for (const auto& k : p["params"]) required = required || k["default"] == "(required)";
    if (required)
      throw sim::ConfigError({origin, 1, 1}, name,
                             "missing section [" + name +
                                 "] (SCALE-Sim v2 needs [general], [architecture_presets] "
                                 "and [run_presets])");
  }
  const sim::YamlNode root = sim::YamlNode::load_string(yaml.str(), origin);
  ScaleSimConfig config;
  try {
    scalesim_config_params().load(root, config);
  } catch (const sim::ConfigError& e) {
    sim::SourceLocation where = e.where();
    if (where.file == origin) {
      const auto it = columns.find(where.line);
      if (it == columns.end())
        where.column = 1;
      else
        where.column = where.column == it->second.yaml_value ? it->second.value : it->second.key;
      // A key the file lacks: at its section's header line.
      const std::size_t dot = e.key_path().find('.');
      if (dot != std::string::npos) {
        const std::string sec = e.key_path().substr(0, dot);
        const std::string key = lower(e.key_path().substr(dot + 1));
        if (sections_seen.count(sec) && !keys_seen.count(sec + "\n" + key)) where = {origin, sections_seen[sec], 1};
      }
    }
    throw e.at(where, e.key_path());
  }
  return config;
}

ScaleSimConfig load_scalesim_config(const std::string& path) {
  return parse_scalesim_config(sim::read_config_text(path), path);
}

namespace {

// A field of a CSV row and the 1-based column where its text starts.
struct Field {
  std::string text;
  int column = 1;
};

std::vector<Field> split_row(const std::string& line) {
  std::vector<Field> fields;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    const std::string piece = line.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::size_t lead = piece.find_first_not_of(" \t");
    fields.push_back({trim(piece), int(start + (lead == std::string::npos ? 0 : lead)) + 1});
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  // SCALE-Sim ends every row with a comma and drops the empty last field.
  if (fields.size() > 1 && fields.back().text.empty()) fields.pop_back();
  return fields;
}

const std::vector<std::string>& gemm_columns() {
  static const std::vector<std::string> c = {"Layer", "M", "N", "K"};
  return c;
}
const std::vector<std::string>& conv_columns(std::size_t count) {
  static const std::vector<std::string> one = {"Layer name",   "IFMAP Height", "IFMAP Width", "Filter Height",
                                               "Filter Width", "Channels",     "Num Filter",  "Strides"};
  static const std::vector<std::string> two = {"Layer name",    "IFMAP Height",  "IFMAP Width",
                                               "Filter Height", "Filter Width",  "Channels",
                                               "Num Filter",    "Stride Height", "Stride Width"};
  return count == 8 ? one : two;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// Every size of a layer is at most 2^24 (SCALE-Sim's own runs hold whole
// operand matrices in memory; tpusim's closed form needs products to fit).
constexpr std::uint64_t kMaxSize = 1ull << 24;

// Layers a topology may run, depthwise rows expanded: SCALE-Sim's shipped
// networks have tens to hundreds (MobileNet's depthwise rows a few thousand
// channels in all); a 14 MB file of 4096-channel DP rows expanded to 10^9
// layers and 4.8 GB before anything ran.
constexpr std::uint64_t kMaxLayers = 1ull << 16;

std::string too_many_layers(std::uint64_t adding) {
  return "this row adds " + std::to_string(adding) + " layer" + (adding == 1 ? "" : "s") + " past the " +
         std::to_string(kMaxLayers) + " a topology may run (a depthwise DP row runs one layer per channel)";
}

}  // namespace

ScaleSimTopology parse_scalesim_topology(const std::string& text, const std::string& origin) {
  sim::check_utf8(text, origin);
  const std::vector<std::string> lines = split_lines(text);
  if (lines.empty() || trim(lines[0]).empty())
    throw sim::ConfigError({origin, 1, 1}, "",
                           "expected a header row: Layer, M, N, K (GEMM) or Layer name, IFMAP Height, IFMAP Width, "
                           "Filter Height, Filter Width, Channels, Num Filter, Strides (convolution)");
  ScaleSimTopology topo;
  const std::size_t header = split_row(lines[0]).size();
  if (header == 4) {
    topo.gemm = true;
  } else if (header != 8 && header != 9) {
    throw sim::ConfigError({origin, 1, 1}, "",
                           "a header of " + std::to_string(header) +
                               " columns; expected 4 (Layer, M, N, K: GEMM) or 8 or 9 (Layer name, IFMAP Height, "
                               "IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides or Stride "
                               "Height, Stride Width: convolution)");
  }
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const int line = int(i) + 1;
    if (trim(lines[i]).empty()) continue;
    const std::vector<Field> f = split_row(lines[i]);
    const std::string name = f[0].text;
    const std::string label = name.empty() ? "line " + std::to_string(line) : name;
    const bool count_ok = topo.gemm ? f.size() == 4 : (f.size() == 8 || f.size() == 9);
    if (!count_ok) {
      const std::vector<std::string>& cols = topo.gemm ? gemm_columns() : conv_columns(9);
      const int column = f.size() > cols.size() ? f[cols.size()].column : int(lines[i].size()) + 1;
      throw sim::ConfigError({origin, line, column}, label,
                             std::to_string(f.size()) + " columns; a " + (topo.gemm ? "GEMM" : "convolution") +
                                 " row has " + (topo.gemm ? "4: " + join(gemm_columns()) : "8 or 9: " + join(cols)));
    }
    const std::vector<std::string>& cols = topo.gemm ? gemm_columns() : conv_columns(f.size());
    std::vector<std::uint64_t> v(f.size(), 0);
    for (std::size_t c = 1; c < f.size(); ++c) {
      const Field& x = f[c];
      const sim::SourceLocation at{origin, line, x.column};
      if (x.text.empty() || x.text.size() > 12 || x.text.find_first_not_of("0123456789") != std::string::npos)
        throw sim::ConfigError(at, label + "." + cols[c],
                               "expected a positive integer, got " + sim::quote_short(x.text));
      v[c] = std::stoull(x.text);
      if (v[c] == 0 || v[c] > kMaxSize)
        throw sim::ConfigError(at, label + "." + cols[c],
                               "expected an integer between 1 and " + std::to_string(kMaxSize) + ", got " + x.text);
    }
    models::ConvLayer l;
    if (topo.gemm) {
      l = models::gemm_as_conv(name, v[1], v[2], v[3]);
    } else {
      l.name = name;
      l.ifmap_h = v[1];
      l.ifmap_w = v[2];
      l.filter_h = v[3];
      l.filter_w = v[4];
      l.channels = v[5];
      l.filters = v[6];
      l.stride_h = v[7];
      l.stride_w = f.size() == 9 ? v[8] : v[7];
      if (l.filter_h > l.ifmap_h)
        throw sim::ConfigError({origin, line, f[3].column}, label + "." + cols[3],
                               "Filter Height " + f[3].text + " is larger than IFMAP Height " + f[1].text);
      if (l.filter_w > l.ifmap_w)
        throw sim::ConfigError({origin, line, f[4].column}, label + "." + cols[4],
                               "Filter Width " + f[4].text + " is larger than IFMAP Width " + f[2].text);
    }
    const models::GemmShape g = models::im2col(l);
    if (double(g.m) * double(g.k) * double(g.n) > 1e18)
      throw sim::ConfigError({origin, line, 1}, label,
                             "the layer's GEMM (" + std::to_string(g.m) + " x " + std::to_string(g.k) + " x " +
                                 std::to_string(g.n) + ") is over 1e18 multiply-accumulates");
    if (double(l.ifmap_h) * double(l.ifmap_w) * double(l.channels) * double(g.n) > 1e18)
      throw sim::ConfigError({origin, line, 1}, label,
                             "the layer's input (" + std::to_string(l.ifmap_h) + " x " + std::to_string(l.ifmap_w) +
                                 " x " + std::to_string(l.channels) + ") times its " + std::to_string(g.n) +
                                 " filters is over 1e18 words");
    // SCALE-Sim's depthwise convention: a name containing "DP" runs as one
    // single-channel layer per channel.
    if (!topo.gemm && name.find("DP") != std::string::npos) {
      const std::uint64_t channels = l.channels;
      if (channels > 4096)
        throw sim::ConfigError({origin, line, f[5].column}, label + ".Channels",
                               "a depthwise (DP) layer runs as one layer per channel; at most 4096 channels");
      l.channels = 1;
      if (topo.layers.size() + channels > kMaxLayers)
        throw sim::ConfigError({origin, line, f[5].column}, label + ".Channels", too_many_layers(channels));
      for (std::uint64_t ch = 0; ch < channels; ++ch) {
        models::ConvLayer one = l;
        one.name = name + "Channel_" + std::to_string(ch);
        topo.layers.push_back({one, line});
      }
    } else {
      if (topo.layers.size() + 1 > kMaxLayers) throw sim::ConfigError({origin, line, 1}, label, too_many_layers(1));
      topo.layers.push_back({l, line});
    }
  }
  if (topo.layers.empty())
    throw sim::ConfigError({origin, int(lines.size()), 1}, "", "no layers: the topology has a header row only");
  return topo;
}

ScaleSimTopology load_scalesim_topology(const std::string& path) {
  return parse_scalesim_topology(sim::read_config_text(path), path);
}

hw::MxuConfig scalesim_mxu(const ScaleSimConfig& config) {
  hw::MxuConfig m;
  m.rows = config.arch.array_height;
  m.cols = config.arch.array_width;
  m.schedule = hw::MxuSchedule::fold_serial;
  m.dataflow = config.arch.dataflow;
  return m;
}

namespace {

// One layer's GEMM on the array, and the three SRAMs in words.
struct LayerOnArray {
  const models::ConvLayer& layer;
  std::uint64_t m, k, n;
  std::uint64_t input_words;  // the layer's input before im2col, H W C (M K for a GEMM)
  std::uint64_t R, C;
  std::uint64_t ifmap_sram, filter_sram, ofmap_sram;
};

// SCALE-Sim's fold counts for one dataflow (its systolic_compute_<df>), and
// tpusim's DRAM capacity model (docs/scalesim.md#traffic). SCALE-Sim's loop
// is column folds outer, row folds inner, in every dataflow; T is the extent
// a fold streams through the array.
struct FoldCounts {
  std::uint64_t row_folds, col_folds;
  std::uint64_t used_pes;  // used PEs summed over the folds
  std::uint64_t temporal;  // T
  std::uint64_t window;    // cycles of SCALE-Sim's fold window (its compute utilisation's denominator)
  std::uint64_t sram_ifmap, sram_filter, sram_ofmap;
  std::uint64_t dram_ifmap, dram_filter, dram_ofmap;
};

// The folds of an operand of rows x cols laid on the array, T streamed.
FoldCounts laid_out(const LayerOnArray& a, std::uint64_t rows, std::uint64_t cols, std::uint64_t T,
                    std::uint64_t window) {
  FoldCounts f{};
  f.row_folds = sim::ceil_div(rows, a.R);
  f.col_folds = sim::ceil_div(cols, a.C);
  f.used_pes = rows * cols;
  f.temporal = T;
  f.window = window;
  return f;
}

// DRAM words of an operand of `words`: once if its reused part fits its
// SRAM, else `times` times.
std::uint64_t once_if(bool fits, std::uint64_t words, std::uint64_t times) { return fits ? words : words * times; }

// ws: K on the rows, N on the columns, the weights stay; T = M.
FoldCounts ws_counts(const LayerOnArray& a) {
  FoldCounts f = laid_out(a, a.k, a.n, a.m, 2 * a.R + 2 * a.C + a.m - 3);
  // Each fold streams all M rows of its K-slice, loads its weights once and
  // writes M rows of its columns.
  f.sram_ifmap = a.m * a.k * f.col_folds;
  f.sram_filter = a.k * a.n;
  f.sram_ofmap = a.m * a.n * f.row_folds;
  // DRAM: the input once if it fits, else once per column fold; every
  // weight once; outputs once if a column fold's partial sums (M x C) fit,
  // else once per row fold.
  f.dram_ifmap = once_if(a.input_words <= a.ifmap_sram, a.input_words, f.col_folds);
  f.dram_filter = a.k * a.n;
  f.dram_ofmap = once_if(a.m * std::min(a.n, a.C) <= a.ofmap_sram, a.m * a.n, f.row_folds);
  return f;
}

// os: M on the rows, N on the columns, the outputs stay; T = K.
FoldCounts os_counts(const LayerOnArray& a) {
  FoldCounts f = laid_out(a, a.m, a.n, a.k, a.R + a.C + a.k - 2);
  // Each fold streams all K columns of its rows of the input and of its
  // columns of the filters, and writes its outputs once; SCALE-Sim's count
  // of OFMAP writes adds the padded tile's R + C once per fold.
  f.sram_ifmap = a.m * a.k * f.col_folds;
  f.sram_filter = a.k * a.n * f.row_folds;
  f.sram_ofmap = a.m * a.n + f.row_folds * f.col_folds * (a.R + a.C);
  // DRAM: the input once if it fits, else once per column fold; a column
  // fold's filters (K x C) once if they fit, else once per row fold; every
  // output once (it leaves the array finished).
  f.dram_ifmap = once_if(a.input_words <= a.ifmap_sram, a.input_words, f.col_folds);
  f.dram_filter = once_if(a.k * std::min(a.n, a.C) <= a.filter_sram, a.k * a.n, f.row_folds);
  f.dram_ofmap = a.m * a.n;
  return f;
}

// is: K on the rows, M on the columns, the inputs stay; T = N.
FoldCounts is_counts(const LayerOnArray& a) {
  FoldCounts f = laid_out(a, a.k, a.m, a.n, 2 * a.R + 2 * a.C + a.n - 3);
  // Each fold holds its tile of the im2col input, streams its K-slice of all
  // N filters and writes N partial sums of its outputs.
  f.sram_ifmap = a.m * a.k;
  f.sram_filter = a.k * a.n * f.col_folds;
  f.sram_ofmap = a.m * a.n * f.row_folds;
  // DRAM: a column fold's C output pixels (row-major) read a band of the
  // input, whole input rows under at most ceil((C - 1) / Wo) + 1 output
  // rows; neighbouring bands overlap. The input once if a band fits (the
  // overlap stays), else each fold fetches its own tile (the im2col operand,
  // M K). The filters once if they all fit, else once per column fold;
  // outputs once if a column fold's partial sums (C x N) fit, else once per
  // row fold.
  const models::ConvLayer& l = a.layer;
  const std::uint64_t out_rows = std::min(l.ofmap_h(), sim::ceil_div(std::min(a.C, a.m) - 1, l.ofmap_w()) + 1);
  const std::uint64_t band = std::min(l.ifmap_h, (out_rows - 1) * l.stride_h + l.filter_h) * l.ifmap_w * l.channels;
  f.dram_ifmap = band <= a.ifmap_sram ? a.input_words : a.m * a.k;
  f.dram_filter = once_if(a.k * a.n <= a.filter_sram, a.k * a.n, f.col_folds);
  f.dram_ofmap = once_if(std::min(a.m, a.C) * a.n <= a.ofmap_sram, a.m * a.n, f.row_folds);
  return f;
}

using FoldCountsFn = FoldCounts (*)(const LayerOnArray&);

FoldCountsFn fold_counts(hw::MxuDataflow dataflow) {
  switch (dataflow) {
    case hw::MxuDataflow::ws: return ws_counts;
    case hw::MxuDataflow::os: return os_counts;
    case hw::MxuDataflow::is: return is_counts;
  }
  return ws_counts;
}

}  // namespace

std::vector<ScaleSimLayerRecord> run_scalesim(const ScaleSimConfig& config, const ScaleSimTopology& topology,
                                              hw::Fidelity fidelity) {
  const hw::MxuConfig mxu = scalesim_mxu(config);
  const std::uint64_t R = mxu.rows, C = mxu.cols;
  if (fidelity == hw::Fidelity::pe) {
    const runtime::Limits limits;
    double pe_cycles = 0, operands = 0;
    for (const auto& row : topology.layers) {
      const models::GemmShape g = models::im2col(row.layer);
      pe_cycles += runtime::pe_cycles(mxu, {g.m, g.k, g.n});
      operands = std::max(operands, runtime::pe_operand_bytes({g.m, g.k, g.n}));
    }
    runtime::MemoryEstimate memory;
    memory.add("the largest layer's operands (zeros) and outputs", operands);
    runtime::check_memory(limits, memory, "tpusim scalesim --fidelity pe");
    runtime::check_pe_cycles(limits, pe_cycles, "tpusim scalesim --fidelity pe");
  }
  std::vector<ScaleSimLayerRecord> out;
  hw::SystolicArray array;
  for (const auto& row : topology.layers) {
    const models::ConvLayer& l = row.layer;
    const models::GemmShape g = models::im2col(l);
    const hw::MxuShape shape{g.m, g.k, g.n};
    ScaleSimLayerRecord r;
    r.name = l.name;
    r.m = g.m;
    r.k = g.k;
    r.n = g.n;
    r.macs = g.macs();
    if (fidelity == hw::Fidelity::pe) {
      // Cycles only: the operands are zeros (the PE engine's count does not
      // depend on the values).
      const std::vector<hw::bf16> zeros(std::max(g.m * g.k, g.k * g.n));
      r.cycles = array.run(mxu, shape, zeros.data(), zeros.data()).cycles;
    } else {
      r.cycles = hw::mxu_tile_cycles(mxu, shape);
    }
    const FoldCounts counts = fold_counts(config.arch.dataflow)(
        {l, g.m, g.k, g.n, l.ifmap_h * l.ifmap_w * l.channels, R, C, config.arch.ifmap_kb * 1024,
         config.arch.filter_kb * 1024, config.arch.ofmap_kb * 1024});
    r.row_folds = counts.row_folds;
    r.col_folds = counts.col_folds;
    r.sram_ifmap_reads = counts.sram_ifmap;
    r.sram_filter_reads = counts.sram_filter;
    r.sram_ofmap_writes = counts.sram_ofmap;
    r.dram_ifmap_reads = counts.dram_ifmap;
    r.dram_filter_reads = counts.dram_filter;
    r.dram_ofmap_writes = counts.dram_ofmap;
    if (config.run.interface_bandwidth == "USER") {
      // Each operand's buffer fills at Bandwidth words per cycle; the layer
      // takes at least as long as its busiest DRAM stream.
      const std::uint64_t bw = config.arch.bandwidth.front();
      const std::uint64_t words = std::max({r.dram_ifmap_reads, r.dram_filter_reads, r.dram_ofmap_writes});
      const std::uint64_t dram_cycles = (words + bw - 1) / bw;
      r.stall_cycles = dram_cycles > r.cycles ? dram_cycles - r.cycles : 0;
    }
    r.scalesim_cycles = r.cycles - 1 + r.stall_cycles;
    // SCALE-Sim's averages over folds: a fold's mapping efficiency is its
    // used PEs over R C, its compute utilisation used PEs x T over R C
    // times its window (equal for every fold of a layer).
    r.overall_util_pct = 100.0 * double(r.macs) / (double(r.scalesim_cycles) * double(R) * double(C));
    const double folds = double(r.row_folds) * double(r.col_folds);
    r.mapping_efficiency_pct = 100.0 * double(counts.used_pes) / (folds * double(R) * double(C));
    r.compute_util_pct = r.mapping_efficiency_pct * double(counts.temporal) / double(counts.window);
    out.push_back(r);
  }
  return out;
}

namespace {

std::string csv_number(double v) { return sim::fixed(v, 4); }

// A layer's SRAM and DRAM word counts in the column order of SCALE-Sim's
// bandwidth and access reports.
std::array<std::uint64_t, 6> access_words(const ScaleSimLayerRecord& l) {
  return {l.sram_ifmap_reads, l.sram_filter_reads, l.sram_ofmap_writes,
          l.dram_ifmap_reads, l.dram_filter_reads, l.dram_ofmap_writes};
}

}  // namespace

void add_scalesim_energy(std::vector<ScaleSimLayerRecord>& layers, const hw::EnergyParams& energy) {
  for (auto& l : layers) {
    const std::array<std::uint64_t, 6> w = access_words(l);
    l.energy_j = energy.total_j(double(l.macs), double(w[0] + w[1] + w[2]), double(w[3] + w[4] + w[5]));
  }
}

Report scalesim_report(const ScaleSimConfig& config, const ScaleSimTopology& topology,
                       const std::vector<ScaleSimLayerRecord>& layers, const std::string& config_path,
                       const std::string& topology_path, hw::Fidelity fidelity, double wall_s) {
  Report rep;
  rep.name = config.general.run_name;
  rep.config_path = config_path;
  rep.inputs = {config_path, topology_path};
  rep.workload = "scalesim";
  rep.chip = "scalesim " + std::to_string(config.arch.array_height) + "x" + std::to_string(config.arch.array_width);
  rep.topology = "none";
  rep.shape = {1};
  rep.wraparound = {false};
  double cycles = 0, macs = 0;
  for (const auto& l : layers) {
    cycles += double(l.cycles);
    macs += double(l.macs);
  }
  Result& res = rep.result;
  res.cycles = cycles;
  res.flops = 2 * macs;
  res.mxu_utilization = cycles > 0 ? macs / (double(config.arch.array_height) * config.arch.array_width * cycles) : 0;
  ScaleSimSection s;
  s.run_name = config.general.run_name;
  s.dataflow = hw::to_string(config.arch.dataflow);
  s.interface_bandwidth = config.run.interface_bandwidth;
  s.topology_format = topology.gemm ? "gemm" : "conv";
  s.array_height = config.arch.array_height;
  s.array_width = config.arch.array_width;
  s.ifmap_sram_kb = config.arch.ifmap_kb;
  s.filter_sram_kb = config.arch.filter_kb;
  s.ofmap_sram_kb = config.arch.ofmap_kb;
  if (config.run.interface_bandwidth == "USER") s.bandwidth_words_per_cycle = config.arch.bandwidth.front();
  s.layers = layers;
  res.scalesim = s;
  Simulator sim;
  sim.fidelity = hw::to_string(fidelity);
  sim.wall_time_s = wall_s;
  sim.peak_rss_bytes = sim::peak_rss_bytes();
  rep.simulator = sim;
  return rep;
}

std::string scalesim_compute_report(const std::vector<ScaleSimLayerRecord>& layers) {
  std::string s = "LayerID, Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %, Compute Util %,\n";
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const auto& l = layers[i];
    s += std::to_string(i) + ", " + std::to_string(l.scalesim_cycles) + ", " + std::to_string(l.stall_cycles) + ", " +
         csv_number(l.overall_util_pct) + ", " + csv_number(l.mapping_efficiency_pct) + ", " +
         csv_number(l.compute_util_pct) + ",\n";
  }
  return s;
}

std::string scalesim_bandwidth_report(const std::vector<ScaleSimLayerRecord>& layers) {
  std::string s =
      "LayerID, Avg IFMAP SRAM BW, Avg FILTER SRAM BW, Avg OFMAP SRAM BW, Avg IFMAP DRAM BW, Avg FILTER DRAM BW, "
      "Avg OFMAP DRAM BW,\n";
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const auto& l = layers[i];
    const double c = double(l.scalesim_cycles);
    s += std::to_string(i);
    for (std::uint64_t words : access_words(l)) s += ", " + csv_number(double(words) / c);
    s += ",\n";
  }
  return s;
}

std::string scalesim_access_report(const std::vector<ScaleSimLayerRecord>& layers) {
  std::string s =
      "LayerID, SRAM IFMAP Reads, SRAM Filter Reads, SRAM OFMAP Writes, DRAM IFMAP Reads, DRAM Filter Reads, "
      "DRAM OFMAP Writes,\n";
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const auto& l = layers[i];
    s += std::to_string(i);
    for (std::uint64_t words : access_words(l)) s += ", " + std::to_string(words);
    s += ",\n";
  }
  return s;
}

}  // namespace workloads
