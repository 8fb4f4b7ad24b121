#pragma once
// MaxText's logical axis rules (base.yml logical_axis_rules): every weight
// and activation dimension has a logical name ('embed', 'mlp', 'heads',
// 'vocab', 'activation_batch', 'activation_length', ...) and the rules say
// which mesh axes may shard it (docs/maxtext.md, "Logical axes").
#include <cstdint>
#include <string>
#include <vector>

#include "sim/yaml_node.h"
#include "workloads/maxtext/spec.h"

namespace workloads {

// Reads a list of [logical name, mesh axes] pairs, the mesh axes a name, a
// list of names or [] (errors located at the node; mesh axis names with a
// suggestion).
LogicalAxisRules read_axis_rules(const sim::YamlNode& n);

// A model file's rules merged into `base` as MaxText merges them
// (pyconfig.py create_new_logical_axis_rules at 50bafeb): every rule of a
// logical name the model file names is dropped from `base` and the model
// file's rules for it are appended; names `base` lacks are ignored.
LogicalAxisRules merge_model_axis_rules(const LogicalAxisRules& base, const LogicalAxisRules& model);

// The mesh axes assigned to each dimension of an array whose dimensions
// have these logical names, as flax's logical_to_mesh_axes assigns them:
// the rules are tried in order, and a rule for a dimension's name is taken
// when that dimension has no axes yet and none of the rule's axes is taken
// by another dimension of the array. A name no rule takes is unsharded ({}).
std::vector<std::vector<MaxTextAxis>> logical_to_mesh_axes(const LogicalAxisRules& rules,
                                                           const std::vector<std::string>& dims);

// The tensors of a training step whose sharding the workload needs, and the
// logical names MaxText gives their dimensions (layers/*.py at 50bafeb, the
// training path with expert_shard_attention_option fsdp, base.yml's value).
enum class MaxTextTensor {
  embedding,          // token embedding table: vocab, embed
  query_weight,       // embed, q_heads, kv
  key_value_weight,   // K or V projection: embed, kv_heads, kv_head_dim
  qkv_weight,         // fused_qkv: embed, qkv, heads, kv
  out_weight,         // attention output projection: heads, kv, embed
  mlp_in_weight,      // wi, wi_0 or wi_1: embed, mlp (fused_mlp: embed, num_activations, mlp)
  mlp_out_weight,     // wo: mlp, embed
  expert_in_weight,   // exp, embed_no_exp, mlp (fsdp_shard_on_exp: embed_no_exp, -, mlp)
  expert_out_weight,  // exp, mlp, embed_no_exp (fsdp_shard_on_exp: embed_no_exp, mlp, -)
  norm_scale,         // norm
  logits_weight,      // untied output projection: embed, vocab
  layer_input,        // decoder_layer_input: activation_batch, activation_norm_length, activation_embed
  qkv_projection,     // query_proj, key_proj, value_proj: activation_kv_batch, activation_length_no_exp,
                      // activation_kv_heads, activation_kv_head_dim
  attention_output,   // context: activation_batch, activation_length_no_exp, activation_heads, activation_kv
  mlp_hidden,         // mlpwi: activation_batch, activation_length_no_exp, activation_mlp
  logits              // activation_embed_and_logits_batch, activation_length_no_exp, activation_vocab
};
// The logical dimension names of `t` under cfg (fused_mlp and
// fsdp_shard_on_exp change two of them); "" is a dimension MaxText leaves
// unsharded (None).
std::vector<std::string> logical_dims(MaxTextTensor t, const MaxTextConfig& cfg);

// Over which mesh axes (of more than one chip in cfg.mesh) dimension `dim`
// of an array with logical dimensions `dims` is sharded, in rule order, and
// into how many shards (the product of their sizes).
struct AxisSharding {
  std::vector<MaxTextAxis> axes;
  std::uint64_t shards = 1;
};
AxisSharding sharded_over(const MaxTextConfig& cfg, const std::vector<std::string>& dims, std::size_t dim);
// The same for a lone logical dimension (an array of one dimension).
AxisSharding sharded_over(const MaxTextConfig& cfg, const std::string& logical);
// Each dimension of tensor `t`, in logical_dims order.
std::vector<AxisSharding> sharding_of(MaxTextTensor t, const MaxTextConfig& cfg);

}  // namespace workloads
