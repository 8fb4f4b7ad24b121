#pragma once
// Functional mini-training (docs/training.md, "Functional mini-training"):
// `functional: true` on a `kind: train` MLP under pure data parallelism.
//
// Every step, each chip runs the forward and backward pass of the MLP on its
// shard of the batch with the MXU's arithmetic (BF16 operands, FP32
// accumulation via hw::mxu_mul / hw::mxu_add; activations and gradients
// stored as BF16, FP32 master weights), softmax cross-entropy against
// synthetic labels. The pod simulation of the step then runs once, and the
// gradient all-reduce CommOps the program builder emits per layer carry the
// values: input = the chip's local BF16 gradient of that layer (weights
// row-major, then bias), output = the sum over the replicas, which each chip
// divides by the data degree and applies with SGD (w -= lr * g, FP32). With
// `parallelism.sync_gradients: false` the program has no gradient collective
// and each chip applies its own gradient. The data (inputs, labels, initial
// weights) are seeded by `workload.seed` and identical on every chip, so
// the same run gives the same bits.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <vector>

#include "hw/bf16.h"
#include "runtime/pod_run.h"
#include "sim/yaml_node.h"
#include "workloads/experiment.h"
#include "workloads/report.h"
#include "workloads/train/layout.h"
#include "workloads/train/spec.h"

namespace workloads {

struct TrainProgram;

// Sets spec.functional.enabled; refuses `steps`, `learning_rate` and `seed`
// (read by train_params()) without functional training and, when
// exp.functional, checks that the experiment is one functional training can
// run (MLP with relu, pure data parallelism, sgd, small enough); throws
// sim::ConfigError located at the offending key.
void load_functional_training(const sim::YamlNode& node, const Experiment& exp, TrainSpec& spec);

// Per dense layer: FP32 weights (in x out, row-major) and bias (out).
struct MlpWeights {
  std::vector<std::vector<float>> w, b;
};

// What every run starts from, from spec.functional.seed: inputs uniform in
// [-1, 1) (BF16), labels = argmax of a random linear teacher's scores,
// weights uniform in +-sqrt(6 / (in + out)) rounded to BF16 values (so a
// reference in any precision starts from the same numbers), biases 0.
struct FunctionalTrainData {
  std::vector<std::uint64_t> widths;
  std::vector<hw::bf16> x;            // global_batch x widths[0], row-major
  std::vector<std::uint32_t> labels;  // global_batch
  MlpWeights initial;
};
FunctionalTrainData make_functional_train_data(const TrainSpec& spec);

// One chip's forward and backward over samples [begin, end): mean loss over
// them and, per dense layer, the BF16 gradient of that mean (w then b).
struct LocalStep {
  double loss = 0;
  std::vector<std::vector<hw::bf16>> grads;
};
LocalStep functional_local_step(const FunctionalTrainData& data, const MlpWeights& weights, std::uint64_t begin,
                                std::uint64_t end);

struct FunctionalTrainResult {
  std::uint32_t steps = 0;
  std::vector<double> loss_per_step;    // mean over the global batch before each step's update
  double final_loss = 0;                // after the last update
  std::vector<MlpWeights> weights;      // per chip, after the steps
  MlpWeights first_step;                // chip 0 after step 1
  double replicas_max_weight_diff = 0;  // max over parameters of max - min across chips
  // With sync: chip 0's weights after step 1 against a double-precision
  // step on the whole batch, |diff| <= 2^-4 * lr * max |g_ref| per weight
  // (an empirical bound: BF16 roundings before sums that cancel; measured
  // 0.15% to 4.5% of lr * max |g_ref|, docs/training.md).
  bool reference_checked = false;
  double reference_max_abs_diff = 0, reference_bound = 0;
  bool matches_reference = false;
  runtime::PodRunResult last_run;  // the last step's simulation (every step's is the same)
};

// Runs spec.functional.steps steps, one pod simulation each, with
// runtime::CollectiveData hooks on the program's gradient all-reduces.
FunctionalTrainResult run_train_functional(const Experiment& exp, const TrainSpec& spec, const TrainLayout& layout,
                                           TrainProgram& program);

// result.functional of report.json (docs/training.md).
TrainFunctional functional_train_report(const FunctionalTrainResult& r, const TrainSpec& spec);

}  // namespace workloads
