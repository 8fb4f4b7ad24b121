// A stream step's time from a run of its first three blocks
// (workloads/inference/step_time.h) against the whole model's pod run, to
// the picosecond: decode, prefill and mixed steps over one chip, over
// tensor-parallel chips whose reductions differ (every chip simulated) and
// over data-parallel replicas (one chip per group); models whose blocks
// differ run whole; a step the whole run would stop (simulated time,
// events, host memory) stops as it would; and whole streams with the
// probe and without it give the same report.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "models/transformer.h"
#include "runtime/pod_run.h"
#include "sim/error.h"
#include "workloads/experiment_fixture.h"
#include "workloads/inference/step_time.h"
#include "workloads/inference/workload.h"

namespace test_step_time {

using namespace workloads;
using testing_workloads::write_yaml;

namespace {

// A small Llama-shaped model of `layers` blocks (`model` more keys of its
// mapping) on `pod`, as `parallelism` serves it, with `requests` when given.
Experiment serving(const std::string& name, std::uint64_t layers, const std::string& pod,
                   const std::string& parallelism, const std::string& model = "", const std::string& requests = "") {
  const std::string path = write_yaml(name, "chip: " + nominal_chip::chip("tpu-v5e") + "\nfidelity: kernel\n" + pod +
                                                R"(
workload:
  kind: inference
  model: {type: transformer, layers: )" + std::to_string(layers) +
                                                R"(, d_model: 1024, d_ff: 3584, heads: 16,
          kv_heads: 8, head_dim: 64, seq_len: 1024, vocab: 32000, tied_embeddings: false, mlp: swiglu,
          attention: flash)" + model + R"(}
  batch: 8
  prompt_len: 256
  decode_len: 32
  phase: both
  parallelism: )" + parallelism + (requests.empty() ? "" : "\n  requests: " + requests) +
                                                "\n");
  return load_experiment(path, {});
}

const InferenceSpec& spec_of(const Experiment& exp) { return *inference_spec_of(*exp.workload); }

// The three kinds of step a stream asks for.
std::vector<StepModel> steps() {
  return {
      [](const models::TransformerConfig& c) { return models::build_transformer_decode(c, 8, 300); },
      [](models::TransformerConfig c) {
        c.seq_len = 128;
        return models::build_transformer_prefill(c, 2);
      },
      [](const models::TransformerConfig& c) {
        return models::build_transformer_mixed(c, 3, 290, {{100, 0}, {60, 200}});
      },
  };
}

const char* const kOneChip = "pod: {topology: ring, shape: [1], wraparound: [false]}\nmesh: {model: 1}";
const char* const kTensor8 = "pod: {topology: torus2d, shape: [2, 4], wraparound: [false, false]}\nmesh: {model: 8}";
const char* const kData2 = "pod: {topology: ring, shape: [2], wraparound: [false]}\nmesh: {data: 2}";

}  // namespace

TEST_CASE("step time: three blocks give the whole model's step to the picosecond", "[inference][step_time]") {
  struct Case {
    const char* name;
    const char* pod;
    const char* parallelism;
  };
  for (const Case& c : {Case{"one-chip", kOneChip, "{tensor: model}"}, Case{"tensor-8", kTensor8, "{tensor: model}"},
                        Case{"data-2", kData2, "{data: data}"}}) {
    const Experiment exp = serving(std::string("probe-") + c.name, 12, c.pod, c.parallelism);
    for (const StepModel& m : steps()) {
      INFO(c.name);
      const StepTime probed = step_time(exp, spec_of(exp), m);
      const StepTime whole = step_time(exp, spec_of(exp), m, true);
      CHECK(probed.probed);
      CHECK_FALSE(whole.probed);
      CHECK(probed.s == whole.s);
      CHECK(whole.s > 0);
    }
  }
}

TEST_CASE("step time: models whose blocks differ, and short ones, run whole", "[inference][step_time]") {
  const StepModel decode = steps()[0];
  // A mixture of experts routes each block's tokens by its own draw.
  const Experiment moe = serving("probe-moe", 8, kOneChip, "{tensor: model}",
                                 ", experts: 4, top_k: 2, routing: {distribution: zipf, skew: 0, seed: 3}");
  // Gemma 2's pattern: every second block global.
  const Experiment windows =
      serving("probe-windows", 8, kOneChip, "{tensor: model}", ", sliding_window: 128, sliding_window_pattern: 2");
  const Experiment three = serving("probe-three", 3, kOneChip, "{tensor: model}");
  for (const Experiment* exp : {&moe, &windows, &three}) CHECK_FALSE(step_time(*exp, spec_of(*exp), decode).probed);
  // Every block local (Mistral's): alike.
  const Experiment local = serving("probe-local", 8, kOneChip, "{tensor: model}", ", sliding_window: 128");
  const StepTime s = step_time(local, spec_of(local), decode);
  CHECK(s.probed);
  CHECK(s.s == step_time(local, spec_of(local), decode, true).s);
}

TEST_CASE("step time: a step the whole run would stop at stops as it does", "[inference][step_time]") {
  const StepModel decode = steps()[0];
  Experiment exp = serving("probe-limits", 12, kTensor8, "{tensor: model}");
  const InferenceSpec& spec = spec_of(exp);
  const models::ModelSpec model = decode(spec.model.transformer);
  const StepProgram whole = step_program(exp, spec, model, {});
  const runtime::PodRunResult r = runtime::run_pod(whole.config, whole.program.pod, false);
  const auto message = [&](bool whole_run) {
    try {
      step_time(exp, spec, decode, whole_run);
    } catch (const sim::SimFailure& e) {
      return std::string(e.what());
    }
    return std::string("no failure");
  };
  SECTION("simulated time: just short of the whole step, past the probe's") {
    exp.limits.max_sim_time_s = r.step_time_s * 0.99;
    CHECK(message(true) != "no failure");
    CHECK(message(false) == message(true));
  }
  SECTION("events: half the whole step's, more than the probe's") {
    exp.limits.max_events = (r.kernel_events + r.network_events) / 2;
    CHECK(message(true) != "no failure");
    CHECK(message(false) == message(true));
  }
  SECTION("host memory: the whole program's estimate names its own ops") {
    exp.limits.max_memory_bytes = 1e5;
    CHECK(message(true) != "no failure");
    CHECK(message(false) == message(true));
  }
}

TEST_CASE("step time: streams with and without the probe give one report", "[inference][step_time][stream]") {
  struct Case {
    const char* name;
    const char* pod;
    const char* parallelism;
    const char* requests;
  };
  const char* const two_slices =
      "pod: {slices: 2, slice: {topology: torus2d, shape: [2, 2], wraparound: [false, false]}, dcn_axes: [dcn]}\n"
      "mesh: {model: 4, dcn: 2}";
  for (const Case& c : {Case{"chunked", kTensor8, "{tensor: model}",
                             "{count: 10, rate: 400, prompt_len: [64, 300], decode_len: [8, 16], "
                             "chunked_prefill: {max_batched_tokens: 128}}"},
                        Case{"continuous", kData2, "{data: data}",
                             "{count: 10, rate: 400, prompt_len: [64, 300], decode_len: [8, 16]}"},
                        Case{"disaggregated", two_slices, "{tensor: model, data: dcn}",
                             "{count: 8, rate: 400, prompt_len: [64, 300], decode_len: [8, 16], prefill_chips: 4}"}}) {
    INFO(c.name);
    const Experiment exp = serving(std::string("probe-stream-") + c.name, 12, c.pod, c.parallelism, "", c.requests);
    const auto report = [&exp](bool whole) {
      KvTransferHook hook;
      hook.whole_steps = whole;
      nlohmann::json r = run_inference(exp, spec_of(exp), RunOptions{}, hook).report;
      r.erase("simulator");  // host time and memory
      return r;
    };
    const nlohmann::json probed = report(false);
    CHECK(probed.at("result").at("inference").at("stream").at("steps_simulated").get<int>() > 4);
    CHECK(probed == report(true));
  }
}

}  // namespace test_step_time
