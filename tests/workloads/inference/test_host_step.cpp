// The serving host's work per server step (the chip's host.serve_step) and
// where a server puts it (workload.scheduling; docs/serving.md
// "Host time per step"): a synchronous server's step takes device + host,
// an overlapped one's max(device, host). Each expectation is worked out by
// hand from the device steps of a run without host time: the phases' steps,
// and a stream's makespan, which grows by the host's time once per step.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "serving_model.h"
#include "sim/error.h"
#include "workloads/experiment_fixture.h"

namespace test_host_step {

using namespace testing_serving;
using testing_workloads::run;
using testing_workloads::write_yaml;

const Dense kTiny{2, 512, 1024, 8, 2, 64, 32000};

// A tiny model served on one v5e whose host takes `host_s` a step.
std::string served(const std::string& name, double host_s, const std::string& scheduling, const std::string& rest) {
  return write_yaml(name, "name: " + name + "\nchip: {base: tpu-v5e, host: {serve_step: " + std::to_string(host_s) +
                              "}}\nworkload:\n  kind: inference\n  model: " + kTiny.yaml(256) +
                              "\n  scheduling: " + scheduling + "\n" + rest);
}

const std::string kBatch = "  batch: 4\n  prompt_len: 64\n  decode_len: 8\n";

TEST_CASE("host step: a synchronous server adds the host's work to every step", "[inference][host]") {
  const nlohmann::json none = run(served("none", 0, "sync", kBatch))["result"]["inference"];
  const double prefill = none["prefill"]["step_s"].get<double>(), decode = none["decode"]["step_s"].get<double>();
  CHECK(none["ttft_s"].get<double>() == prefill);
  CHECK(none["tpot_s"].get<double>() == decode);
  CHECK(none["host_step_s"].get<double>() == 0);

  const double h = 0.002;
  const nlohmann::json sync = run(served("sync", h, "sync", kBatch))["result"]["inference"];
  CHECK(sync["scheduling"] == "sync");
  CHECK(sync["host_step_s"].get<double>() == Approx(h));
  CHECK(sync["decode"]["step_s"].get<double>() == decode);  // the device's step does not move
  CHECK(sync["ttft_s"].get<double>() == Approx(prefill + h).epsilon(1e-12));
  CHECK(sync["tpot_s"].get<double>() == Approx(decode + h).epsilon(1e-12));
  // 4 sequences x 8 tokens over the prefill and 8 decode steps.
  CHECK(sync["tokens_per_s"].get<double>() == Approx(32.0 / (prefill + h + 8 * (decode + h))).epsilon(1e-12));
}

TEST_CASE("host step: an overlapped server pays the host's work only past the device's", "[inference][host]") {
  const nlohmann::json none = run(served("none-async", 0, "async", kBatch))["result"]["inference"];
  const double prefill = none["prefill"]["step_s"].get<double>(), decode = none["decode"]["step_s"].get<double>();
  // Shorter than both steps: hidden.
  const double small = 0.5 * std::min(prefill, decode);
  const nlohmann::json hidden = run(served("hidden", small, "async", kBatch))["result"]["inference"];
  CHECK(hidden["ttft_s"].get<double>() == Approx(prefill).epsilon(1e-12));
  CHECK(hidden["tpot_s"].get<double>() == Approx(decode).epsilon(1e-12));
  // Longer than both: every step takes the host's time.
  const double big = 0.5;
  REQUIRE(big > prefill);
  REQUIRE(big > decode);
  const nlohmann::json bound = run(served("host-bound", big, "async", kBatch))["result"]["inference"];
  CHECK(bound["scheduling"] == "async");
  CHECK(bound["ttft_s"].get<double>() == Approx(big));
  CHECK(bound["tpot_s"].get<double>() == Approx(big));
}

TEST_CASE("host step: a stream pays the host once per step", "[inference][host][stream]") {
  // Four requests at once into four slots: one prefill of the four, then
  // eight decode steps.
  const std::string stream = kBatch + "  requests: {count: 4, prompt_len: 64, decode_len: 8}\n";
  const nlohmann::json none = run(served("stream-none", 0, "sync", stream))["result"]["inference"]["stream"];
  REQUIRE(none["prefill_steps"] == 1);
  REQUIRE(none["decode_steps"] == 8);
  const double h = 0.003;
  const nlohmann::json sync = run(served("stream-sync", h, "sync", stream))["result"]["inference"]["stream"];
  CHECK(sync["makespan_s"].get<double>() == Approx(none["makespan_s"].get<double>() + 9 * h).epsilon(1e-12));
  CHECK(sync["tpot_s"]["mean"].get<double>() == Approx(none["tpot_s"]["mean"].get<double>() + h).epsilon(1e-12));
  CHECK(sync["ttft_s"]["mean"].get<double>() == Approx(none["ttft_s"]["mean"].get<double>() + h).epsilon(1e-12));
  // Overlapped, with the host slower than every step: nine steps of h.
  const double big = 0.5;
  const nlohmann::json bound = run(served("stream-async", big, "async", stream))["result"]["inference"]["stream"];
  CHECK(bound["makespan_s"].get<double>() == Approx(9 * big));
  CHECK(bound["tpot_s"]["mean"].get<double>() == Approx(big));
  CHECK(bound["itl_s"]["p99"].get<double>() == Approx(big));
}

TEST_CASE("host step: a chunked step that prefills and decodes pays once", "[inference][host][stream]") {
  // Two prompts of 64 tokens, a 40-token budget, two slots: the steps that
  // run chunks beside decoding tokens are one server step each, so the
  // makespan grows by h per distinct step (prefill steps + decode steps -
  // the mixed ones, counted in both).
  const std::string stream =
      "  batch: 2\n  prompt_len: 64\n  decode_len: 6\n  requests: {count: 2, prompt_len: 64, "
      "decode_len: 6, chunked_prefill: {max_batched_tokens: 40}}\n";
  const nlohmann::json none = run(served("chunked-none", 0, "sync", stream))["result"]["inference"]["stream"];
  const std::uint64_t steps = none["prefill_steps"].get<std::uint64_t>() + none["decode_steps"].get<std::uint64_t>() -
                              none["chunked_prefill"]["mixed_steps"].get<std::uint64_t>();
  REQUIRE(none["chunked_prefill"]["mixed_steps"].get<std::uint64_t>() > 0);
  const double h = 0.004;
  const nlohmann::json sync = run(served("chunked-sync", h, "sync", stream))["result"]["inference"]["stream"];
  CHECK(sync["makespan_s"].get<double>() ==
        Approx(none["makespan_s"].get<double>() + double(steps) * h).epsilon(1e-12));
}

TEST_CASE("host step: a scheduling the server does not have is refused at its key", "[inference][host]") {
  try {
    run(served("bad", 0, "overlapped", kBatch));
    FAIL("expected a ConfigError");
  } catch (const sim::ConfigError& e) {
    CHECK(e.key_path() == "workload.scheduling");
    CHECK(std::string(e.what()).find("async") != std::string::npos);
  }
}

}  // namespace test_host_step
