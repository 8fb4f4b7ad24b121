#pragma once
// report.json as a typed value (schema tpusim.report/1, docs/interface.md
// and docs/report.md). Workload kinds fill a Report; to_json() is the one
// place that names the fields, so a field is spelt once and means one thing
// in every kind. Sections a kind does not have stay empty (std::nullopt) and
// are written as null where the contract lists them, or left out.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "interconnect/collective_spec.h"
#include "interconnect/slice_traffic.h"
#include "sim/params.h"
#include "sim/stats.h"
#include "workloads/experiment.h"
#include "workloads/validation.h"

namespace workloads {

inline constexpr const char* kReportSchema = "tpusim.report/1";

struct Roofline {
  double peak_flops_per_s = 0, hbm_bytes_per_s = 0, ridge_intensity = 0;
  std::string bound;            // measured: compute | memory | communication (the busiest)
  std::string bound_predicted;  // from intensity against ridge: compute | memory
  std::string verdict;          // compute | memory | communication | latency | idle (workloads/verdict.h)
  double time_lower_bound_s = 0;
  double busy_mxu = 0, busy_hbm = 0, busy_ici = 0;  // fractions of the step
};

// Roofline of `flops` and `hbm_bytes` (per chip) on `chip`, with the busy
// fractions of the busiest MXU, of HBM and of ICI over the step.
Roofline make_roofline(const hw::ChipConfig& chip, double flops, double hbm_bytes, double mxu_busy_fraction,
                       double hbm_busy_fraction, double ici_busy_fraction);

// Collectives of one op that waited for a late chip (stragglers,
// docs/interface.md): how many there were, how many a chip joined after
// the first (gated), the first chips' waits (summed, and the longest), and
// the chips that gated them, the longest summed wait first.
struct Waiting {
  interconnect::CollectiveOp op = interconnect::CollectiveOp::all_reduce;
  int collectives = 0, gated = 0;
  double wait_s = 0, wait_max_s = 0;
  struct Chip {
    std::uint32_t chip = 0;
    int gated = 0;
    double wait_s = 0;
  };
  std::vector<Chip> chips;  // at most Waiting::kMaxChips
  static constexpr std::size_t kMaxChips = 8;
};

struct Communication {
  double collective_time_s = 0, exposed_time_s = 0;
  std::optional<double> overlap_fraction;       // null without communication
  std::optional<double> compute_time_s;         // pod runs
  std::optional<std::vector<Waiting>> waiting;  // pod runs: one per op of the step's collectives
};

struct Pipeline {
  std::uint32_t stages = 0, microbatches = 0;
  std::string schedule;
  std::uint32_t virtual_stages = 1;  // chunks per stage (interleaved)
  double bubble_fraction = 0, bubble_fraction_ideal = 0, span_s = 0;
  std::vector<double> stage_busy_s;
  std::vector<std::uint32_t> peak_microbatches_in_flight;
};

struct Memory {
  std::uint64_t per_chip_bytes = 0, capacity_bytes = 0;
  std::uint64_t params_bytes = 0, grads_bytes = 0, optimizer_bytes = 0, activations_bytes = 0;
  // Training: the fullest chip's breakdown.
  std::optional<std::uint64_t> activations_per_microbatch_bytes, microbatches_in_flight, chip;
  std::optional<std::string> peak_pass;                 // the pass at the peak: "backward of block79"
  std::optional<std::uint64_t> gathered_weights_bytes;  // fsdp's working set
  std::optional<std::uint64_t> rematerialized_bytes;    // remat: the layer recomputed during its backward
  std::optional<std::uint64_t> ring_buffers_bytes;      // context parallelism: ring attention's K/V, dK/dV blocks
  // Host offload: what the chip keeps in host DRAM, and its share of it,
  // and the HBM buffers the offloaded stashes pass through.
  std::optional<std::uint64_t> host_bytes, host_capacity_bytes, offload_buffers_bytes;
  struct BytesPerParam {
    double params = 0, grads = 0, optimizer = 0;
  };
  std::optional<BytesPerParam> bytes_per_param;  // training: under the precision policy
  std::optional<bool> fits;
};

// Values checked against a host reference.
struct FunctionalCheck {
  bool matches_reference = false;
  std::optional<double> max_abs_error;  // written as null when absent
  std::optional<std::uint64_t> mismatches;
  std::optional<std::string> first_mismatch;
};

// Functional mini-training (workloads/train/functional.h).
struct TrainFunctional {
  std::uint32_t steps = 0;
  double learning_rate = 0;
  std::uint64_t seed = 0;
  bool sync_gradients = true;
  std::vector<double> loss_per_step;
  double final_loss = 0, replicas_max_weight_diff = 0;
  struct Reference {
    double max_abs_diff = 0, bound = 0;
    bool matches = false;
  };
  std::optional<Reference> reference_step1;
  std::optional<bool> matches_reference;
};

// kind: matmul: the blocked kernel.
struct KernelSection {
  std::uint64_t m = 0, k = 0, n = 0, bm = 0, bk = 0, bn = 0;
  std::uint32_t buffers = 0, accumulators = 0;
  std::uint64_t vmem_bytes_per_core = 0, vmem_capacity_bytes = 0, ops = 0, hbm_bytes_planned = 0;
};

// kind: sharded_matmul.
struct ShardingSection {
  std::string a_spec, b_spec, out_spec, case_summary;
  bool collective_matmul = false;
  std::vector<std::uint64_t> local_matmul;  // m, k, n
  std::vector<std::uint64_t> a_shard, b_shard, c_shard;
};

// kind: synthetic.
struct SyntheticSection {
  double serial_fraction = 0;
  std::uint64_t units = 0, serial_units = 0, parallel_units = 0, parallel_units_max_per_chip = 0;
  std::vector<std::uint64_t> unit;  // m, k, n
  std::uint64_t broadcast_bytes = 0;
};

// kind: train.
// A mixture of experts under expert parallelism (docs/training.md#mixture-of-experts):
// the routing of the step, tokens counted over the pod (every microbatch of
// every data-parallel group).
struct ExpertsSection {
  std::uint64_t experts = 0, top_k = 0, experts_per_chip = 0;
  double capacity_factor = 0;
  std::string distribution;
  // The busiest expert: its share of a layer's routed tokens (1 / experts
  // when balanced), in the layer where it is largest.
  double busiest_share = 0;
  std::uint64_t busiest_expert = 0, busiest_layer = 0;
  // The busiest chip's kept tokens over the mean chip's, in the layer where
  // it is largest (1 when balanced): how much longer its experts work.
  double chip_imbalance = 1;
  std::uint64_t routed_tokens = 0, dropped_tokens = 0;  // token-expert assignments per step
};

// Per-replica input lengths (workload.input, docs/training.md#input-imbalance):
// each data-parallel replica's tokens per sequence this step, the longest
// and shortest, and how long collectives over the data axes (gradients;
// with fsdp, weights too) waited for a late chip.
struct InputSection {
  std::string distribution;
  std::uint64_t seed = 0, bucket = 1;
  std::vector<std::uint64_t> tokens;  // per replica, in replica order
  std::uint64_t longest_tokens = 0, shortest_tokens = 0;
  std::uint32_t longest_replica = 0, shortest_replica = 0;  // the lowest replica of that length
  double mean_tokens = 0;
  // Over the data-parallel collectives: their waits summed, the longest,
  // and the chip that gated the longest (none when nothing waited).
  double wait_s = 0, wait_max_s = 0;
  std::optional<std::uint32_t> wait_max_gated_by;
};

struct TrainSection {
  struct Axes {
    std::vector<std::string> axes;
    std::uint32_t degree = 1;
  };
  double model_flops = 0, tokens = 0, tokens_per_s = 0;
  Axes data, fsdp, tensor, pipeline, context, expert;
  std::optional<ExpertsSection> experts;
  std::optional<InputSection> input;
  std::uint32_t zero = 0;
  std::uint32_t microbatches = 0;
  std::uint64_t microbatch_size = 0, global_batch = 0;
  std::string schedule, optimizer, elementwise, remat;
  std::string precision_params, precision_optimizer, precision_matmul;
  // Hardware FLOPs utilisation: matmul FLOPs executed (recomputation
  // included) over the step and the pod's peak; mfu counts the model's.
  double hfu = 0;
  bool overlap = true, sync_gradients = true;
  double forward_s = 0, backward_s = 0, optimizer_s = 0;  // phases, mean over chips
  std::string model_type;
  double model_params = 0;
  std::uint64_t model_layers = 0, seq_len = 0;
  // remat: custom: the place of each named tensor (remat_policy.h).
  std::map<std::string, std::string> remat_tensors;
  // Host offload, on the fullest chip: bytes copied to and from host memory, the
  // time a copy ran, and the part of it no MXU or vector op hid.
  struct HostOffload {
    double bytes = 0, time_s = 0, exposed_s = 0;
  };
  std::optional<HostOffload> host_offload;
};

// kind: maxtext (docs/maxtext.md): what MaxText's configuration became.
// ignored_keys: keys and flags read with no effect on performance;
// approximations: unmodelled ones run without (allow_unmodelled).
struct MaxTextSection {
  struct Listed {
    std::string key, value, where, why;
  };
  std::string model_name, remat_policy;
  std::vector<std::pair<std::string, std::uint32_t>> mesh;  // MaxText's axes of more than one chip, as laid out
  std::vector<Listed> ignored_keys, approximations;
};

// kind: inference (docs/serving.md): one simulated step of a phase, and the
// roofline terms it is split into (per chip, at the chip's HBM bandwidth
// and its peak for the weights' format) with the largest named.
struct InferenceStep {
  double step_s = 0, flops = 0, hbm_bytes = 0;  // flops, hbm_bytes: per chip (measured)
  double weights_bytes = 0, kv_bytes = 0;       // per chip: weights read, KV cache read (decode) or written (prefill)
  double weights_s = 0, kv_s = 0, compute_s = 0, communication_s = 0;
  std::string bound;  // memory | compute | communication
  // A mixture of experts: the experts a block's tokens go to (whose
  // weights the step reads), mean over the blocks, of the group's experts.
  std::optional<double> experts_read;
};

// A request stream's outcome (docs/serving.md "Request stream"): latencies
// over its requests (nearest-rank percentiles) and throughput over its span.
struct RequestStreamSection {
  struct Latency {
    double mean = 0, p50 = 0, p99 = 0;
  };
  std::uint64_t requests = 0, slots_per_replica = 0;
  double rate = 0;
  std::optional<std::uint64_t> concurrency;  // closed-loop clients; null: open loop
  std::uint64_t warmup = 0;                  // requests left out of what follows
  std::string batching;
  Latency ttft_s, tpot_s;
  Latency itl_s;  // inter-token latency, over tokens
  double makespan_s = 0, tokens_per_s = 0, tokens_per_s_per_chip = 0;
  double requests_per_s = 0, total_tokens_per_s = 0;  // total: prompt and output tokens
  std::uint64_t prefill_steps = 0, decode_steps = 0;  // over all replicas
  double mean_batch = 0;                              // sequences per decode step
  std::uint64_t steps_simulated = 0;                  // distinct prefill and decode steps the pod ran
  // Chunked prefill (requests.chunked_prefill): the budget, the prompt
  // chunks run and the steps that ran chunks beside decoding sequences.
  struct Chunked {
    std::uint64_t max_batched_tokens = 0, chunks = 0, mixed_steps = 0;
  };
  std::optional<Chunked> chunked_prefill;
  // Disaggregated serving (requests.prefill_chips): the two pools, the KV
  // cache's crossing between them, and each pool's busy share of the span.
  struct Pool {
    std::uint64_t chips = 0, replicas = 0;
    double utilization = 0;  // step time over replicas x makespan
  };
  struct Disaggregated {
    Pool prefill, decode;
    std::string link;               // ici | dcn
    double kv_bytes_mean = 0;       // one request's cache, whole model (all chips of a replica)
    double kv_transfer_s_mean = 0;  // per request: the transfer alone, not the wait for a slot or the link
  };
  std::optional<Disaggregated> disaggregated;
};

struct InferenceSection {
  std::string phase, weights_dtype, kv_cache_dtype, activations;
  std::uint64_t batch = 0, prompt_len = 0, decode_len = 0, decode_context = 0;
  TrainSection::Axes data, tensor, expert;
  std::optional<double> ttft_s, tpot_s;  // a server step each: the phase's device step and the host's work
  std::string scheduling;                // sync | async: where the host's work goes (host_step.h)
  double host_step_s = 0;                // the host's work per server step (the chip's host.serve_step)
  double tokens_per_s = 0, tokens_per_s_per_chip = 0;
  std::uint64_t weights_bytes = 0, kv_cache_bytes = 0, kv_cache_bytes_per_token = 0;  // per chip, whole model
  std::uint64_t max_batch_that_fits = 0;
  std::optional<InferenceStep> prefill, decode;
  std::optional<RequestStreamSection> stream;
};

// One layer of `tpusim scalesim` (docs/scalesim.md): its GEMM after
// im2col, its folds, cycles and SCALE-Sim's report columns.
struct ScaleSimLayerRecord {
  std::string name;
  std::uint64_t m = 0, k = 0, n = 0, macs = 0;
  // SCALE-Sim's folds of the dataflow: ws ceil(K / R) x ceil(N / C),
  // os ceil(M / R) x ceil(N / C), is ceil(K / R) x ceil(M / C).
  std::uint64_t row_folds = 0, col_folds = 0;
  std::uint64_t cycles = 0;           // tpusim's: the op ends when its last fold has left the array
  std::uint64_t scalesim_cycles = 0;  // SCALE-Sim's Total Cycles: cycles - 1 + stall_cycles
  std::uint64_t stall_cycles = 0;
  double overall_util_pct = 0, mapping_efficiency_pct = 0, compute_util_pct = 0;
  std::uint64_t sram_ifmap_reads = 0, sram_filter_reads = 0, sram_ofmap_writes = 0;
  std::uint64_t dram_ifmap_reads = 0, dram_filter_reads = 0, dram_ofmap_writes = 0;
  // With `--chip` (docs/scalesim.md#energy): MACs x mac_pj + SRAM words
  // read and written x vmem_pj_per_byte + DRAM words x hbm_pj_per_byte
  // (1-byte words); absent otherwise.
  std::optional<double> energy_j;
};

// `tpusim scalesim`: the config as read and every layer.
struct ScaleSimSection {
  std::string run_name, dataflow, interface_bandwidth, topology_format;  // topology_format: conv | gemm
  std::uint32_t array_height = 0, array_width = 0;
  std::uint64_t ifmap_sram_kb = 0, filter_sram_kb = 0, ofmap_sram_kb = 0;
  std::optional<std::uint64_t> bandwidth_words_per_cycle;  // USER mode
  std::vector<ScaleSimLayerRecord> layers;
};

// kind: conv: each layer's im2col GEMM.
struct ConvSection {
  std::uint64_t batch = 1, macs = 0;
  struct Layer {
    std::string name;
    std::uint64_t ofmap_h = 0, ofmap_w = 0, m = 0, k = 0, n = 0, macs = 0;
    double energy_j = 0;  // the layer's kernel: its MACs, VMEM and HBM bytes (docs/mxu.md#energy)
  };
  std::vector<Layer> layers;
};

// result.energy (docs/mxu.md#energy): MACs x chip.energy.mac_pj + VMEM
// bytes x vmem_pj_per_byte + HBM bytes x hbm_pj_per_byte, summed over the
// step; per_chip_j by device, as per_chip; average power = total / step time.
struct Energy {
  double total_j = 0, mac_j = 0, vmem_j = 0, hbm_j = 0, average_power_w = 0;
  std::vector<double> per_chip_j;
  // kind: train (docs/training.md#energy), over every chip: each model
  // layer's forward and backward passes (its ops, hw::op_work), the
  // optimizer's updates, and the collective reductions' HBM bytes; they
  // add up to total_j.
  struct Layer {
    std::string name;
    double forward_j = 0, backward_j = 0;
  };
  struct TrainParts {
    std::vector<Layer> layers;
    double optimizer_j = 0, collective_reductions_j = 0;
  };
  std::optional<TrainParts> train;
  void set_step(double step_s) { average_power_w = step_s > 0 ? total_j / step_s : 0; }
};

struct LinkUtilization {
  double max = 0, mean = 0;
};

// Between slices (pods of several slices only): bytes of the messages that
// crossed DCN, the busiest host's NICs out (seconds serializing, and that
// over the step).
struct DcnSection {
  double bytes = 0, nic_busy_max_s = 0, nic_utilization_max = 0;
  // Per chip, mean: time with a collective across slices running, and the
  // part of it no compute, vector or DMA op of the chip hid.
  double time_s = 0, exposed_time_s = 0;
};

struct Result {
  double step_time_s = 0, cycles = 0, clock_hz = 0;
  double flops = 0, hbm_bytes = 0, ici_bytes = 0;  // ici_bytes: on ICI links (DCN messages not counted)
  std::optional<DcnSection> dcn;
  double arithmetic_intensity = 0, achieved_flops_per_s = 0, mfu = 0, mxu_utilization = 0;
  Roofline roofline;
  Communication communication;
  std::optional<Pipeline> pipeline;                                           // null when there is none
  std::optional<Memory> memory;                                               // null when not modelled (collectives)
  std::variant<std::monostate, FunctionalCheck, TrainFunctional> functional;  // null unless functional
  std::optional<KernelSection> kernel;
  std::optional<ShardingSection> sharding;
  std::optional<SyntheticSection> synthetic;
  std::optional<TrainSection> train;
  std::optional<MaxTextSection> maxtext;
  std::optional<InferenceSection> inference;
  std::optional<ConvSection> conv;
  std::optional<ScaleSimSection> scalesim;
  std::optional<LinkUtilization> links;
  std::optional<Energy> energy;  // kinds whose chips run programs
};

struct CollectiveRecord {
  std::optional<std::string> name;  // pod runs
  interconnect::CollectiveOp op = interconnect::CollectiveOp::all_reduce;
  interconnect::Algorithm algorithm = interconnect::Algorithm::automatic;
  int participants = 0;
  std::optional<int> groups;
  std::vector<std::string> axes;  // mesh axes taking part; empty: every chip
  std::uint64_t bytes = 0;
  std::optional<double> start_s;
  // Pod runs: how long the first chips to join waited for the last
  // (included in time_s), and that chip (null when all joined at once).
  std::optional<double> wait_s;
  std::optional<std::uint32_t> gated_by;
  double time_s = 0, algbw_bytes_per_s = 0, busbw_bytes_per_s = 0;
  std::optional<double> exposed_s;  // pod runs: runtime::CollectiveTiming::exposed_s
  std::optional<std::uint64_t> messages;
  std::optional<std::string> network_model;
  std::optional<std::string> purpose;  // train: gradients | tensor_parallel | weights
  // Pods of several slices: the bytes its schedule sends from each slice to
  // each other (runtime::CollectiveTiming::dcn_traffic); written when any.
  std::vector<interconnect::SliceTraffic> dcn_traffic;
};

// report.json's collective_summary: the collectives of one op, algorithm,
// set of axes, size and purpose, in the order the first of each appears,
// with their count and their bytes, times, exposed times and waits summed.
// It stands in for the per-collective list (collectives), which a step of a
// large model makes tens of thousands long, unless the run asks for it
// (ReportDetail::full).
struct CollectiveGroup {
  interconnect::CollectiveOp op = interconnect::CollectiveOp::all_reduce;
  interconnect::Algorithm algorithm = interconnect::Algorithm::automatic;
  std::vector<std::string> axes;
  int participants = 0;
  std::uint64_t bytes = 0;  // of each
  std::optional<std::string> purpose;
  std::uint64_t count = 0, total_bytes = 0;
  double time_s = 0;
  std::optional<double> exposed_s, wait_s;  // when the collectives carry them
};
std::vector<CollectiveGroup> summarize_collectives(const std::vector<CollectiveRecord>& collectives);

// ReportDetail's spellings (workload.h): the --report-detail words.
const sim::EnumNames<ReportDetail>& report_detail_names();

struct LinkRecord {
  int link = 0, from = 0, to = 0;
  std::string axis;
  int dir = 1;
  std::uint64_t bytes = 0;
  double busy_s = 0, utilization = 0;
};

struct ChipMemoryRecord {
  std::uint64_t total_bytes = 0, params_bytes = 0, grads_bytes = 0, optimizer_bytes = 0, activations_bytes = 0;
  std::uint64_t activations_per_microbatch_bytes = 0, microbatches_in_flight = 0;
  std::uint64_t gathered_weights_bytes = 0, rematerialized_bytes = 0, ring_buffers_bytes = 0;
  std::uint64_t offload_buffers_bytes = 0;  // written when not 0
};

struct PerChip {
  std::uint32_t chip = 0;
  std::vector<int> coords;
  double mxu_s = 0, vector_s = 0, dma_s = 0, ici_s = 0;  // busy, mean per engine instance
  std::optional<double> compute_s, exposed_communication_s;
  std::optional<std::uint64_t> hbm_bytes, ici_bytes_out, ici_bytes_in;
  std::optional<double> reduce_hbm_bytes;  // kind: collective
  std::optional<double> end_s;
  // kind: sharded_matmul
  std::optional<std::vector<std::uint64_t>> shape_a, shape_b, shape_c;
  // kind: synthetic
  std::optional<std::uint64_t> units;
  // kind: train
  struct Ranks {
    std::uint32_t data = 0, fsdp = 0, tensor = 0, stage = 0;
  };
  std::optional<Ranks> ranks;
  std::optional<double> forward_s, backward_s, optimizer_s;
  std::optional<std::uint64_t> ops;
  std::optional<double> mxu_flops, vector_flops;
  std::optional<ChipMemoryRecord> memory;
};

// What trace.json holds (run --trace): its events, the ops past the
// trace's bound it left out, and the chips it shows (by default the
// simulated ones; --trace-chips) with the representative of each.
struct TraceSummary {
  std::uint64_t events = 0, dropped = 0;
  std::vector<std::uint32_t> written;         // the chips written, ascending
  std::vector<std::uint32_t> representative;  // per pod chip: the simulated chip whose ops it has
  std::uint64_t bin_ps = 0;                   // aggregated in bins of this (sim::TraceWriter::aggregate); 0: op by op
};

struct Simulator {
  std::string fidelity;
  double wall_time_s = 0;
  std::uint64_t events = 0;  // SystemC delta cycles
  std::uint64_t peak_rss_bytes = 0;
  std::optional<std::uint64_t> network_events, messages;
  // Pod runs (runtime/pod_run.h).
  std::optional<int> chips_simulated;
  std::optional<std::string> replicas;
  std::optional<double> replica_spread_s;
  std::optional<double> replica_drift_s;
  std::optional<int> collectives_replayed;
  // Axes along which the network simulated one chip per orbit (runtime/pod_run.h).
  std::optional<std::vector<std::string>> symmetric_axes;
  std::optional<std::uint64_t> ops;  // ops in the longest program of a simulated chip
  std::optional<TraceSummary> trace;
};

// kind: cluster (docs/cluster.md): jobs sharing a data center's fabric,
// each alone and in company, and the fabric's shared links.
struct ClusterSection {
  struct Step {
    double start_s = 0, time_s = 0, alone_s = 0;  // in company; alone_s: the same step with the fabric to itself
    double dcn_time_s = 0, dcn_alone_s = 0;       // its DCN phases' spans, summed
  };
  struct Job {
    std::string name, kind;
    std::vector<std::string> slices;
    double start_s = 0;
    double step_time_s = 0;  // its experiment's step, run alone (report.result.step_time_s)
    // Means over its steps: alone on the fabric, in company, and their ratio.
    double step_alone_s = 0, step_s = 0, slowdown = 1;
    double dcn_alone_s = 0, dcn_s = 0;  // DCN time per step, the same way
    std::uint32_t dcn_phases = 0;       // per step
    std::vector<Step> steps;
    nlohmann::json report;  // its experiment's report.json
    // A serving fleet (docs/cluster.md#serving-jobs): its request stream's
    // latencies with the fabric to itself and in company. For it, the
    // fields above are per stream, not per step: step_alone_s and step_s
    // the stream's makespan, slowdown the TTFT p99's ratio, dcn_* the mean
    // KV transfer and dcn_phases the transfers; `steps` is empty.
    struct Serving {
      RequestStreamSection::Latency ttft_alone_s, ttft_s, tpot_alone_s, tpot_s;
    };
    std::optional<Serving> serving;
  };
  struct Link {
    std::string name;
    double bytes_per_s = 0, bytes = 0, utilization = 0;  // utilization: bytes over capacity x makespan
    std::vector<std::pair<std::string, double>> by_job;  // bytes each job sent over it, jobs in order
    std::vector<std::pair<double, double>> rate;         // (time s, bytes/s carried) from each change on
  };
  std::vector<Job> jobs;
  std::vector<Link> links;
  double makespan_s = 0;
};

struct Report {
  std::string name, config_path;               // experiment
  std::vector<std::string> inputs, overrides;  // Experiment's
  std::string workload;                        // the resolved workload, one-line YAML
  // pod: chips, devices (JAX's: chips x the chip's devices), topology, shape,
  // wraparound, chip name
  std::uint32_t chips = 1;
  std::uint32_t devices = 1;
  std::uint32_t slices = 1;  // of `shape`, joined by DCN
  std::string topology, chip;
  std::vector<std::uint32_t> shape;
  std::vector<bool> wraparound;
  std::vector<interconnect::LinkFault> pod_links;  // degraded and failed links (pod.links in the JSON when any)
  std::vector<StragglerSpec> stragglers;  // with the chips drawn for a fraction (stragglers in the JSON when any)
  std::optional<WhatIf> chip_what_if, pod_what_if;  // experiment.chip / experiment.pod in the JSON when given
  Result result;
  // result.validation in the JSON: the validation group most like the run
  // and its measured error (workloads/validation.h), set by report_for.
  std::optional<Validation> validation;
  std::vector<CollectiveRecord> collectives;
  std::vector<PerChip> per_chip;
  std::optional<std::vector<LinkRecord>> links;  // kind: collective: every link direction
  std::optional<sim::StatGroup> stats;
  std::optional<ClusterSection> cluster;  // kind: cluster
  Simulator simulator;
};

// A report with the experiment and pod sections filled in.
Report report_for(const Experiment& exp);
// simulator: fidelity, wall_time_s, events, peak_rss_bytes.
Simulator simulator_for(const Experiment& exp, double wall_time_s, std::uint64_t events);

nlohmann::json to_json(const Report& report);

// The text of report.json, the one writer every command uses: refuses
// (sim::SimFailure, exit 3) a number that is not finite, naming its key path
// (nlohmann::json prints inf and nan as null: a report once held 13 nulls
// where step times belong), and writes text that is not UTF-8 with
// U+FFFD in its place (a name read from an input never breaks the report).
// `detail` says whether the per-collective list and every chip's entry
// stay (full) or only their summaries, with per_chip's outliers (summary;
// workloads/per_chip_summary.h); report.json says which in `report_detail`.
std::string report_text(const nlohmann::json& report, ReportDetail detail);
// The same from a report the caller gives up (left null): trimmed, not
// copied, and freed before returning (a pod of 4096 chips simulated one by
// one has 38 MB of stats in report.json, ten times that as a json value).
std::string report_text(nlohmann::json&& report, ReportDetail detail);

}  // namespace workloads
