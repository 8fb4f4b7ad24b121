// The recipe's libtpu flag string: split, classified, and errors located at
// the flag inside the string.
#include <catch2/catch.hpp>

#include "maxtext_fixture.h"
#include "workloads/maxtext/xla_flags.h"

namespace test_maxtext_xla_flags {

using maxtext_fixture::error_of;
using maxtext_fixture::load;

TEST_CASE("maxtext xla flags: split into names and values", "[maxtext][xla]") {
  const auto f = workloads::split_xla_flags("  --a=1 --b   --c=x=y ");
  REQUIRE(f.size() == 3);
  CHECK(f[0].flag.name == "a");
  CHECK(f[0].flag.value == "1");
  CHECK(f[0].offset == 2);
  CHECK(f[1].flag.name == "b");
  CHECK(f[1].flag.value == "true");
  CHECK(f[2].flag.value == "x=y");
  CHECK(f[2].offset == 14);
}

TEST_CASE("maxtext xla flags: every rule is named once", "[maxtext][xla]") {
  std::vector<std::string> seen;
  for (const auto& r : workloads::xla_flag_rules()) {
    INFO(r.name);
    CHECK(std::find(seen.begin(), seen.end(), r.name) == seen.end());
    CHECK(!r.why.empty());
    CHECK((r.cls == workloads::KeyClass::modelled) == (r.apply != nullptr));
    seen.push_back(r.name);
  }
}

TEST_CASE("maxtext xla flags: modelled ones set values, the rest are listed", "[maxtext][xla]") {
  const auto cfg =
      load("{}", 8, 1,
           "--xla_tpu_scoped_vmem_limit_kib=98304 --xla_tpu_enable_async_collective_fusion=true "
           "--xla_latency_hiding_scheduler_rerun=2 --xla_tpu_enable_sparse_core_collective_offload_all_reduce");
  CHECK(cfg.xla.scoped_vmem_limit_kib == 98304);
  CHECK(cfg.xla.async_collective_fusion);
  CHECK(cfg.xla.sparse_core_all_reduce);
  CHECK(cfg.xla.flags.size() == 4);
  REQUIRE(cfg.ignored_keys.size() == 1);
  CHECK(cfg.ignored_keys[0].key == "--xla_latency_hiding_scheduler_rerun");
  CHECK(cfg.ignored_keys[0].value == "2");
}

TEST_CASE("maxtext xla flags: an unknown flag is located inside the string with the near miss", "[maxtext][xla]") {
  // xla_flags: "--xla_tpu_scoped_vmem_limit_kib=1 --xla_tpu_rwb_fusio" on line 2: the string's
  // text starts at column 13 (after the quote at 12); the second flag 34 characters in.
  const auto e = error_of("{}", 8, 1, "--xla_tpu_scoped_vmem_limit_kib=1 --xla_tpu_rwb_fusio");
  CHECK(e.key_path() == "xla_flags");
  CHECK(e.where().line == 2);
  CHECK(e.where().column == 13 + 34);
  CHECK(e.detail().rfind("unknown XLA flag '--xla_tpu_rwb_fusio'; did you mean 'xla_tpu_rwb_fusion'?", 0) == 0);
}

TEST_CASE("maxtext xla flags: bad values and unmodelled flags are errors", "[maxtext][xla]") {
  CHECK(error_of("{}", 8, 1, "--xla_tpu_scoped_vmem_limit_kib=lots").detail() ==
        "bad value 'lots' for --xla_tpu_scoped_vmem_limit_kib");
  const auto e = error_of("{}", 8, 1, "--xla_tpu_impure_enable_packed_bf16_math_ops=true");
  CHECK(e.detail().find("--xla_tpu_impure_enable_packed_bf16_math_ops changes performance") == 0);
  // At the neutral value an unmodelled flag changes nothing.
  CHECK(load("{}", 8, 1, "--xla_tpu_enable_offloading_gather_to_sparsecore=false").approximations.empty());
  // allow_unmodelled lists it.
  const auto cfg = load("{allow_unmodelled: true}", 8, 1, "--xla_tpu_impure_enable_packed_bf16_math_ops=true");
  REQUIRE(cfg.approximations.size() == 1);
  CHECK(cfg.approximations[0].key == "--xla_tpu_impure_enable_packed_bf16_math_ops");
}

}  // namespace test_maxtext_xla_flags
