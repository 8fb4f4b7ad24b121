// The key walk: every key an input file accepts either changes what the
// simulator reports or is declared informational in its sim::ParamTable
// (issue 17: `ici.links_per_chip` was documented, accepted and ignored).
//
// For each key of the chip, experiment, pod, multislice and workload
// tables, the walk takes small probe experiments where the key can matter
// (every probe for chip, pod and experiment keys; the probes of its kind
// for workload keys), changes the key's value there with --set (a number
// doubled, halved, ...; a flag flipped; every other word of an enum; for
// lists, mappings and names the values below) and compares the report with
// the probe's own. A key acts when some change moves a simulated figure, or
// ends the run with exit 3 (a limit or "does not fit"); a change refused
// with exit 2 is an invalid value, and the walk tries the next one.
//
// What is compared is what the simulator computed: the report without its
// echo of the input (`experiment`, `pod`, result.model / parallelism /
// precision / roofline peaks) and without host fields (wall time, memory).
// The sweep file's keys drive sweeps, not one simulation; tests/app/
// test_sweep_cli.cpp covers them.
#include <yaml-cpp/yaml.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "config_topics.h"
#include "host_fields.h"

namespace test_key_walk {

using testing_cli::run_tpusim;
namespace fs = std::filesystem;

namespace {

struct Probe {
  std::string name;
  std::string kind;  // workload kind
  bool multislice;
  std::string yaml;
};

// Small experiments, seconds in all. Chips and pods named by file are
// inlined, so that --set reaches their keys.
const Probe kProbes[] = {
    {"matmul", "matmul", false, "chip: tpu-v4\nworkload: {kind: matmul, m: 200, k: 384, n: 300}\n"},
    {"matmul-blocked", "matmul", false,
     "chip: tpu-v4\nworkload: {kind: matmul, m: 1000, k: 2048, n: 3000, block: {bm: 512, bk: 1024, bn: 512}}\n"},
    {"matmul-tile", "matmul", false,
     "chip: tpu-v5e\nfidelity: tile\nworkload: {kind: matmul, m: 512, k: 1024, n: 640}\n"},
    {"matmul-int8", "matmul", false,
     "chip: tpu-v5e\nfidelity: tile\nworkload: {kind: matmul, m: 256, k: 512, n: 384, dtype: int8}\n"},
    {"matmul-fp8", "matmul", false,
     "chip: tpu-v5p\nfidelity: tile\nworkload: {kind: matmul, m: 256, k: 512, n: 384, dtype: fp8}\n"},
    {"matmul-pe", "matmul", false,
     "chip: teach-8x8\nfidelity: pe\nfunctional: true\nworkload: {kind: matmul, m: 24, k: 40, n: 16}\n"},
    {"collective", "collective", false,
     "chip: tpu-v5e\npod: {topology: ring, shape: [8], wraparound: [true]}\n"
     "workload: {kind: collective, op: all_reduce, bytes: 1000008, algorithm: ring}\n"},
    {"collective-torus", "collective", false,
     "chip: tpu-v4\npod: v4-2x2x1\nworkload: {kind: collective, op: all_reduce, bytes: 4194304}\n"},
    {"broadcast", "collective", false,
     "chip: tpu-v5e\npod: {topology: ring, shape: [8], wraparound: [false]}\n"
     "workload: {kind: collective, op: broadcast, bytes: 1048576, root: 0}\n"},
    {"permute", "collective", false,
     "chip: tpu-v5e\npod: {topology: ring, shape: [8], wraparound: [false]}\n"
     "workload: {kind: collective, op: permute, bytes: 1048576}\n"},
    {"sharded", "sharded_matmul", false,
     "chip: tpu-v5e\npod: {topology: torus2d, shape: [2, 4], wraparound: [false, false]}\n"
     "mesh: {model: 2, data: 4}\n"
     "workload: {kind: sharded_matmul, m: 4096, k: 2048, n: 2048, a_spec: [data, model], b_spec: [null, model],\n"
     "           out_spec: [data, model]}\n"},
    {"sharded-functional", "sharded_matmul", false,
     "chip: tpu-v5e\npod: {topology: torus2d, shape: [2, 2], wraparound: [false, false]}\n"
     "mesh: {model: 2, data: 2}\nfunctional: true\n"
     "workload: {kind: sharded_matmul, m: 64, k: 32, n: 48, a_spec: [data, model], b_spec: [model, null]}\n"},
    {"train-mlp-functional", "train", false,
     "chip: tpu-v5e\npod: {topology: torus2d, shape: [2, 2], wraparound: [false, false]}\nmesh: {data: 4}\n"
     "functional: true\n"
     "workload: {kind: train, model: {type: mlp, widths: [16, 32, 8], activation: relu}, global_batch: 32,\n"
     "           optimizer: sgd, steps: 2, learning_rate: 0.5, seed: 7}\n"},
    // Tied, so that embedding_shard acts (its logits split over the vocabulary or d_model).
    {"train-transformer", "train", false,
     "chip: tpu-v5e\npod: v5e-4x4\nmesh: {model: 4, data: 4}\n"
     "workload: {kind: train, model: {type: transformer, layers: 2, d_model: 512, d_ff: 2048, heads: 8,\n"
     "           head_dim: 64, seq_len: 256, vocab: 4096, kv_heads: 4, tied_embeddings: true}, global_batch: 32,\n"
     "           parallelism: {data: data, tensor: model, microbatches: 2}, optimizer: adam}\n"},
    {"train-sequence", "train", false,
     "chip: tpu-v5e\npod: {topology: ring, shape: [4], wraparound: [true]}\nmesh: {model: 4}\n"
     "workload: {kind: train, model: {type: transformer, layers: 1, d_model: 512, d_ff: 2048, heads: 8,\n"
     "           head_dim: 64, seq_len: 256, vocab: 4096}, global_batch: 4,\n"
     "           parallelism: {tensor: model, sequence: true}, optimizer: adam}\n"},
    // eager_dispatch acts only in an eager step.
    {"train-eager", "train", false,
     "chip: tpu-v5e\npod: {topology: ring, shape: [4], wraparound: [true]}\nmesh: {data: 4}\n"
     "workload: {kind: train, model: {type: mlp, widths: [256, 512, 256]}, global_batch: 64, optimizer: sgd,\n"
     "           execution: eager}\n"},
    // Two axes, so that parallelism.expert_all_to_all (one phase per axis) acts.
    {"train-moe", "train", false,
     "chip: tpu-v4\npod: {topology: torus2d, shape: [2, 2], wraparound: [false, false]}\nmesh: {expert: 4}\n"
     "workload: {kind: train, model: {type: transformer, layers: 1, d_model: 256, d_ff: 1024, heads: 4,\n"
     "           head_dim: 64, seq_len: 128, vocab: 1024, experts: 4, top_k: 2, capacity_factor: 1.0,\n"
     "           shared_experts: 1, expert_d_ff: 512, routing: {distribution: zipf, skew: 1.0, seed: 3}},\n"
     "           global_batch: 8, parallelism: {expert: expert}, optimizer: adam}\n"},
    {"train-input", "train", false,
     "chip: tpu-v4\npod: {topology: ring, shape: [2], wraparound: [false]}\nmesh: {data: 2}\n"
     "workload: {kind: train, model: {type: transformer, layers: 1, d_model: 256, d_ff: 1024, heads: 4,\n"
     "           head_dim: 64, seq_len: 512, vocab: 1024}, global_batch: 4, optimizer: adam,\n"
     "           input: {distribution: lognormal, median: 200, seed: 3}}\n"},
    {"train-pipeline", "train", false,
     "chip: tpu-v5e\npod: {topology: torus2d, shape: [2, 2], wraparound: [false, false]}\nmesh: {pipe: 4}\n"
     "workload: {kind: train, model: {type: mlp, widths: [256, 256, 256, 256, 256, 256, 256, 256, 256, 256, 256,\n"
     "           256, 256, 256, 256, 256, 256]}, global_batch: 256,\n"
     "           parallelism: {pipeline: pipe, microbatches: 8, virtual_stages: 2, schedule: interleaved},\n"
     "           optimizer: adam}\n"},
    {"train-fsdp-v3", "train", false,
     "chip: tpu-v3\npod: {topology: torus2d, shape: [2, 2], wraparound: [false, false]}\nmesh: {data: 8}\n"
     "workload: {kind: train, model: {type: transformer, layers: 2, d_model: 256, d_ff: 1024, heads: 4,\n"
     "           head_dim: 64, seq_len: 128, vocab: 1024}, global_batch: 16,\n"
     "           parallelism: {fsdp: data}, remat: full, optimizer: adam}\n"},
    // On a chip with SparseCores, with gathers, reduce-scatters and
    // all-reduces, so that each parallelism.sparsecore_offload key acts.
    {"train-fsdp-sparsecore", "train", false,
     "chip: tpu-v5p\npod: {topology: torus2d, shape: [2, 2], wraparound: [false, false]}\nmesh: {data: 2, fsdp: 2}\n"
     "workload: {kind: train, model: {type: transformer, layers: 1, d_model: 256, d_ff: 1024, heads: 4,\n"
     "           head_dim: 64, seq_len: 128, vocab: 1024}, global_batch: 8,\n"
     "           parallelism: {data: data, fsdp: fsdp}, optimizer: adam}\n"},
    {"train-context", "train", false,
     "chip: tpu-v4\npod: {topology: ring, shape: [4], wraparound: [true]}\nmesh: {ctx: 4}\n"
     "workload: {kind: train, model: {type: transformer, layers: 1, d_model: 256, d_ff: 1024, heads: 4,\n"
     "           head_dim: 64, seq_len: 512, vocab: 1024, attention: flash}, global_batch: 2,\n"
     "           parallelism: {context: ctx}, optimizer: adam}\n"},
    {"train-offload", "train", false,
     "chip: tpu-v4\n"
     "workload: {kind: train, model: {type: transformer, layers: 2, d_model: 256, d_ff: 1024, heads: 4,\n"
     "           head_dim: 64, seq_len: 128, vocab: 1024}, global_batch: 2, remat: offload}\n"},
    // 1.6 B parameters with Adam on one 16 GiB v5e: does not fit, run anyway.
    {"train-over-hbm", "train", false,
     "chip: tpu-v5e\n"
     "workload: {kind: train, model: {type: transformer, layers: 2, d_model: 8192, d_ff: 32768, heads: 64,\n"
     "           head_dim: 128, seq_len: 128, vocab: 4096}, global_batch: 1, simulate_anyway: true}\n"},
    {"inference", "inference", false,
     "chip: tpu-v5e\npod: {topology: torus2d, shape: [2, 2], wraparound: [false, false]}\nmesh: {model: 2, data: 2}\n"
     "workload: {kind: inference, model: {type: transformer, layers: 2, d_model: 512, d_ff: 2048, heads: 8,\n"
     "           head_dim: 64, seq_len: 512, vocab: 4096, kv_heads: 4, tied_embeddings: true}, batch: 8,\n"
     "           prompt_len: 128, decode_len: 32,\n"
     "           parallelism: {data: data, tensor: model}}\n"},
    {"inference-stream", "inference", false,
     "chip: tpu-v5e\npod: {topology: torus2d, shape: [2, 2], wraparound: [false, false]}\nmesh: {model: 2, data: 2}\n"
     "workload: {kind: inference, model: {type: transformer, layers: 2, d_model: 512, d_ff: 2048, heads: 8,\n"
     "           head_dim: 64, seq_len: 512, vocab: 4096, kv_heads: 4}, batch: 4, prompt_len: 128, decode_len: 32,\n"
     "           parallelism: {data: data, tensor: model},\n"
     "           requests: {count: 8, rate: 400, prompt_len: [64, 128], decode_len: [16, 32], seed: 3}}\n"},
    // A host with work per step, so that workload.scheduling (where a
    // server puts it) acts.
    {"inference-host", "inference", false,
     "chip: {base: tpu-v5e, host: {serve_step: 1.0e-3}}\n"
     "workload: {kind: inference, model: {type: transformer, layers: 2, d_model: 256, d_ff: 1024, heads: 4,\n"
     "           head_dim: 64, seq_len: 256, vocab: 1024}, batch: 2, prompt_len: 100, decode_len: 16}\n"},
    // Single chips, so that a grouped expert matmul (one matmul over all the
    // experts' tokens, 100 each, in whole tiles of grouped_tile rows) is not
    // the batched one;
    // latent attention, a local/global window pattern and vocabulary tiling;
    // the window probe serves int8 weights, so that dtype.activations acts.
    {"train-shapes", "train", false,
     "chip: tpu-v4\n"
     "workload: {kind: train, model: {type: transformer, layers: 2, d_model: 256, d_ff: 1024, heads: 4,\n"
     "           seq_len: 200, vocab: 1024, attention: flash, kv_lora_rank: 32, qk_nope_head_dim: 32,\n"
     "           qk_rope_head_dim: 16, v_head_dim: 32, q_lora_rank: 64, sliding_window: 64,\n"
     "           sliding_window_pattern: 2, vocab_tiles: 2, experts: 4, top_k: 1, expert_d_ff: 512,\n"
     "           first_dense_layers: 1, expert_matmul: grouped}, global_batch: 2, optimizer: adam}\n"},
    {"inference-window", "inference", false,
     "chip: tpu-v5e\n"
     "workload: {kind: inference, model: {type: transformer, layers: 2, d_model: 256, d_ff: 1024, heads: 4,\n"
     "           head_dim: 64, kv_heads: 2, seq_len: 256, vocab: 1024, attention: flash, sliding_window: 64,\n"
     "           sliding_window_pattern: 2}, batch: 2, prompt_len: 100, decode_len: 16,\n"
     "           dtype: {weights: int8}}\n"},
    {"inference-mla", "inference", false,
     "chip: tpu-v5e\n"
     "workload: {kind: inference, model: {type: transformer, layers: 2, d_model: 256, d_ff: 1024, heads: 4,\n"
     "           seq_len: 256, vocab: 1024, attention: flash, kv_lora_rank: 32, qk_nope_head_dim: 32,\n"
     "           qk_rope_head_dim: 16, v_head_dim: 32, q_lora_rank: 64}, batch: 2, prompt_len: 100, decode_len: 16}\n"},
    {"inference-moe", "inference", false,
     "chip: tpu-v4\npod: {topology: ring, shape: [4], wraparound: [true]}\nmesh: {expert: 4}\n"
     "workload: {kind: inference, model: {type: transformer, layers: 1, d_model: 256, d_ff: 1024, heads: 4,\n"
     "           head_dim: 64, seq_len: 256, vocab: 1024, experts: 4, top_k: 2, capacity_factor: 1.0,\n"
     "           shared_experts: 1, expert_d_ff: 512, routing: {distribution: zipf, skew: 1.0, seed: 3}},\n"
     "           batch: 8, prompt_len: 64, decode_len: 16, parallelism: {expert: expert}}\n"},
    // A 64 GiB KV cache beside the weights on one 16 GiB v5e: does not fit, run anyway.
    {"inference-over-hbm", "inference", false,
     "chip: tpu-v5e\n"
     "workload: {kind: inference, model: {type: transformer, layers: 2, d_model: 1024, d_ff: 4096, heads: 8,\n"
     "           head_dim: 128, seq_len: 2048, vocab: 4096}, batch: 4096, prompt_len: 1024, decode_len: 1024,\n"
     "           phase: decode, simulate_anyway: true}\n"},
    {"synthetic", "synthetic", false,
     "chip: tpu-v4\npod: {topology: ring, shape: [4], wraparound: [true]}\n"
     "workload: {kind: synthetic, serial_fraction: 0.1, units: 40, unit: {m: 512, k: 512, n: 512},\n"
     "           broadcast_bytes: 4096}\n"},
    {"conv", "conv", false,
     "chip: tpu-v4\nfidelity: tile\n"
     "workload: {kind: conv, batch: 2, layers: [{ifmap_height: 16, ifmap_width: 16, filter_height: 3,\n"
     "           filter_width: 3, channels: 8, filters: 16}]}\n"},
    {"hlo", "hlo", false,
     "chip: tpu-v6e\npod: {topology: torus2d, shape: [2, 2], wraparound: [false, false]}\n"
     "workload: {kind: hlo, file: " TPUSIM_SOURCE_DIR "/tests/data/hlo/async-all-reduce.hlo.txt}\n"},
    // A gather on the SparseCores, so that the chip's sparsecore keys act.
    {"hlo-sparsecore", "hlo", false,
     "chip: tpu-v6e\nworkload: {kind: hlo, file: " TPUSIM_SOURCE_DIR "/tests/data/hlo/sparsecore-gather.hlo.txt}\n"},
    // A Pallas kernel without a cost_estimate, so that custom_call_flops acts.
    {"hlo-kernel", "hlo", false,
     "chip: tpu-v5e\nworkload: {kind: hlo, file: " TPUSIM_SOURCE_DIR "/tests/data/hlo/custom-call-kernel.hlo.txt}\n"},
    {"maxtext", "maxtext", false,
     "chip: tpu-v4\npod: {topology: ring, shape: [4], wraparound: true}\n"
     "workload: {kind: maxtext, config: {model_name: default, per_device_batch_size: 1, max_target_length: 256,\n"
     "           base_num_decoder_layers: 2, base_emb_dim: 512, base_mlp_dim: 1024, base_num_query_heads: 4,\n"
     "           base_num_kv_heads: 4, head_dim: 128, vocab_size: 1024}}\n"},
    {"multislice", "train", true,
     "chip: tpu-v5e\npod: {slices: 2, slice: v5e-4x4}\n"
     "workload: {kind: train, model: {type: transformer, layers: 2, d_model: 512, d_ff: 2048, heads: 8,\n"
     "           head_dim: 64, seq_len: 256, vocab: 4096}, global_batch: 64,\n"
     "           parallelism: {fsdp: [x, y], data: dcn}, optimizer: adam}\n"},
    // Two 2-slice all-reduces whose traffic between pods p0 and p1 shares
    // their uplinks.
    {"cluster", "cluster", false,
     "chip: tpu-v5e\n"
     "workload: {kind: cluster, datacenter: {pods: [{name: p0, slice: [4], slices: [a0, b0], oversubscription: 4},\n"
     "           {name: p1, slice: [4], slices: [a1, b1], oversubscription: 4}]},\n"
     "           jobs: [{name: a, slices: [a0, a1], steps: 2, experiment: {chip: tpu-v5e, pod: {slices: 2,\n"
     "                   slice: {topology: ring, shape: [4], wraparound: true}},\n"
     "                   workload: {kind: collective, op: all_reduce, bytes: 67108864}}},\n"
     "                  {name: b, slices: [b0, b1], start: 1.0e-3, experiment: {chip: tpu-v5e, pod: {slices: 2,\n"
     "                   slice: {topology: ring, shape: [4], wraparound: true}},\n"
     "                   workload: {kind: collective, op: all_reduce, bytes: 67108864}}}]}\n"},
};

// A change: the key's new value, and other keys changed with it where the
// key cannot change alone (a topology and its shape; one strategy's axis
// handed to another). "~" removes a key.
struct Change {
  Change(std::string v, std::vector<std::pair<std::string, std::string>> w = {})
      : value(std::move(v)), with(std::move(w)) {}
  std::string value;
  std::vector<std::pair<std::string, std::string>> with;
};

// Changes to try for keys that are neither numbers, flags nor enums, or
// that cannot change alone.
const std::map<std::string, std::vector<Change>> kAlternatives = {
    {"mesh", {{"{model: 1, data: 8}"}, {"{data: 8}"}, {"{data: 16}"}}},
    {"pod.shape", {{"[4]"}, {"[2, 2]"}, {"[16]"}, {"[2, 4]"}}},
    {"pod.wraparound", {{"[false]"}, {"[true, true]"}, {"[true, true, true]"}}},
    {"pod.topology",
     {{"torus2d", {{"pod.shape", "[2, 4]"}, {"pod.wraparound", "[false, false]"}}},
      {"ring", {{"pod.shape", "[4]"}, {"pod.wraparound", "[true]"}}}}},
    {"workload.model.type", {{"mlp", {{"workload.model", "{type: mlp, widths: [512, 512, 512]}"}}}}},
    {"workload.model.widths", {{"[16, 64, 8]"}, {"[512, 512, 512, 512, 512, 512, 512, 512, 512]"}}},
    {"workload.a_spec", {{"[model, data]"}, {"[data, null]"}}},
    {"workload.b_spec", {{"[model, null]"}, {"[null, null]"}}},
    {"workload.out_spec", {{"[data, null]"}, {"[null, model]"}}},
    {"workload.axes", {{"[x]"}}},
    {"workload.pairs", {{"[[0, 7], [7, 0]]"}}},
    {"workload.unit", {{"{m: 1024, k: 512, n: 512}"}}},
    {"workload.layers",
     {{"[{ifmap_height: 32, ifmap_width: 16, filter_height: 3, filter_width: 3, channels: 8, "
       "filters: 16}]"}}},
    {"workload.parallelism.data", {{"[data, model]", {{"workload.parallelism.tensor", "~"}}}}},
    {"workload.parallelism.fsdp", {{"data", {{"workload.parallelism.data", "~"}}}, {"~"}}},
    {"workload.parallelism.context", {{"~", {{"workload.parallelism.data", "ctx"}, {"workload.global_batch", "4"}}}}},
    {"workload.parallelism.tensor", {{"1", {{"workload.parallelism.data", "[data, model]"}}}}},
    {"workload.parallelism.expert", {{"~", {{"workload.parallelism.data", "expert"}}}}},
    {"workload.model.routing", {{"{distribution: uniform}"}}},
    {"workload.xla_flags", {{"--xla_tpu_scoped_vmem_limit_kib=64"}}},
    // kind: maxtext's probe fits: a batch that does not, run anyway.
    {"workload.simulate_anyway",
     {{"false"},
      {"true"},
      {"true", {{"workload.config.per_device_batch_size", "4096"}, {"workload.config.max_target_length", "8192"}}}}},
    {"workload.remat_tensors", {{"{query_proj: device, key_proj: device}", {{"workload.remat", "custom"}}}}},
    {"workload.model.routing.loads", {{"[2, 1, 1, 1]", {{"workload.model.routing.distribution", "measured"}}}}},
    {"workload.parallelism.pipeline",
     {{"1",
       {{"workload.parallelism.data", "pipe"},
        {"workload.parallelism.schedule", "~"},
        {"workload.parallelism.virtual_stages", "~"}}}}},
    {"pod.slice", {{"{topology: torus2d, shape: [2, 8], wraparound: [false, false]}"}}},
    {"pod.dcn_axes", {{"[x]", {{"mesh", "{x: 2, y: 4, dcn: 4}"}}}}},
    {"pod.dcn.nic_bandwidth", {{"1.0e+9"}}},
    {"pod.dcn.host_bandwidth", {{"1.0e+9"}}},
    {"workload.file", {{TPUSIM_SOURCE_DIR "/tests/data/hlo/sync-all-reduce.hlo.txt"}}},
    {"workload.entry", {{"fused_dot"}}},
    {"workload.custom_call_flops", {{"{splash_fwd: 1.0e+12}"}}},
    {"limits.max_memory", {{"1000"}}},
    {"stragglers",
     {{"[{chips: [0], compute: 0.5}]"}, {"[{chips: [0], hbm: 0.25}]"}, {"[{fraction: 0.5, compute: 0.5}]"}}},
    {"pod.links",
     {{"[{from: [0], to: [1], bandwidth: 0.25}]"},
      {"[{from: [0, 0], to: [1, 0], bandwidth: 0.25}]"},
      {"[{from: [0, 0, 0], to: [1, 0, 0], bandwidth: 0.25}]"}}},
    {"workload.requests.prompt_len", {{"[256]"}}},
    {"workload.input.length", {{"128", {{"workload.input.distribution", "fixed"}, {"workload.input.median", "~"}}}}},
    {"workload.input.min", {{"300", {{"workload.input.distribution", "uniform"}, {"workload.input.median", "~"}}}}},
    {"workload.input.max", {{"40", {{"workload.input.distribution", "uniform"}, {"workload.input.median", "~"}}}}},
    {"workload.input.lengths",
     {{"[64, 512]", {{"workload.input.distribution", "measured"}, {"workload.input.median", "~"}}}}},
    {"workload.requests.decode_len", {{"[64, 96]"}}},
    // The probe's replicas are two chips (tensor 2) of four.
    {"workload.requests.prefill_chips", {{"2"}}},
    // Closed-loop clients replace the probe's open-loop rate; one per replica.
    {"workload.requests.concurrency", {{"2", {{"workload.requests.rate", "~"}}}}},
    {"workload.requests.chunked_prefill.max_batched_tokens", {{"64"}}},
    {"workload.datacenter.pods",
     {{"[{name: p0, slice: [4], slices: [a0, b0], uplink_bandwidth: 1.0e9}, {name: p1, slice: [4], slices: [a1, "
       "b1]}]"}}},
    {"workload.datacenter.core_bandwidth", {{"1.0e9"}}},
    {"workload.jobs",
     {{"[{name: a, slices: [a0, a1], experiment: {chip: tpu-v5e, pod: {slices: 2, slice: {topology: ring, shape: [4], "
       "wraparound: true}}, workload: {kind: collective, op: all_reduce, bytes: 1048576}}}]"}}},
    // One prefill a request splits a step only where requests of one length
    // are admitted together: all at once, of one length.
    {"workload.requests.prefill.batch",
     {{"1", {{"workload.requests.rate", "~"}, {"workload.requests.prompt_len", "[128]"}}}}},
    {"workload.requests.prefill.buckets", {{"[256]"}}},
};

// Model keys that act in training but not (or not yet) in serving, with
// why: they are walked in the train topic only.
const std::map<std::string, std::string> kTrainOnly = {
    // Serving computes the logits of one token per sequence: nothing to tile.
    {"workload.model.vocab_tiles", "no loss or logits gradient in serving"},
    // Serving runs each expert's matmul on the tokens its router sends it;
    // a grouped matmul waits for workloads/inference to read MatmulSpec::grouped.
    {"workload.model.expert_matmul", "serving runs one matmul per expert"},
    {"workload.model.grouped_tile", "serving runs one matmul per expert"},
};

// What the simulator computed: the report without the echo of its input
// and without the host's wall-clock and memory fields.
nlohmann::json simulated(const fs::path& report) {
  std::ifstream in(report);
  nlohmann::json r = nlohmann::json::parse(in);
  r.erase("experiment");
  r.erase("pod");
  r.erase("tpusim_version");
  for (const char* f : testing_cli::kHostFields) r["simulator"].erase(f);
  for (const char* f : {"model", "parallelism", "precision", "roofline"}) r["result"].erase(f);
  return r;
}

YAML::Node load_config(const std::string& folder, const std::string& name) {
  return YAML::LoadFile(std::string(TPUSIM_SOURCE_DIR) + "/configs/" + folder + "/" + name + ".yaml");
}

// The probe with its chip and pods inlined, so that every key is in reach.
YAML::Node inlined(const Probe& probe) {
  YAML::Node exp = YAML::Load(probe.yaml);
  exp["name"] = "key-walk-" + probe.name;
  if (exp["chip"].IsScalar()) exp["chip"] = load_config("chips", exp["chip"].as<std::string>());
  if (exp["pod"].IsScalar()) exp["pod"] = load_config("pods", exp["pod"].as<std::string>())["pod"];
  if (exp["pod"] && exp["pod"]["slice"] && exp["pod"]["slice"].IsScalar())
    exp["pod"]["slice"] = load_config("pods", exp["pod"]["slice"].as<std::string>())["pod"];
  return exp;
}

void write_yaml(const YAML::Node& n, const fs::path& path) {
  YAML::Emitter out;
  out << n;
  std::ofstream(path) << out.c_str() << "\n";
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::stringstream s(path);
  for (std::string part; std::getline(s, part, '.');) parts.push_back(part);
  return parts;
}

// Sets (or, for "~", removes) the key at a dotted path, making the mappings
// on the way.
void set_at(YAML::Node node, const std::vector<std::string>& parts, std::size_t i, const std::string& value) {
  const std::string& key = parts[i];
  if (i + 1 == parts.size()) {
    if (value == "~") {
      node.remove(key);
    } else {
      node[key] = YAML::Load(value);
    }
    return;
  }
  if (!node[key] || !node[key].IsMap()) node[key] = YAML::Node(YAML::NodeType::Map);
  set_at(node[key], parts, i + 1, value);
}

// The probe's value at a dotted key path; empty when absent.
std::string value_at(const YAML::Node& root, const std::string& path) {
  YAML::Node n = YAML::Clone(root);
  for (const std::string& part : split_path(path)) {
    if (!n.IsMap() || !n[part]) return "";
    n.reset(n[part]);
  }
  return n.IsScalar() ? n.as<std::string>() : "";
}

std::string number_text(double v, bool integer) {
  std::ostringstream s;
  if (integer) {
    s << static_cast<long long>(std::llround(v));
  } else {
    s.precision(17);
    s << v;
  }
  return s.str();
}

struct Key {
  std::string path, type, def, informational;
};

// The leaf keys of a table (a nested table's keys, not the table itself).
void leaves(const nlohmann::json& table, const std::string& prefix, std::vector<Key>& out) {
  for (const auto& p : table["params"]) {
    const std::string path = prefix + p["name"].get<std::string>();
    if (p.contains("params") && !p["params"].empty() && p["type"] == "mapping") {
      leaves(p, path + ".", out);
      continue;
    }
    out.push_back({path, p["type"], p["default"], p.value("informational", "")});
  }
}

// The changes to try for `key` in a probe whose current value is `current`.
std::vector<Change> candidates(const Key& key, const std::string& current) {
  const auto alt = kAlternatives.find(key.path);
  if (alt != kAlternatives.end()) return alt->second;
  std::vector<Change> out;
  const std::string now = current.empty() ? key.def : current;
  if (key.type == "bool") {
    out.push_back({now == "true" ? "false" : "true"});
  } else if (key.type == "number" || key.type == "integer") {
    const bool integer = key.type == "integer";
    char* end = nullptr;
    const double v = std::strtod(now.c_str(), &end);
    if (now.empty() || *end != '\0') return out;  // required, or a default in words: no number to move
    // Up and down by factors, by one, and far down (limits end runs there).
    const std::vector<double> moved = v == 0 ? std::vector<double>{1, 1e-6, 8}
                                             : std::vector<double>{2 * v, v / 2, 10 * v, v / 10, v + 1, v * 1e-9, 1};
    for (double m : moved) {
      const std::string t = number_text(m, integer);
      if (t != number_text(v, integer)) out.push_back({t});
    }
  } else if (key.type.find(" | ") != std::string::npos) {
    std::stringstream words(key.type);
    for (std::string w; words >> w;)
      if (w != "|" && w != now) out.push_back({w});
  }
  return out;
}

// The probes where a key of `topic` can matter.
std::vector<const Probe*> probes_for(const std::string& topic) {
  std::vector<const Probe*> out;
  for (const Probe& p : kProbes) {
    const bool fits = topic == "chip" || topic == "experiment" || (topic == "pod" && !p.multislice) ||
                      (topic == "multislice" && p.multislice) || topic == p.kind;
    if (fits) out.push_back(&p);
  }
  return out;
}

std::string prefix_of(const std::string& topic) {
  if (topic == "chip") return "chip.";
  if (topic == "pod" || topic == "multislice") return "pod.";
  if (topic == "experiment") return "";
  return "workload.";
}

}  // namespace

TEST_CASE("key walk: every key changes a simulated figure or is declared informational", "[app][config][key-walk]") {
  testing_cli::TempDir tmp("key-walk");
  std::map<std::string, YAML::Node> probe_yaml;
  std::map<std::string, nlohmann::json> baseline;
  for (const Probe& p : kProbes) {
    probe_yaml[p.name] = inlined(p);
    const fs::path file = tmp / (p.name + ".yaml"), out = tmp.path / ("base-" + p.name);
    write_yaml(probe_yaml[p.name], file);
    const auto r = run_tpusim("run " + file.string() + " --out " + out.string());
    INFO(p.name << ":\n" << r.output);
    REQUIRE(r.status == 0);
    baseline[p.name] = simulated(out / "report.json");
  }
  int walked = 0;
  for (const auto& topic : config_topics::topics()) {
    // The sweep file's keys drive sweeps; SCALE-Sim config keys are walked by
    // tests/workloads/test_scalesim.cpp ("every config key moves a reported figure"). A validation
    // case's keys describe a measurement; its experiment and set are an experiment file and --set.
    if (topic.name == "sweep" || topic.name == "scalesim" || topic.name == "case") continue;
    std::vector<Key> keys;
    leaves(topic.keys, prefix_of(topic.name), keys);
    for (const Key& key : keys) {
      if (!key.informational.empty()) continue;
      if (topic.name == "inference" && kTrainOnly.count(key.path)) continue;
      // MaxText's own keys (workload.config.*) reach the simulation through
      // their translation (workloads/maxtext/to_train.h), tested in
      // tests/workloads/maxtext/; this walk covers kind: maxtext's own keys.
      if (topic.name == "maxtext" && key.path.rfind("workload.config.", 0) == 0) continue;
      // The experiment table's chip, pod and workload are walked in their own tables.
      if (topic.name == "experiment" &&
          (key.path == "chip" || key.path == "pod" || key.path == "workload" || key.path == "workload.kind"))
        continue;
      // A what-if's `base` names the file its other keys change; walked by
      // tests/workloads/test_what_if.cpp (the same chip or pod, one key changed).
      if (key.path == "chip.base" || key.path == "pod.base") continue;
      // An enumeration of one word (type "x", default "x") has nothing to
      // change to; no other type equals its default.
      if (key.type == key.def) continue;
      ++walked;
      std::string acted, tried;
      for (const Probe* probe : probes_for(topic.name)) {
        const YAML::Node& base = probe_yaml[probe->name];
        for (const Change& change : candidates(key, value_at(base, key.path))) {
          YAML::Node changed = YAML::Clone(base);
          set_at(changed, split_path(key.path), 0, change.value);
          for (const auto& [path, value] : change.with) set_at(changed, split_path(path), 0, value);
          const fs::path file = tmp / "changed.yaml", out = tmp.path / "changed";
          write_yaml(changed, file);
          fs::remove_all(out);
          const auto r = run_tpusim("run " + file.string() + " --out " + out.string());
          INFO(key.path << ": " << change.value << " in probe " << probe->name << ":\n" << r.output);
          REQUIRE((r.status == 0 || r.status == 2 || r.status == 3));  // never a crash
          tried += " " + probe->name + ":" + change.value + "(exit " + std::to_string(r.status) + ")";
          if (r.status == 3 || (r.status == 0 && simulated(out / "report.json") != baseline[probe->name])) {
            acted = probe->name + " with " + change.value;
            break;
          }
        }
        if (!acted.empty()) break;
      }
      INFO(topic.name << ": " << key.path << " changed no simulated figure; tried" << tried
                      << "\n(declare it informational in its ParamTable, or add a probe or value that exercises it)");
      CHECK(!acted.empty());
    }
  }
  CHECK(walked > 100);
}

}  // namespace test_key_walk
