// MaxText's logical axis rules (base.yml at 50bafeb, configs/maxtext/base.yml)
// resolved as flax's logical_to_mesh_axes does, on hand-worked arrays.
#include <catch2/catch.hpp>

#include "maxtext_fixture.h"
#include "workloads/maxtext/axis_rules.h"

namespace test_maxtext_axis_rules {

using maxtext_fixture::load;
using workloads::MaxTextAxis;

namespace {

std::vector<std::string> names(const std::vector<MaxTextAxis>& axes) {
  std::vector<std::string> out;
  for (const MaxTextAxis a : axes) out.push_back(workloads::maxtext_axis_names().name(a));
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
  const workloads::LogicalAxisRules base{{"a", {MaxTextAxis::data}}, {"b", {MaxTextAxis::fsdp}}};
  const auto merged =
      workloads::merge_model_axis_rules(base, {{"b", {MaxTextAxis::tensor}}, {"c", {MaxTextAxis::expert}}});
  REQUIRE(merged.size() == 2);
  CHECK(merged[0].logical == "a");
  CHECK(merged[1].logical == "b");
  CHECK(merged[1].mesh == std::vector<MaxTextAxis>{MaxTextAxis::tensor});
}

namespace {

std::uint64_t shards(workloads::MaxTextTensor t, const workloads::MaxTextConfig& cfg) {
  std::uint64_t n = 1;
  for (const auto& s : workloads::sharding_of(t, cfg)) n *= s.shards;
  return n;
}

}  // namespace

TEST_CASE("maxtext axis rules: pure FSDP shards every weight and the batch over all chips", "[maxtext][axis-rules]") {
  // Llama 3.1 70B as in v6e-l70b-256: ici_fsdp -1 on 256 chips. Hand resolution with base.yml's
  // rules: 'q_heads' takes [tensor, tensor_transpose, ...] first, so 'embed' falls to its third rule
  // [fsdp, fsdp_transpose, sequence, context, expert]; every weight is split 256 ways along embed.
  using T = workloads::MaxTextTensor;
  const auto cfg = load("{model_name: llama3.1-70b, ici_fsdp_parallelism: -1}", 256);
  for (const T t : {T::embedding, T::query_weight, T::key_value_weight, T::out_weight, T::mlp_in_weight,
                    T::mlp_out_weight, T::logits_weight}) {
    INFO(static_cast<int>(t));
    CHECK(shards(t, cfg) == 256);
  }
  const auto q = workloads::sharding_of(T::query_weight, cfg);
  CHECK(names(q[0].axes) == Names{"fsdp"});
  CHECK(q[1].shards == 1);
  // Activations: the batch over fsdp, sequence and width whole.
  const auto in = workloads::sharding_of(T::layer_input, cfg);
  CHECK(in[0].shards == 256);
  CHECK(in[1].shards == 1);
  CHECK(in[2].shards == 1);
  CHECK(shards(T::qkv_projection, cfg) == 256);
  CHECK(shards(T::norm_scale, cfg) == 1);
}

TEST_CASE("maxtext axis rules: fsdp_transpose shards the MLP weights along the MLP", "[maxtext][axis-rules]") {
  // Llama 2 70B as in v6e-l2-70b-256: all 256 chips on fsdp_transpose. 'mlp' takes
  // [fsdp_transpose, ...]; the model file's norm rule puts norm scales on fsdp (of 1 chip).
  using T = workloads::MaxTextTensor;
  const auto cfg = load("{model_name: llama2-70b, ici_fsdp_parallelism: 1, ici_fsdp_transpose_parallelism: -1}", 256);
  const auto wi = workloads::sharding_of(T::mlp_in_weight, cfg);
  CHECK(wi[0].shards == 1);
  CHECK(names(wi[1].axes) == Names{"fsdp_transpose"});
  CHECK(wi[1].shards == 256);
  CHECK(names(workloads::sharding_of(T::query_weight, cfg)[0].axes) == Names{"fsdp_transpose"});
  CHECK(shards(T::norm_scale, cfg) == 1);
  CHECK(workloads::sharding_of(T::layer_input, cfg)[0].shards == 256);
}

TEST_CASE("maxtext axis rules: experts over expert, their width over fsdp", "[maxtext][axis-rules]") {
  // Mixtral 8x22B as in v6e-mixtral8x22b-256: fsdp 64 x expert 4. An expert weight (exp,
  // embed_no_exp, mlp): 'mlp' first (its axes all of 1 chip), 'embed_no_exp' its second rule
  // [fsdp, sequence, tensor_transpose, context] = 64, 'exp' expert = 4.
  using T = workloads::MaxTextTensor;
  const auto cfg = load("{model_name: mixtral-8x22b, ici_fsdp_parallelism: 64, ici_expert_parallelism: 4}", 256);
  const auto wi = workloads::sharding_of(T::expert_in_weight, cfg);
  CHECK(names(wi[0].axes) == Names{"expert"});
  CHECK(names(wi[1].axes) == Names{"fsdp"});
  CHECK(wi[2].shards == 1);
  CHECK(shards(T::expert_out_weight, cfg) == 256);
  // With fsdp_shard_on_exp the expert dimension is not named: the weights split over fsdp only.
  const auto on_exp = load(
      "{model_name: mixtral-8x22b, ici_fsdp_parallelism: 64, ici_expert_parallelism: 4, fsdp_shard_on_exp: true}", 256);
  CHECK(workloads::logical_dims(T::expert_in_weight, on_exp)[1].empty());
  CHECK(shards(T::expert_in_weight, on_exp) == 64);
}

}  // namespace test_maxtext_axis_rules
