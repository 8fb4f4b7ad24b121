// MaxText's mesh fill rule (max_utils.py fill_unspecified_mesh_axes,
// maxtext_utils.py create_device_mesh at 50bafeb) on hand-worked cases.
#include <catch2/catch.hpp>

#include "maxtext_fixture.h"
#include "workloads/maxtext/mesh.h"

namespace test_maxtext_mesh {

using maxtext_fixture::error_of;
using maxtext_fixture::load;
using workloads::MaxTextAxis;

TEST_CASE("maxtext mesh: ici_fsdp -1 on 256 chips is fsdp 256", "[maxtext][mesh]") {
  const auto cfg = load("{ici_fsdp_parallelism: -1}", 256);
  CHECK(cfg.mesh.size(MaxTextAxis::fsdp) == 256);
  for (const MaxTextAxis a : workloads::all_maxtext_axes())
    if (a != MaxTextAxis::fsdp) CHECK(cfg.mesh.size(a) == 1);
}

TEST_CASE("maxtext mesh: base.yml's ici_fsdp -1 applies when no key is given", "[maxtext][mesh]") {
  CHECK(load("{}", 64).mesh.size(MaxTextAxis::fsdp) == 64);
}

TEST_CASE("maxtext mesh: ici_fsdp 16 and ici_tensor -1 on 256 chips is tensor 16", "[maxtext][mesh]") {
  const auto cfg = load("{ici_fsdp_parallelism: 16, ici_tensor_parallelism: -1}", 256);
  CHECK(cfg.mesh.size(MaxTextAxis::fsdp) == 16);
  CHECK(cfg.mesh.size(MaxTextAxis::tensor) == 16);
}

TEST_CASE("maxtext mesh: DCN -1 takes the slices, each axis is ici x dcn", "[maxtext][mesh]") {
  // base.yml's dcn_data_parallelism -1 over 4 slices of 256.
  const auto cfg = load("{ici_fsdp_parallelism: -1}", 1024, 4);
  CHECK(cfg.mesh.size(MaxTextAxis::data) == 4);
  CHECK(cfg.mesh.size(MaxTextAxis::fsdp) == 256);
  // fsdp over DCN as well: 256 x 2.
  const auto two = load("{ici_fsdp_parallelism: 256, dcn_fsdp_parallelism: 2}", 512, 2);
  CHECK(two.mesh.size(MaxTextAxis::fsdp) == 512);
  CHECK(two.mesh.size(MaxTextAxis::data) == 1);  // dcn_data -1 filled with 2 / 2 = 1
}

TEST_CASE("maxtext mesh: the stage axis is set by *_pipeline_parallelism", "[maxtext][mesh]") {
  CHECK(workloads::parallelism_key(MaxTextAxis::stage, true) == "ici_pipeline_parallelism");
  const auto cfg = load("{ici_fsdp_parallelism: -1, ici_pipeline_parallelism: 4}", 64);
  CHECK(cfg.mesh.size(MaxTextAxis::stage) == 4);
  CHECK(cfg.mesh.size(MaxTextAxis::fsdp) == 16);
}

TEST_CASE("maxtext mesh: a -1 that does not divide is an error at that key", "[maxtext][mesh]") {
  // 256 / 3 truncates to 85 and 3 x 85 = 255 != 256 (MaxText's product check).
  const auto e = error_of("{ici_fsdp_parallelism: -1, ici_tensor_parallelism: 3}", 256);
  CHECK(e.key_path() == "config.ici_fsdp_parallelism");
  CHECK(e.where().line == 1);
  CHECK(e.where().column == 32);
  CHECK(e.detail() ==
        "the ici_*_parallelism values multiply to 255, not the 256 chips of a slice "
        "(-1 became 85: 256 is not a multiple of 3)");
}

TEST_CASE("maxtext mesh: no -1 and a wrong product is an error at the first value that is not 1", "[maxtext][mesh]") {
  const auto e = error_of("{ici_fsdp_parallelism: 8, ici_tensor_parallelism: 2}", 32);
  CHECK(e.key_path() == "config.ici_fsdp_parallelism");
  CHECK(e.detail() == "the ici_*_parallelism values multiply to 16, not the 32 chips of a slice");
}

TEST_CASE("maxtext mesh: two -1 in one group, and more than the chips", "[maxtext][mesh]") {
  const auto two = error_of("{ici_fsdp_parallelism: -1, ici_tensor_parallelism: -1}", 16);
  CHECK(two.key_path() == "config.ici_tensor_parallelism");
  CHECK(two.detail().find("a second -1 among the ici_*_parallelism values (the first is ici_fsdp_parallelism)") !=
        std::string::npos);
  const auto more = error_of("{ici_fsdp_parallelism: -1, ici_tensor_parallelism: 32}", 16);
  CHECK(more.detail().find("multiply to 32, more than the 16 chips of a slice") != std::string::npos);
}

TEST_CASE("maxtext mesh: DCN parallelism on one slice is refused, base.yml's dcn_data -1 is not", "[maxtext][mesh]") {
  const auto e = error_of("{dcn_fsdp_parallelism: 2}", 256);
  CHECK(e.key_path() == "config.dcn_fsdp_parallelism");
  CHECK(e.detail() == "DCN parallelism of 2 on a pod of one slice");
  CHECK_NOTHROW(load("{dcn_data_parallelism: -1}", 256));
}

TEST_CASE("maxtext mesh: 0 and -2 are not parallelism values", "[maxtext][mesh]") {
  CHECK(error_of("{ici_tensor_parallelism: 0}", 8).detail() == "expected -1 (fill) or a positive integer, got 0");
  CHECK(error_of("{ici_tensor_parallelism: -2}", 8).detail() == "expected -1 (fill) or a positive integer, got -2");
}

TEST_CASE("maxtext mesh: expert parallelism on both ICI and DCN is refused", "[maxtext][mesh]") {
  const auto e = error_of("{ici_fsdp_parallelism: -1, ici_expert_parallelism: 2, dcn_expert_parallelism: 2}", 32, 2);
  CHECK(e.key_path() == "config.dcn_expert_parallelism");
  CHECK(e.detail().find("expert parallelism can be on ICI or on DCN, not both") != std::string::npos);
}

}  // namespace test_maxtext_mesh
