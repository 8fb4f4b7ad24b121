// The sharded-matmul planner against the textbook cases (How to Scale Your
// Model, sharding.md): which collective, over which axes, moving how many bytes.
#include <catch2/catch.hpp>

#include "workloads/sharding/planner.h"

namespace test_planner {

using namespace workloads;

namespace {

const MeshAxes kMesh = {{"x", 4}, {"y", 2}};

PartitionSpec spec(const std::string& yaml, const std::string& tensor = "A") {
  return parse_partition_spec(sim::YamlNode::load_string(yaml, "spec.yaml"), 2, kMesh, tensor);
}

ShardedMatmulPlan plan(const std::string& a, const std::string& b, const std::string& out,
                       ShardedMatmulShape shape = {1024, 512, 256, 2}) {
  auto where = sim::YamlNode::load_string("{}", "exp.yaml");
  return plan_sharded_matmul(shape, spec(a, "A"), spec(b, "B"), spec(out, "C"), kMesh, where);
}

}  // namespace

TEST_CASE("case 1: compatible shardings need no communication", "[workloads][sharding]") {
  auto p = plan("[x, null]", "[null, y]", "[x, y]");
  CHECK(p.before.empty());
  CHECK(p.after.empty());
  CHECK(p.local_m == 1024 / 4);
  CHECK(p.local_k == 512);
  CHECK(p.local_n == 256 / 2);
  CHECK(p.a_shard == std::vector<std::uint64_t>{256, 512});
  CHECK(p.c_shard == std::vector<std::uint64_t>{256, 128});
}

TEST_CASE("case 2: one contracting dimension sharded: all-gather it first", "[workloads][sharding]") {
  auto p = plan("[x, y]", "[null, null]", "[x, null]");
  REQUIRE(p.before.size() == 1);
  CHECK(p.before[0].op == interconnect::CollectiveOp::all_gather);
  CHECK(p.before[0].tensor == "A");
  CHECK(p.before[0].axes == std::vector<std::string>{"y"});
  // The gathered A block each chip ends with: (1024/4) x 512 BF16.
  CHECK(p.before[0].bytes == 256 * 512 * 2);
  CHECK(p.after.empty());
  CHECK(p.local_k == 512);
}

TEST_CASE("case 3: both contracting dimensions sharded alike: reduce after", "[workloads][sharding]") {
  auto ar = plan("[null, x]", "[x, null]", "[null, null]");
  CHECK(ar.before.empty());
  REQUIRE(ar.after.size() == 1);
  CHECK(ar.after[0].op == interconnect::CollectiveOp::all_reduce);
  CHECK(ar.after[0].axes == std::vector<std::string>{"x"});
  CHECK(ar.after[0].bytes == 1024 * 256 * 2);  // every chip holds a full partial C
  CHECK(ar.local_k == 512 / 4);

  auto rs = plan("[null, x]", "[x, null]", "[null, x]");
  REQUIRE(rs.after.size() == 1);
  CHECK(rs.after[0].op == interconnect::CollectiveOp::reduce_scatter);
  CHECK(rs.after[0].dim == 1);
  CHECK(rs.c_shard == std::vector<std::uint64_t>{1024, 64});
}

TEST_CASE("case 4: both non-contracting dimensions on one axis: gather an operand", "[workloads][sharding]") {
  auto p = plan("[x, null]", "[null, x]", "[x, null]");
  REQUIRE(p.before.size() == 1);
  CHECK(p.before[0].op == interconnect::CollectiveOp::all_gather);
  CHECK(p.before[0].tensor == "B");  // B (512x256) is smaller than A (1024x512)
  CHECK(p.before[0].dim == 1);
  CHECK(p.before[0].bytes == 512 * 256 * 2);
  CHECK(p.after.empty());
  CHECK(p.local_n == 256);
}

TEST_CASE("resharding the output: dropping an axis gathers, adding one slices", "[workloads][sharding]") {
  auto gather = plan("[x, null]", "[null, null]", "[null, null]");
  REQUIRE(gather.after.size() == 1);
  CHECK(gather.after[0].op == interconnect::CollectiveOp::all_gather);
  CHECK(gather.after[0].bytes == 1024 * 256 * 2);
  auto slice = plan("[x, null]", "[null, null]", "[x, y]");
  CHECK(slice.after.empty());
}

TEST_CASE("bad PartitionSpecs name tensor, dimension, axis and sizes", "[workloads][sharding][bad-input]") {
  auto where = sim::YamlNode::load_string("workload: {}", "exp.yaml")["workload"];
  const MeshAxes mesh3 = {{"data", 3}};
  auto a = parse_partition_spec(sim::YamlNode::load_string("[data, null]", "s"), 2, mesh3, "A");
  auto none = parse_partition_spec(sim::YamlNode::load_string("[null, null]", "s"), 2, mesh3, "B");
  CHECK_THROWS_WITH(plan_sharded_matmul({1024, 64, 64, 2}, a, none, a, mesh3, where),
                    Catch::Contains("A dimension 0 (m = 1024) is split over mesh axis 'data' (size 3): "
                                    "1024 is not divisible by 3"));
  CHECK_THROWS_WITH(spec("[x, yy]"), Catch::Contains("unknown mesh axis 'yy'") && Catch::Contains("did you mean 'y'?"));
  CHECK_THROWS_WITH(spec("[x, x]"), Catch::Contains("mesh axis 'x' is used twice in the spec of A"));
  CHECK_THROWS_WITH(spec("[[x, y], x]"), Catch::Contains("used twice"));
  CHECK_THROWS_WITH(spec("[x]"), Catch::Contains("needs 2 entries"));
  CHECK_NOTHROW(spec("[[x, y], null]"));
}

}  // namespace test_planner
