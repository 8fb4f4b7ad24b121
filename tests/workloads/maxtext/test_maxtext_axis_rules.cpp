// MaxText's logical axis rules (base.yml at 50bafeb, configs/maxtext/base.yml)
// resolved as flax's logical_to_mesh_axes does, on hand-worked arrays.
#include <catch2/catch.hpp>

#include "maxtext_fixture.h"
#include "workloads/maxtext/axis_rules.h"

namespace test_maxtext_axis_rules {

using maxtext_fixture::load;
using workloads::MeshAxis;

namespace {

std::vector<std::string> names(const std::vector<MeshAxis>& axes) {
  std::vector<std::string> out;
  for (const MeshAxis a : axes) out.push_back(workloads::mesh_axis_names().name(a));
  return out;
}

using Names = std::vector<std::string>;

}  // namespace

TEST_CASE("maxtext axis rules: a weight ('embed', 'mlp') under fsdp and fsdp_transpose", "[maxtext][axis-rules]") {
  // base.yml lists 'mlp' -> [fsdp_transpose, tensor, tensor_sequence, autoregressive] before the
  // 'embed' rules, so 'mlp' takes fsdp_transpose and 'embed' the first rule without it:
  // [fsdp, sequence, tensor_transpose, context, expert].
  const auto cfg = load("{ici_fsdp_parallelism: 16, ici_fsdp_transpose_parallelism: -1}", 256);
  const auto axes = workloads::logical_to_mesh_axes(cfg.logical_axis_rules, {"embed", "mlp"});
  CHECK(names(axes[1]) == Names{"fsdp_transpose", "tensor", "tensor_sequence", "autoregressive"});
  CHECK(names(axes[0]) == Names{"fsdp", "sequence", "tensor_transpose", "context", "expert"});
  // Over the mesh's axes of more than one chip: embed over fsdp (16), mlp over fsdp_transpose (16).
  const auto embed = workloads::sharded_over(cfg, {"embed", "mlp"}, 0);
  CHECK(names(embed.axes) == Names{"fsdp"});
  CHECK(embed.shards == 16);
  const auto mlp = workloads::sharded_over(cfg, {"embed", "mlp"}, 1);
  CHECK(names(mlp.axes) == Names{"fsdp_transpose"});
  CHECK(mlp.shards == 16);
}

TEST_CASE("maxtext axis rules: the batch of activations over data, fsdp and expert", "[maxtext][axis-rules]") {
  const auto cfg = load("{ici_fsdp_parallelism: 64, ici_expert_parallelism: 4}", 256);
  const auto batch = workloads::sharded_over(cfg, "activation_batch");
  CHECK(names(batch.axes) == Names{"fsdp", "expert"});
  CHECK(batch.shards == 256);
  // Alone, 'embed' takes its first rule, with fsdp_transpose (size 1 here).
  CHECK(workloads::sharded_over(cfg, "embed").shards == 256);
  CHECK(workloads::sharded_over(cfg, "vocab").shards == 1);  // tensor axes only
  CHECK(names(workloads::sharded_over(cfg, "exp").axes) == Names{"expert"});
  CHECK(workloads::sharded_over(cfg, "no_such_name").shards == 1);
}

TEST_CASE("maxtext axis rules: heads and MLP over tensor", "[maxtext][axis-rules]") {
  const auto cfg = load("{ici_fsdp_parallelism: 32, ici_tensor_parallelism: 4}", 128);
  CHECK(workloads::sharded_over(cfg, {"embed", "q_heads", "kv"}, 1).shards == 4);
  CHECK(workloads::sharded_over(cfg, {"embed", "q_heads", "kv"}, 0).shards == 32);
  CHECK(workloads::sharded_over(cfg, {"embed", "q_heads", "kv"}, 2).shards == 1);  // 'kv' -> []
}

TEST_CASE("maxtext axis rules: a model file's rules replace base.yml's for the names it gives",
          "[maxtext][axis-rules]") {
  // llama2-70b.yml: logical_axis_rules [['norm', 'fsdp']] (base.yml: norm -> [tensor, tensor_transpose]).
  const auto cfg = load("{model_name: llama2-70b}", 64);
  const auto norm = workloads::sharded_over(cfg, "norm");
  CHECK(names(norm.axes) == Names{"fsdp"});
  CHECK(norm.shards == 64);
  std::size_t norm_rules = 0;
  for (const auto& r : cfg.logical_axis_rules) norm_rules += r.logical == "norm" ? 1 : 0;
  CHECK(norm_rules == 1);
  // A name base.yml lacks is dropped (pyconfig.py create_new_logical_axis_rules).
  const workloads::LogicalAxisRules base{{"a", {MeshAxis::data}}, {"b", {MeshAxis::fsdp}}};
  const auto merged = workloads::merge_model_axis_rules(base, {{"b", {MeshAxis::tensor}}, {"c", {MeshAxis::expert}}});
  REQUIRE(merged.size() == 2);
  CHECK(merged[0].logical == "a");
  CHECK(merged[1].logical == "b");
  CHECK(merged[1].mesh == std::vector<MeshAxis>{MeshAxis::tensor});
}

}  // namespace test_maxtext_axis_rules
