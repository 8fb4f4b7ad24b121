#include "workloads/maxtext/axis_rules.h"

#include <algorithm>

namespace workloads {

LogicalAxisRules read_axis_rules(const sim::YamlNode& n) {
  if (!n.is_sequence()) n.fail("expected a list of [logical name, mesh axes] pairs");
  LogicalAxisRules rules;
  for (std::size_t i = 0; i < n.size(); ++i) {
    const sim::YamlNode r = n[i];
    if (!r.is_sequence() || r.size() != 2) r.fail("expected [logical name, mesh axes]");
    AxisRule rule;
    rule.logical = r[0].as_string();
    const sim::YamlNode axes = r[1];
    if (axes.is_scalar()) {
      rule.mesh.push_back(maxtext_axis_names().parse(axes));
    } else {
      if (!axes.is_sequence()) axes.fail("expected a mesh axis or a list of them");
      for (std::size_t j = 0; j < axes.size(); ++j) rule.mesh.push_back(maxtext_axis_names().parse(axes[j]));
    }
    rules.push_back(std::move(rule));
  }
  return rules;
}

LogicalAxisRules merge_model_axis_rules(const LogicalAxisRules& base, const LogicalAxisRules& model) {
  auto in = [](const LogicalAxisRules& rs, const std::string& name) {
    return std::any_of(rs.begin(), rs.end(), [&](const AxisRule& r) { return r.logical == name; });
  };
  LogicalAxisRules replacements;
  for (const auto& r : model)
    if (in(base, r.logical)) replacements.push_back(r);
  LogicalAxisRules out;
  for (const auto& r : base)
    if (!in(replacements, r.logical)) out.push_back(r);
  out.insert(out.end(), replacements.begin(), replacements.end());
  return out;
}

std::vector<std::vector<MaxTextAxis>> logical_to_mesh_axes(const LogicalAxisRules& rules,
                                                           const std::vector<std::string>& dims) {
  std::vector<std::vector<MaxTextAxis>> out(dims.size());
  std::vector<bool> assigned(dims.size(), false);
  for (const auto& rule : rules) {
    const auto it = std::find(dims.begin(), dims.end(), rule.logical);
    if (it == dims.end()) continue;
    const auto pos = static_cast<std::size_t>(it - dims.begin());
    if (assigned[pos]) continue;
    bool free = true;
    for (std::size_t d = 0; d < dims.size() && free; ++d)
      for (const MaxTextAxis a : rule.mesh)
        if (std::find(out[d].begin(), out[d].end(), a) != out[d].end()) free = false;
    if (!free) continue;
    out[pos] = rule.mesh;
    assigned[pos] = true;
  }
  return out;
}

AxisSharding sharded_over(const MaxTextConfig& cfg, const std::vector<std::string>& dims, std::size_t dim) {
  AxisSharding s;
  const auto assigned = logical_to_mesh_axes(cfg.logical_axis_rules, dims);
  for (const MaxTextAxis a : assigned.at(dim)) {
    if (cfg.mesh.size(a) <= 1) continue;
    s.axes.push_back(a);
    s.shards *= cfg.mesh.size(a);
  }
  return s;
}

AxisSharding sharded_over(const MaxTextConfig& cfg, const std::string& logical) {
  return sharded_over(cfg, std::vector<std::string>{logical}, 0);
}

std::vector<std::string> logical_dims(MaxTextTensor t, const MaxTextConfig& cfg) {
  switch (t) {
    case MaxTextTensor::embedding: return {"vocab", "embed"};                           // embeddings.py Embed
    case MaxTextTensor::query_weight: return {"embed", "q_heads", "kv"};                // attentions.py init_query_w
    case MaxTextTensor::key_value_weight: return {"embed", "kv_heads", "kv_head_dim"};  // init_kv_w
    case MaxTextTensor::qkv_weight: return {"embed", "qkv", "heads", "kv"};             // init_qkv_w
    case MaxTextTensor::out_weight: return {"heads", "kv", "embed"};                    // init_out_w
    case MaxTextTensor::mlp_in_weight:                                                  // linears.py MlpBlock
      if (cfg.model.fused_mlp) return {"embed", "num_activations", "mlp"};
      return {"embed", "mlp"};
    case MaxTextTensor::mlp_out_weight: return {"mlp", "embed"};
    case MaxTextTensor::expert_in_weight:  // moe.py RoutedMoE
      if (cfg.moe.fsdp_shard_on_exp) return {"embed_no_exp", "", "mlp"};
      return {"exp", "embed_no_exp", "mlp"};
    case MaxTextTensor::expert_out_weight:
      if (cfg.moe.fsdp_shard_on_exp) return {"embed_no_exp", "mlp", ""};
      return {"exp", "mlp", "embed_no_exp"};
    case MaxTextTensor::norm_scale: return {"norm"};
    case MaxTextTensor::logits_weight: return {"embed", "vocab"};  // decoders.py logits_dense
    case MaxTextTensor::layer_input:                               // llama2.py activation_axis_names
      return {"activation_batch", "activation_norm_length", "activation_embed"};
    case MaxTextTensor::qkv_projection:  // attentions.py query/key/value_axis_names
      return {"activation_kv_batch", "activation_length_no_exp", "activation_kv_heads", "activation_kv_head_dim"};
    case MaxTextTensor::attention_output:  // attentions.py out_axis_names
      return {"activation_batch", "activation_length_no_exp", "activation_heads", "activation_kv"};
    case MaxTextTensor::mlp_hidden: return {"activation_batch", "activation_length_no_exp", "activation_mlp"};
    case MaxTextTensor::logits:  // decoders.py, num_vocab_tiling 1
      return {"activation_embed_and_logits_batch", "activation_length_no_exp", "activation_vocab"};
  }
  return {};
}

std::vector<AxisSharding> sharding_of(MaxTextTensor t, const MaxTextConfig& cfg) {
  const auto dims = logical_dims(t, cfg);
  std::vector<AxisSharding> out;
  for (std::size_t i = 0; i < dims.size(); ++i) out.push_back(sharded_over(cfg, dims, i));
  return out;
}

}  // namespace workloads
