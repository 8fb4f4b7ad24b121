#include "sim/yaml_node.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string_view>

#include "sim/input_file.h"

namespace sim {

namespace {

std::string join_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

// Edits (insert, delete, substitute, or swap two neighbours: "tlie" is one
// edit from "tile") that turn a into b: the optimal string alignment distance.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

// What yaml-cpp accepts but a config must not: a key given twice (yaml-cpp
// keeps one and drops the other without a word), an alias inside the node
// it names (a cycle, which would recurse forever), aliases that expand a
// small file into millions of values ("billion laughs"), and tags (`!!str`,
// `!include`), which yaml-cpp keeps but nothing here acts on. One walk,
// each node once (an alias is the node it names, so it shares its mark).
class DocumentCheck {
 public:
  static constexpr double kMaxValues = 1e6;
  explicit DocumentCheck(std::string origin) : origin_(std::move(origin)) {}

  double walk(const YAML::Node& n, const std::string& path) {
    if (!n.IsDefined()) return 1;
    check_tag(n, path);
    if (n.IsNull() || n.IsScalar()) return 1;
    const YAML::Mark m = n.Mark();
    const bool marked = !m.is_null();
    if (marked) {
      if (on_path_.count(m.pos)) fail(m, path, "an alias refers to a node that contains it");
      auto it = expanded_.find(m.pos);
      if (it != expanded_.end()) return it->second;
      on_path_.insert(m.pos);
    }
    double total = 1;
    if (n.IsSequence()) {
      std::size_t i = 0;
      for (const auto& item : n) total += walk(item, path + "[" + std::to_string(i++) + "]");
    } else if (n.IsMap()) {
      std::map<std::string, YAML::Mark> keys;
      for (const auto& kv : n) {
        total += 1;
        std::string child = path;
        check_tag(kv.first, path);
        if (kv.first.IsScalar()) {
          const std::string& key = kv.first.Scalar();
          child = join_path(path, key);
          auto [first, fresh] = keys.emplace(key, kv.first.Mark());
          if (!fresh)
            fail(kv.first.Mark(), child,
                 "duplicate key '" + key + "' (first given at line " + std::to_string(first->second.line + 1) +
                     "); YAML would keep only one of them");
        }
        total += walk(kv.second, child);
      }
    }
    if (marked) {
      on_path_.erase(m.pos);
      expanded_[m.pos] = total;
    }
    if (total > kMaxValues) fail(m, path, "aliases expand this document to more than 1000000 values");
    return total;
  }

 private:
  // yaml-cpp gives an untagged node "?" (plain) or "!" (quoted) or nothing.
  void check_tag(const YAML::Node& n, const std::string& path) const {
    const std::string& tag = n.Tag();
    if (tag.empty() || tag == "?" || tag == "!") return;
    fail(n.Mark(), path, "YAML tags are not supported (this node is tagged '" + tag + "'); remove the tag");
  }
  [[noreturn]] void fail(const YAML::Mark& m, const std::string& path, const std::string& what) const {
    SourceLocation loc{origin_, m.is_null() ? 1 : m.line + 1, m.is_null() ? 1 : m.column + 1};
    throw ConfigError(loc, path, what);
  }
  std::string origin_;
  std::set<int> on_path_;
  std::map<int, double> expanded_;
};

// yaml-cpp reads the first document and ignores the rest: content after a
// document end (`...`), or a document start (`---`) after content, is a
// second document.
void check_single_document(const std::string& text, const std::string& origin) {
  bool content = false, ended = false;
  int line = 1;
  for (std::size_t at = 0; at < text.size(); ++line) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    const std::string_view l(text.data() + at, end - at);
    at = end + 1;
    const std::string_view mark = l.substr(0, 3);
    const bool marker =
        (mark == "---" || mark == "...") && (l.size() == 3 || l[3] == ' ' || l[3] == '\t' || l[3] == '\r');
    const std::size_t first = l.find_first_not_of(" \t\r");
    const bool blank = first == std::string_view::npos || l[first] == '#';
    if ((marker && mark == "---" && content) || (!marker && !blank && ended))
      throw ConfigError(SourceLocation{origin, line, 1}, "", "a second YAML document: a file holds one document");
    if (marker && mark == "...") ended = content;
    if (!marker && !blank) content = true;
  }
}

YamlNode parse(const std::string& text, const std::string& origin) {
  try {
    YAML::Node doc = YAML::Load(text);  // the first document (YAML::LoadAll can loop on broken input)
    check_single_document(text, origin);
    DocumentCheck(origin).walk(doc, "");
    return YamlNode(doc, origin, "");
  } catch (const YAML::Exception& e) {
    SourceLocation loc{origin, e.mark.is_null() ? 0 : e.mark.line + 1, e.mark.is_null() ? 0 : e.mark.column + 1};
    throw ConfigError(loc, "", "YAML syntax error: " + e.msg);
  }
}

}  // namespace

std::string flow_yaml(const YAML::Node& n) {
  YAML::Emitter e;
  e.SetMapFormat(YAML::Flow);
  e.SetSeqFormat(YAML::Flow);
  e << n;
  return e.c_str();
}

std::string describe_yaml(const YAML::Node& n) {
  if (!n.IsDefined()) return "nothing";
  if (n.IsNull()) return "null";
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a mapping";
  return "'" + n.Scalar() + "'";
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  std::vector<std::string> best;  // every candidate at the smallest distance, in order
  std::size_t best_d = std::string::npos;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best.clear();
    }
    if (d == best_d && std::find(best.begin(), best.end(), c) == best.end()) best.push_back(c);
  }
  // Close enough to be a typo: at most a third of the word wrong, or a prefix.
  const bool near =
      best_d != std::string::npos && best_d * 3 <= std::max<std::size_t>(word.size(), 3) && best_d < word.size();
  std::vector<std::string> close;
  for (const auto& b : best)
    if (near || (!word.empty() && b.rfind(word, 0) == 0)) close.push_back(b);
  if (close.empty()) return "";
  // A tie names every candidate: "did you mean 'torus2d' or 'torus3d'?"
  std::string s = "did you mean ";
  for (std::size_t i = 0; i < close.size(); ++i)
    s += (i == 0 ? "" : i + 1 == close.size() ? " or " : ", ") + ("'" + close[i] + "'");
  return s + "?";
}

YamlNode::YamlNode(YAML::Node node, std::string file, std::string path, SourceLocation parent_loc)
    : node_(std::move(node)),
      file_(std::move(file)),
      path_(std::move(path)),
      parent_loc_(std::move(parent_loc)),
      overrides_(std::make_shared<std::map<std::string, std::string>>()) {}

YamlNode YamlNode::load_file(const std::string& path) { return parse(read_config_text(path), path); }

YamlNode YamlNode::load_string(const std::string& text, const std::string& origin) { return parse(text, origin); }

YamlNode YamlNode::operator[](const std::string& key) const {
  std::string child_path = join_path(path_, key);
  if (!node_.IsMap()) return YamlNode(YAML::Node(YAML::NodeType::Undefined), file_, child_path, location());
  // const access: never inserts into the tree. A missing key gives a
  // yaml-cpp "zombie" node whose IsMap(), Mark(), size() ... throw
  // YAML::InvalidNode; an Undefined node answers them.
  const YAML::Node& cn = node_;
  YAML::Node found = cn[key];
  YamlNode child(found.IsDefined() ? found : YAML::Node(YAML::NodeType::Undefined), file_, child_path, location());
  child.overrides_ = overrides_;
  return child;
}

YamlNode YamlNode::operator[](std::size_t index) const {
  std::string child_path = path_ + "[" + std::to_string(index) + "]";
  if (!node_.IsSequence() || index >= node_.size())
    return YamlNode(YAML::Node(YAML::NodeType::Undefined), file_, child_path, location());
  YamlNode child(node_[index], file_, child_path, location());
  child.overrides_ = overrides_;
  return child;
}

std::vector<std::string> YamlNode::keys() const {
  std::vector<std::string> out;
  if (!node_.IsMap()) return out;
  for (const auto& kv : node_) out.push_back(kv.first.Scalar());
  return out;
}

SourceLocation YamlNode::location() const {
  for (const auto& [p, text] : *overrides_) {
    if (path_ == p || path_.rfind(p + ".", 0) == 0 || path_.rfind(p + "[", 0) == 0)
      return SourceLocation{"--set " + text, 0, 0};
  }
  if (node_.IsDefined()) {
    const YAML::Mark m = node_.Mark();
    if (!m.is_null()) return SourceLocation{file_, m.line + 1, m.column + 1};
  }
  // The document itself without a mark (empty, or only comments): its start.
  if (parent_loc_.file.empty()) return SourceLocation{file_, 1, 1};
  return parent_loc_;
}

std::string YamlNode::scalar() const { return node_.IsScalar() ? node_.Scalar() : std::string(); }

void YamlNode::fail(const std::string& what) const { throw ConfigError(location(), path_, what); }

double YamlNode::as_double() const {
  if (!node_.IsScalar()) fail("expected a number, got " + describe_yaml(node_));
  const std::string& s = node_.Scalar();
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(v))
    fail("expected a number, got " + describe_yaml(node_));
  return v;
}

std::int64_t YamlNode::as_int() const {
  // A plain decimal integer is read exactly (a double keeps only 53 bits).
  const std::string s = node_.IsScalar() ? node_.Scalar() : std::string();
  const std::size_t digits = !s.empty() && (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (s.size() > digits && s.find_first_not_of("0123456789", digits) == std::string::npos) {
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (errno == ERANGE) fail("value " + s + " is out of range: expected an integer that fits in 64 bits");
    return v;
  }
  double v = as_double();
  if (v != std::floor(v) || std::fabs(v) > 9.0e15) fail("expected an integer, got " + describe_yaml(node_));
  return static_cast<std::int64_t>(v);
}

std::uint64_t YamlNode::as_uint() const {
  std::int64_t v = as_int();
  if (v < 0) fail("expected a non-negative integer, got " + describe_yaml(node_));
  return static_cast<std::uint64_t>(v);
}

bool YamlNode::as_bool() const {
  if (node_.IsScalar()) {
    const std::string& s = node_.Scalar();
    if (s == "true" || s == "True" || s == "yes" || s == "on") return true;
    if (s == "false" || s == "False" || s == "no" || s == "off") return false;
  }
  fail("expected true or false, got " + describe_yaml(node_));
}

std::string YamlNode::as_string() const {
  if (!node_.IsScalar()) fail("expected a string, got " + describe_yaml(node_));
  return node_.Scalar();
}

void YamlNode::reject_unknown_keys(const std::vector<std::string>& known) const {
  if (!node_.IsMap()) return;
  for (const auto& kv : node_) {
    const std::string key = kv.first.Scalar();
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string msg = "unknown key '" + key + "'";
    std::string hint = did_you_mean(key, known);
    if (!hint.empty()) {
      msg += "; " + hint;
    } else {
      msg += "; expected one of:";
      for (const auto& k : known) msg += " " + k;
    }
    const YAML::Mark m = kv.first.Mark();
    SourceLocation where = (*this)[key].location();  // names a --set override if it came from one
    if (where.line > 0 && !m.is_null()) where = SourceLocation{file_, m.line + 1, m.column + 1};
    throw ConfigError(where, join_path(path_, key), msg);
  }
}

ConfigError relocate(const YamlNode& root, const ConfigError& e) {
  YamlNode at = root;
  std::string path = e.key_path();
  // Paths are from the document root; `root` may be a mapping inside it.
  if (!root.path().empty() && path.rfind(root.path() + ".", 0) == 0) path = path.substr(root.path().size() + 1);
  std::size_t start = 0;
  while (start < path.size()) {
    std::size_t end = path.find_first_of(".[", start);
    std::string key = path.substr(start, end == std::string::npos ? std::string::npos : end - start);
    YamlNode next = at[key];
    if (!next.raw().IsDefined()) break;
    at = next;
    if (end == std::string::npos) break;
    if (path[end] == '[') {
      std::size_t close = path.find(']', end);
      if (close == std::string::npos) break;
      YamlNode item = at[static_cast<std::size_t>(std::stoul(path.substr(end + 1, close - end - 1)))];
      if (!item.raw().IsDefined()) break;
      at = item;
      end = close + 1;
      if (end < path.size() && path[end] == '.') ++end;
      start = end;
    } else {
      start = end + 1;
    }
  }
  return ConfigError(at.location(), e.key_path(), e.detail());
}

void YamlNode::apply_override(const std::string& assignment) {
  const SourceLocation here{"--set " + assignment, 0, 0};
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) throw ConfigError(here, "", "expected KEY.PATH=VALUE, e.g. workload.m=4096");
  const std::string key_path = assignment.substr(0, eq);
  const std::string text = assignment.substr(eq + 1);
  YAML::Node value;
  try {
    value = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw ConfigError(here, key_path, "value is not valid YAML: " + e.msg);
  }
  try {
    DocumentCheck(here.file).walk(value, key_path);
  } catch (const ConfigError& e) {
    throw ConfigError(here, e.key_path(), e.detail());
  }
  std::vector<std::string> parts;
  for (std::size_t start = 0;;) {
    auto dot = key_path.find('.', start);
    parts.push_back(key_path.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  YAML::Node cur = node_;
  std::string walked;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& key = parts[i];
    if (key.empty()) throw ConfigError(here, key_path, "empty component in key path");
    if (!cur.IsMap())
      throw ConfigError(here, key_path,
                        "'" + (walked.empty() ? std::string("<root>") : walked) +
                            "' is not a mapping, so it has no key '" + key + "'");
    std::vector<std::string> existing;
    for (const auto& kv : cur) existing.push_back(kv.first.Scalar());
    const bool last = i + 1 == parts.size();
    bool found = std::find(existing.begin(), existing.end(), key) != existing.end();
    walked = join_path(walked, key);
    if (last) {
      cur[key] = value;
      break;
    }
    if (!found) {
      std::string msg = "the path does not exist: no key '" + key + "' in '" +
                        (i == 0 ? std::string("<root>") : walked.substr(0, walked.rfind('.'))) + "'";
      std::string hint = did_you_mean(key, existing);
      // --set replaces a leaf but never creates a parent: a new mapping is
      // given whole, so without a near miss offer the assignment in that form.
      std::string mapping = text;
      for (std::size_t j = parts.size() - 1; j > i; --j) mapping = "{" + parts[j] + ": " + mapping + "}";
      msg += "; " + (hint.empty()
                         ? "to add '" + walked + "', give it as a mapping: --set \"" + walked + "=" + mapping + "\""
                         : hint);
      throw ConfigError(here, key_path, msg);
    }
    YAML::Node next = cur[key];
    cur.reset(next);
  }
  (*overrides_)[key_path] = assignment;
}

}  // namespace sim
