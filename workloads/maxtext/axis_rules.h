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
std::vector<std::vector<MeshAxis>> logical_to_mesh_axes(const LogicalAxisRules& rules,
                                                        const std::vector<std::string>& dims);

// Over which mesh axes (of more than one chip in cfg.mesh) dimension `dim`
// of an array with logical dimensions `dims` is sharded, in rule order, and
// into how many shards (the product of their sizes).
struct Sharding {
  std::vector<MeshAxis> axes;
  std::uint64_t shards = 1;
};
Sharding sharded_over(const MaxTextConfig& cfg, const std::vector<std::string>& dims, std::size_t dim);
// The same for a lone logical dimension (an array of one dimension).
Sharding sharded_over(const MaxTextConfig& cfg, const std::string& logical);

}  // namespace workloads
