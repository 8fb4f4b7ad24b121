// A pasted MaxText command line read into the keys load_maxtext_config takes.
#include <catch2/catch.hpp>

#include "sim/error.h"
#include "workloads/maxtext/command_line.h"
#include "workloads/maxtext/config.h"

namespace test_maxtext_command_line {

using workloads::parse_maxtext_command_line;

TEST_CASE("maxtext command line: key=value words after the launcher, flags from LIBTPU_INIT_ARGS",
          "[maxtext][command-line]") {
  // As the shell splits: LIBTPU_INIT_ARGS="--a=1 --b=2" python3 -m MaxText.train MaxText/configs/base.yml ...
  const auto cl = parse_maxtext_command_line(
      {"LIBTPU_INIT_ARGS=--xla_tpu_scoped_vmem_limit_kib=98304 --xla_enable_async_all_gather=true", "python3", "-m",
       "MaxText.train", "MaxText/configs/base.yml", "model_name=mistral-7b", "per_device_batch_size=6",
       "ici_fsdp_parallelism=-1", "remat_policy=custom", "decoder_layer_input=offload", "steps=20",
       "mlp_activations=[gelu]", "override_model_config=true"});
  CHECK(cl.has_xla_flags);
  CHECK(cl.xla_flags == "--xla_tpu_scoped_vmem_limit_kib=98304 --xla_enable_async_all_gather=true");
  REQUIRE(cl.config.keys().size() == 8);
  CHECK(cl.config["per_device_batch_size"].as_double() == 6.0);
  // What MaxText would run on a v6e-8: 48 sequences, the layer input offloaded.
  const sim::YamlNode flags = sim::YamlNode(YAML::Node(cl.xla_flags), "command line", "LIBTPU_INIT_ARGS");
  const auto cfg = workloads::load_maxtext_config(cl.config, &flags, 8, 1, false);
  CHECK(cfg.global_batch() == 48);
  CHECK(cfg.effective_remat().decoder_layer_input == workloads::TensorPlace::offload);
  CHECK(cfg.xla.scoped_vmem_limit_kib == 98304);
  // A flow list is a list: one activation, so no longer a gated MLP.
  CHECK_FALSE(cfg.model.gated_mlp());
}

TEST_CASE("maxtext command line: errors name the word, the key and its place", "[maxtext][command-line]") {
  try {
    parse_maxtext_command_line({"model_name=mistral-7b", "--steps", "5"});
    FAIL("no error");
  } catch (const sim::ConfigError& e) {
    CHECK(e.detail() == "expected key=value (a MaxText setting), got '--steps'");
  }
  // The second key=value word is line 2 of the command line's keys.
  const auto cl = parse_maxtext_command_line({"model_name=mistral-7b", "per_device_batch_sise=6"});
  try {
    workloads::load_maxtext_config(cl.config, nullptr, 8, 1);
    FAIL("no error");
  } catch (const sim::ConfigError& e) {
    CHECK(e.where().file == "command line");
    CHECK(e.where().line == 2);
    CHECK(e.key_path() == "per_device_batch_sise");
    CHECK(e.detail().find("did you mean 'per_device_batch_size'?") != std::string::npos);
  }
  // A key given twice is refused, as YAML would silently keep one.
  CHECK_THROWS_AS(parse_maxtext_command_line({"steps=1", "steps=2"}), sim::ConfigError);
}

}  // namespace test_maxtext_command_line
