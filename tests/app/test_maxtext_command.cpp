// `tpusim maxtext` (app/cmd_maxtext.cpp): a pasted MaxText launch runs as the
// experiment file with the same keys does (two front ends, one answer), the
// experiment it writes repeats the run, --chips lays out the chip's slice,
// and bad words, chips and options are located errors (exit 2).
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace test_maxtext_command {

using testing_cli::read_report;
using testing_cli::run_tpusim;
using testing_cli::TempDir;

namespace {

// configs/experiments/maxtext-llama3.1-70b-v6e-64.yaml's keys as a MaxText
// launch would give them (its flags but one: the result may not depend on
// the order words come in, only on what they say).
const std::string kLaunch =
    "'LIBTPU_INIT_ARGS=--xla_tpu_scoped_vmem_limit_kib=98304 --xla_tpu_use_minor_sharding_for_major_trivial_input=true "
    "--xla_tpu_relayout_group_size_threshold_for_reduce_scatter=1 --xla_tpu_assign_all_reduce_scatter_layout=true "
    "--xla_tpu_enable_data_parallel_all_reduce_opt=true --xla_tpu_data_parallel_opt_different_sized_ops=true "
    "--xla_tpu_enable_async_collective_fusion=true --xla_tpu_enable_async_collective_fusion_fuse_all_gather=true "
    "--xla_tpu_enable_async_collective_fusion_multiple_steps=true --xla_tpu_overlap_compute_collective_tc=true "
    "--xla_enable_async_all_gather=true --xla_tpu_enable_all_experimental_scheduler_features=true "
    "--xla_tpu_enable_scheduler_memory_pressure_tracking=true --xla_tpu_host_transfer_overlap_limit=24 "
    "--xla_tpu_aggressive_opt_barrier_removal=ENABLED --xla_lhs_prioritize_async_depth_over_stall=ENABLED "
    "--xla_tpu_enable_ag_backward_pipelining=true --xla_should_allow_loop_variant_parameter_in_chain=ENABLED "
    "--xla_should_add_loop_invariant_op_in_chain=ENABLED --xla_max_concurrent_host_send_recv=100 "
    "--xla_tpu_scheduler_percent_shared_memory_limit=100 --xla_latency_hiding_scheduler_rerun=2' "
    "python3 -m MaxText.train MaxText/configs/base.yml model_name=llama3.1-70b per_device_batch_size=2 "
    "ici_fsdp_parallelism=-1 remat_policy=custom decoder_layer_input=offload query_proj=offload key_proj=offload "
    "value_proj=offload max_target_length=8192 attention=flash use_iota_embed=true sa_block_q=2048 sa_block_kv=2048 "
    "sa_block_kv_compute=2048 sa_block_q_dkv=2048 sa_block_kv_dkv=2048 sa_block_kv_dkv_compute=2048 "
    "sa_block_q_dq=2048 sa_block_kv_dq=2048 sa_use_fused_bwd_kernel=true steps=30 base_output_directory=gs://x";

}  // namespace

TEST_CASE("maxtext command: a pasted launch runs as the experiment file with its keys does", "[app][maxtext]") {
  TempDir dir("maxtext-command");
  const auto file = run_tpusim("run configs/experiments/maxtext-llama3.1-70b-v6e-64.yaml --out " + dir / "file");
  INFO(file.output);
  REQUIRE(file.status == 0);
  const auto cl = run_tpusim("maxtext --chip tpu-v6e --pod 8x8 --out " + dir / "cl" + " " + kLaunch);
  INFO(cl.output);
  REQUIRE(cl.status == 0);
  const nlohmann::json a = read_report(dir / "file"), b = read_report(dir / "cl");
  CHECK(b["result"]["step_time_s"] == a["result"]["step_time_s"]);
  CHECK(b["result"]["mfu"] == a["result"]["mfu"]);
  CHECK(b["result"]["memory"] == a["result"]["memory"]);
  CHECK(b["result"]["flops"] == a["result"]["flops"]);
  // Trusted as the training step it is: the v6e training cases' error,
  // on the terminal and in the report (it said "no measured  run").
  CHECK(b["result"]["validation"]["group"] == "train/v6e");
  CHECK(cl.output.find("(validated on ") != std::string::npos);
  // Two keys without effect more than the file has: steps and the output path.
  const auto& ignored = b["result"]["ignored_keys"];
  CHECK(ignored.size() == a["result"]["ignored_keys"].size() + 2);
  // The experiment it wrote repeats it.
  const auto again = run_tpusim("run " + dir / "cl/experiment.yaml" + " --out " + dir / "again");
  INFO(again.output);
  REQUIRE(again.status == 0);
  CHECK(read_report(dir / "again")["result"]["step_time_s"] == b["result"]["step_time_s"]);
}

TEST_CASE("maxtext command: --chips lays out the chip's squarest slice, wrapping by its rules", "[app][maxtext]") {
  TempDir dir("maxtext-chips");
  // 256 v6e chips: a 16x16 torus, both axes of 16 wrapping
  // (docs/reference/tpu-specs.md#common.wraparound_rules).
  const auto r = run_tpusim("maxtext --chip tpu-v6e --chips 256 --out " + dir / "o" +
                            " model_name=llama3.1-8b per_device_batch_size=1 max_target_length=2048 "
                            "ici_fsdp_parallelism=-1 remat_policy=full");
  INFO(r.output);
  REQUIRE(r.status == 0);
  std::ifstream in(dir / "o/experiment.yaml");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("pod: {topology: torus2d, shape: [16, 16], wraparound: [true, true]}") != std::string::npos);
}

TEST_CASE("maxtext command: bad words, chips and options are located errors, exit 2", "[app][maxtext]") {
  TempDir dir("maxtext-bad");
  const std::string out = " --out " + dir / "o";
  // The second key=value word: "command line:2".
  const auto key = run_tpusim("maxtext --chip tpu-v6e --pod 2x4" + out +
                              " model_name=mistral-7b per_device_batch_sise=6 max_target_length=2048");
  INFO(key.output);
  CHECK(key.status == 2);
  CHECK(key.output.find("command line:2:") != std::string::npos);
  CHECK(key.output.find("did you mean 'per_device_batch_size'") != std::string::npos);
  const auto chip = run_tpusim("maxtext --chip tpu-v6 --pod 2x4" + out + " model_name=mistral-7b");
  INFO(chip.output);
  CHECK(chip.status == 2);
  CHECK(chip.output.find("tpu-v6e") != std::string::npos);
  const auto both = run_tpusim("maxtext --chip tpu-v6e --pod 2x4 --chips 8" + out + " model_name=mistral-7b");
  CHECK(both.status == 2);
  const auto shape = run_tpusim("maxtext --chip tpu-v6e --pod 2by4" + out + " model_name=mistral-7b");
  INFO(shape.output);
  CHECK(shape.status == 2);
  CHECK(shape.output.find("--pod: expected a whole number") != std::string::npos);
}

}  // namespace test_maxtext_command
