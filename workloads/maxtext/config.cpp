#include "workloads/maxtext/config.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "sim/error.h"
#include "workloads/experiment.h"
#include "workloads/maxtext/axis_rules.h"
#include "workloads/maxtext/keys.h"
#include "workloads/maxtext/mesh.h"
#include "workloads/maxtext/xla_flags.h"

namespace workloads {

namespace fs = std::filesystem;

namespace {

// Where the value of each key now in the config came from, for errors that
// involve several keys.
using Origins = std::map<std::string, sim::YamlNode>;

// The key's own place in its mapping (a located "unknown key" points at the
// key, as sim::YamlNode::reject_unknown_keys does).
sim::SourceLocation key_location(const sim::YamlNode& map, const std::string& key) {
  for (const auto& kv : map.raw()) {
    if (kv.first.Scalar() != key) continue;
    const YAML::Mark m = kv.first.Mark();
    if (!m.is_null()) return sim::SourceLocation{map.file(), m.line + 1, m.column + 1};
  }
  return map[key].location();
}

[[noreturn]] void fail_key(const sim::YamlNode& map, const std::string& key, const std::string& what) {
  throw sim::ConfigError(key_location(map, key), map[key].path(), what);
}

std::string shown(const sim::YamlNode& n) { return n.is_scalar() ? n.scalar() : sim::flow_yaml(n.raw()); }

// MaxText's files write integers as 10_000 (YAML 1.1); yaml-cpp does not
// read that as a number, so the underscores go before the typed read.
sim::YamlNode without_digit_separators(const sim::YamlNode& n) {
  if (!n.is_scalar()) return n;
  const std::string s = n.scalar();
  if (s.find('_') == std::string::npos || s.find_first_not_of("+-0123456789_.eE") != std::string::npos) return n;
  std::string t;
  for (char ch : s)
    if (ch != '_') t += ch;
  return sim::YamlNode(YAML::Node(t), n.file(), n.path(), n.location());
}

std::string resolve_model_file(const sim::YamlNode& name_node) {
  const std::string name = name_node.as_string();
  std::vector<std::string> known;
  for (const auto& dir : config_search_dirs(name_node.file(), "maxtext/models")) {
    const fs::path p = fs::path(dir) / (name + ".yml");
    std::error_code ec;
    if (name.find('/') == std::string::npos && fs::is_regular_file(p, ec)) return p.string();
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ".yml") known.push_back(e.path().stem().string());
  }
  std::sort(known.begin(), known.end());
  known.erase(std::unique(known.begin(), known.end()), known.end());
  const std::string hint = sim::did_you_mean(name, known);
  name_node.fail("unknown MaxText model '" + name + "'" + (hint.empty() ? "" : "; " + hint) +
                 " (configs/maxtext/models/ holds " + std::to_string(known.size()) + " models)");
}

// base.yml's defaults: every key there is one tpusim reads.
void read_defaults(const sim::YamlNode& base, MaxTextConfig& cfg, Origins& origins) {
  if (!base.is_map()) base.fail("expected MaxText's base.yml defaults as a mapping");
  for (const auto& key : base.keys()) {
    const MaxTextKey* k = maxtext_keys().find(key);
    if (!k || k->cls != KeyClass::modelled) fail_key(base, key, "not a key tpusim reads from base.yml");
    k->read(without_digit_separators(base[key]), cfg);
    origins.insert_or_assign(key, base[key]);
  }
}

// Where a listed key was set: the config's place as is; a model file's by
// its file name, so that a report does not depend on where tpusim is installed.
std::string listed_where(const sim::YamlNode& v, const sim::YamlNode& config) {
  sim::SourceLocation at = v.location();
  if (at.file != config.file()) at.file = fs::path(at.file).filename().string();
  return at.str();
}

// Lists or refuses a key that is not modelled; false when it is modelled.
bool classify(const sim::YamlNode& map, const std::string& key, const MaxTextKey& k, const sim::YamlNode& config,
              MaxTextConfig& cfg) {
  const sim::YamlNode v = map[key];
  const ListedKey listed{key, shown(v), listed_where(v, config), k.meaning};
  if (k.cls == KeyClass::modelled) return false;
  if (k.cls == KeyClass::ignored) {
    cfg.ignored_keys.push_back(listed);
  } else if (k.neutral && v.is_scalar() && same_value(v.scalar(), *k.neutral)) {
    cfg.ignored_keys.push_back({key, listed.value, listed.where, "base.yml's value: changes nothing"});
  } else if (cfg.allow_unmodelled) {
    cfg.approximations.push_back(listed);
  } else {
    std::vector<std::string> modelled = maxtext_keys().names(KeyClass::modelled);
    const std::string hint = sim::did_you_mean(key, modelled);
    fail_key(map, key,
             "'" + key + "' changes performance in a way tpusim does not model (" + k.meaning + "); " +
                 (hint.empty() ? "" : "the nearest modelled key: " + hint + "; ") +
                 "remove it, or set allow_unmodelled: true to run with it listed as an approximation");
  }
  return true;
}

const MaxTextKey& known_key(const sim::YamlNode& map, const std::string& key) {
  const MaxTextKey* k = maxtext_keys().find(key);
  if (!k) {
    const std::string hint = sim::did_you_mean(key, maxtext_keys().names());
    fail_key(map, key,
             "unknown MaxText key '" + key + "'" + (hint.empty() ? "" : "; " + hint) +
                 " (tpusim knows the keys of MaxText's base.yml up to tag tpu-recipes-v0.1.5; docs/maxtext.md)");
  }
  return *k;
}

// The model file's keys, unless the config sets them too.
void read_model_file(const sim::YamlNode& model, const sim::YamlNode& config, MaxTextConfig& cfg, Origins& origins) {
  if (!model.is_map()) model.fail("expected a MaxText model file: a mapping of keys");
  for (const auto& key : model.keys()) {
    const MaxTextKey& k = known_key(model, key);
    if (config[key].present()) {
      if (cfg.override_model_config) continue;
      const sim::SourceLocation here = model[key].location();
      fail_key(config, key,
               "'" + key + "' is set by the model file too (" + here.str() +
                   "); MaxText refuses a key set by both (pyconfig.py validate_no_keys_overwritten_twice): drop it "
                   "or set override_model_config: true");
    }
    if (classify(model, key, k, config, cfg)) continue;
    if (key == "logical_axis_rules") {
      cfg.logical_axis_rules = merge_model_axis_rules(cfg.logical_axis_rules, read_axis_rules(model[key]));
    } else {
      k.read(without_digit_separators(model[key]), cfg);
    }
    origins.insert_or_assign(key, model[key]);
  }
}

void read_config(const sim::YamlNode& config, MaxTextConfig& cfg, Origins& origins) {
  for (const auto& key : config.keys()) {
    const MaxTextKey& k = known_key(config, key);
    if (key == "model_name" || key == "allow_unmodelled" || key == "override_model_config") continue;  // read first
    if (classify(config, key, k, config, cfg)) continue;
    k.read(without_digit_separators(config[key]), cfg);
    origins.insert_or_assign(key, config[key]);
  }
}

// pyconfig.py get_individual_scales: log2(scale) = 3b + r; heads and MLP
// double b + (r > 0) times, the embedding b + (r > 1), the layers b.
void scale_model(MaxTextModel& m, const Origins& origins) {
  const std::uint32_t s = m.global_parameter_scale;
  if ((s & (s - 1)) != 0)
    origins.at("global_parameter_scale").fail("global_parameter_scale must be a power of 2, got " + std::to_string(s));
  unsigned log2 = 0;
  while ((1u << log2) < s) ++log2;
  const unsigned b = log2 / 3, r = log2 % 3;
  const unsigned heads = b + (r > 0 ? 1 : 0), emb = b + (r > 1 ? 1 : 0);
  m.emb_dim = m.base_emb_dim << emb;
  m.num_query_heads = m.base_num_query_heads << heads;
  m.num_kv_heads = m.base_num_kv_heads << heads;
  m.mlp_dim = m.base_mlp_dim << heads;
  m.moe_mlp_dim = m.base_moe_mlp_dim << heads;
  m.num_decoder_layers = m.base_num_decoder_layers << b;
}

// A key path's node: where the config (or the model file, or base.yml) set it.
sim::YamlNode origin_of(const Origins& origins, const std::string& key, const sim::YamlNode& config) {
  const auto it = origins.find(key);
  return it == origins.end() ? config : it->second;
}

void check_across_keys(const MaxTextConfig& cfg, const Origins& origins, const sim::YamlNode& config) {
  // pyconfig.py validate_vocab_tiling.
  const double tokens = cfg.per_device_batch_size * static_cast<double>(cfg.max_target_length);
  if (std::fmod(tokens, static_cast<double>(cfg.num_vocab_tiling)) != 0.0)
    origin_of(origins, "num_vocab_tiling", config)
        .fail("per_device_batch_size x max_target_length (" + std::to_string(static_cast<std::uint64_t>(tokens)) +
              ") must be a multiple of num_vocab_tiling (" + std::to_string(cfg.num_vocab_tiling) + ")");
  // pyconfig.py using_expert_parallelism.
  const auto e = static_cast<std::size_t>(MaxTextAxis::expert);
  if (cfg.mesh.ici[e] > 1 && cfg.mesh.dcn[e] > 1)
    origin_of(origins, "dcn_expert_parallelism", config)
        .fail("expert parallelism can be on ICI or on DCN, not both (MaxText refuses it)");
  if (cfg.global_batch() == 0)
    origin_of(origins, "per_device_batch_size", config)
        .fail("per_device_batch_size x " + std::to_string(cfg.chips) + " chips is less than one sequence");
  if (cfg.model.moe() && cfg.model.num_experts_per_tok > cfg.model.num_experts)
    origin_of(origins, "num_experts_per_tok", config)
        .fail("more experts per token (" + std::to_string(cfg.model.num_experts_per_tok) + ") than experts (" +
              std::to_string(cfg.model.num_experts) + ")");
}

void finish(MaxTextConfig& cfg, const Origins& origins, const sim::YamlNode& config) {
  if (cfg.mu_dtype_follows_weights) cfg.mu_dtype = cfg.weight_dtype;
  scale_model(cfg.model, origins);
  try {
    fill_mesh(cfg.mesh, cfg.chips, cfg.slices);
  } catch (const sim::ConfigError& err) {
    const sim::YamlNode at = origin_of(origins, err.key_path(), config);
    at.fail(err.detail() + (at.file() == config.file() ? "" : " (the value is base.yml's default)"));
  }
  check_across_keys(cfg, origins, config);
}

}  // namespace

MaxTextConfig load_maxtext_config(const sim::YamlNode& config, const sim::YamlNode* xla_flags, std::uint32_t chips,
                                  std::uint32_t slices, bool allow_unmodelled) {
  if (!config.is_map()) config.fail("expected a mapping of MaxText keys (model_name and overrides)");
  MaxTextConfig cfg;
  cfg.chips = chips;
  cfg.slices = slices;
  Origins origins;
  std::string base_file;
  for (const auto& dir : config_search_dirs(config.file(), "maxtext")) {
    std::error_code ec;
    if (fs::is_regular_file(fs::path(dir) / "base.yml", ec)) {
      base_file = (fs::path(dir) / "base.yml").string();
      break;
    }
  }
  if (base_file.empty()) config.fail("MaxText's defaults (configs/maxtext/base.yml) are not installed");
  read_defaults(sim::YamlNode::load_file(base_file), cfg, origins);
  for (const char* first : {"allow_unmodelled", "override_model_config", "model_name"}) {
    if (!config[first].present()) continue;
    maxtext_keys().find(first)->read(config[first], cfg);
    origins.insert_or_assign(first, config[first]);
  }
  cfg.allow_unmodelled = cfg.allow_unmodelled || allow_unmodelled;
  if (cfg.model.name != "default")
    read_model_file(sim::YamlNode::load_file(resolve_model_file(config["model_name"])), config, cfg, origins);
  read_config(config, cfg, origins);
  finish(cfg, origins, config);
  if (xla_flags && xla_flags->present()) load_xla_flags(*xla_flags, cfg);
  return cfg;
}

}  // namespace workloads
