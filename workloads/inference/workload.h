#pragma once
// `kind: inference`: serving a decoder Transformer (docs/serving.md). The
// prefill (the prompts' forward pass, writing the KV cache) and the mean
// decode step (one token per sequence, reading every weight and each
// sequence's KV cache) are each one pod run of the train kind's forward
// pass (build_forward_program). Memory (weights and the KV cache at its
// fullest) is checked before anything is simulated; what does not fit stops
// with sim::SimFailure (exit 3) naming the largest batch that fits, unless
// `simulate_anyway: true`.
#include <functional>
#include <memory>
#include <vector>

#include "workloads/experiment.h"
#include "workloads/inference/spec.h"
#include "workloads/workload.h"

namespace workloads {

std::unique_ptr<Workload> load_inference_workload(const sim::YamlNode& node, const Experiment& exp);

// Disaggregated serving on a data-center fabric it shares with other jobs
// (workloads/cluster/serving.h): what each KV transfer takes there, and the
// transfers as the stream ran them.
// The stream's steps' times by shape (one pod run each), kept across runs
// of one stream when a hook shares them.
struct StreamStepTimes;
std::shared_ptr<StreamStepTimes> make_stream_step_times();

struct KvTransferHook {
  // Request `request`'s transfer time, given its time with the DCN to
  // itself; unset: that time.
  std::function<double(std::size_t request, double alone_s)> time_s;
  std::vector<KvTransfer>* ran = nullptr;  // when given: StreamRun::transfers
  // Shared by the runs of one stream (its steps are the same shapes);
  // null: the run's own.
  std::shared_ptr<StreamStepTimes> steps;
  // Every step of the stream simulated with the whole model, none from a
  // run of its first blocks (step_time.h): what tests hold the probe to.
  bool whole_steps = false;
};

RunOutput run_inference(const Experiment& exp, const InferenceSpec& spec, const RunOptions& opts,
                        const KvTransferHook& hook = {});

// The spec a `kind: inference` workload runs; nullptr for another kind.
const InferenceSpec* inference_spec_of(const Workload& workload);

// What one chip keeps in HBM: its tensor-parallel share of the weights, and
// of the KV cache of its replica's sequences, each allocated for the
// model's context window (model.seq_len tokens), as a static cache is
// (JetStream's max_target_length); activations and workspaces are not
// counted. max_batch: the largest `batch` (over the pod, a multiple of the
// data degree) whose cache fits beside the weights; 0 when they alone do not.
struct InferenceMemory {
  std::uint64_t weights = 0, kv_cache = 0, capacity = 0, max_batch = 0;
  std::uint64_t total() const { return weights + kv_cache; }
};
InferenceMemory inference_memory(const Experiment& exp, const InferenceSpec& spec);

}  // namespace workloads
