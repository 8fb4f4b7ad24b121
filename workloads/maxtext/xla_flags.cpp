#include "workloads/maxtext/xla_flags.h"

#include <cctype>
#include <cstdlib>

#include "sim/error.h"

namespace workloads {

namespace {

bool read_bool(const std::string& v, bool& out) {
  if (v == "true" || v == "True" || v == "1") return out = true, true;
  if (v == "false" || v == "False" || v == "0") return out = false, true;
  return false;
}

bool read_int(const std::string& v, std::int64_t& out) {
  if (v.empty()) return false;
  char* end = nullptr;
  const long long x = std::strtoll(v.c_str(), &end, 10);
  if (!end || *end != '\0') return false;
  out = x;
  return true;
}

XlaFlagRule modelled(const char* name, const char* what, bool (*apply)(const std::string&, XlaSettings&)) {
  return {name, KeyClass::modelled, what, "", apply};
}

void ignored(std::vector<XlaFlagRule>& out, std::vector<const char*> names, const char* why) {
  for (const char* n : names) out.push_back({n, KeyClass::ignored, why, "", nullptr});
}

std::vector<XlaFlagRule> make_rules() {
  std::vector<XlaFlagRule> r;
  r.push_back(modelled("xla_tpu_scoped_vmem_limit_kib", "VMEM an op may use, in KiB; the rest prefetches later ops",
                       [](const std::string& v, XlaSettings& s) {
                         std::int64_t x = 0;
                         if (!read_int(v, x) || x < 1) return false;
                         s.scoped_vmem_limit_kib = static_cast<std::uint64_t>(x);
                         return true;
                       }));
  r.push_back(modelled("xla_jf_spmd_threshold_for_windowed_einsum_mib",
                       "matmuls over this size (MiB) become collective matmuls; 1000000 turns them off",
                       [](const std::string& v, XlaSettings& s) {
                         return read_int(v, s.windowed_einsum_threshold_mib) && s.windowed_einsum_threshold_mib >= 0;
                       }));
  r.push_back(modelled("xla_tpu_enable_sparse_core_collective_offload_all_gather", "all-gathers on the SparseCores",
                       [](const std::string& v, XlaSettings& s) { return read_bool(v, s.sparse_core_all_gather); }));
  r.push_back(
      modelled("xla_tpu_enable_sparse_core_collective_offload_reduce_scatter", "reduce-scatters on the SparseCores",
               [](const std::string& v, XlaSettings& s) { return read_bool(v, s.sparse_core_reduce_scatter); }));
  r.push_back(modelled("xla_tpu_enable_sparse_core_collective_offload_all_reduce", "all-reduces on the SparseCores",
                       [](const std::string& v, XlaSettings& s) { return read_bool(v, s.sparse_core_all_reduce); }));
  r.push_back(modelled("xla_tpu_enable_async_collective_fusion",
                       "continuation fusion: collectives run in pieces inside compute fusions",
                       [](const std::string& v, XlaSettings& s) { return read_bool(v, s.async_collective_fusion); }));
  r.push_back(modelled("xla_tpu_enable_async_collective_fusion_fuse_all_gather",
                       "continuation fusion applies to all-gathers",
                       [](const std::string& v, XlaSettings& s) { return read_bool(v, s.fuse_all_gather); }));
  r.push_back(modelled("xla_tpu_enable_async_collective_fusion_fuse_all_reduce",
                       "continuation fusion applies to all-reduces",
                       [](const std::string& v, XlaSettings& s) { return read_bool(v, s.fuse_all_reduce); }));
  r.push_back(modelled("xla_tpu_enable_async_collective_fusion_fuse_reduce_scatter",
                       "continuation fusion applies to reduce-scatters",
                       [](const std::string& v, XlaSettings& s) { return read_bool(v, s.fuse_reduce_scatter); }));
  r.push_back(
      modelled("xla_tpu_enable_data_parallel_all_reduce_opt", "the data-parallel all-reduces across DCN optimised",
               [](const std::string& v, XlaSettings& s) { return read_bool(v, s.data_parallel_all_reduce_opt); }));
  ignored(r,
          {"xla_tpu_enable_all_experimental_scheduler_features", "xla_tpu_enable_scheduler_memory_pressure_tracking",
           "xla_tpu_host_transfer_overlap_limit", "xla_tpu_aggressive_opt_barrier_removal",
           "xla_lhs_prioritize_async_depth_over_stall", "xla_tpu_enable_ag_backward_pipelining",
           "xla_should_allow_loop_variant_parameter_in_chain", "xla_should_add_loop_invariant_op_in_chain",
           "xla_max_concurrent_host_send_recv", "xla_tpu_scheduler_percent_shared_memory_limit",
           "xla_latency_hiding_scheduler_rerun", "xla_tpu_enable_latency_hiding_layer_scheduler",
           "xla_tpu_enable_layer_scheduler_for_dependent_collectives",
           "xla_tpu_enable_multi_compute_overlap_in_layer_scheduler", "xla_max_concurrent_async_all_gathers",
           "xla_max_concurrent_async_reduce_scatters"},
          "latency-hiding scheduler tuning (MaxText's host-offload group among them): tpusim's engines overlap as "
          "far as the dependencies allow, the schedule these flags let XLA approach");
  ignored(r,
          {"xla_tpu_enable_async_collective_fusion_multiple_steps", "xla_tpu_overlap_compute_collective_tc",
           "xla_enable_async_all_gather", "xla_enable_async_all_reduce", "xla_enable_async_collective_permute",
           "xla_tpu_data_parallel_opt_different_sized_ops", "xla_tpu_enable_collective_pipeliner",
           "xla_tpu_enable_tree_use_collective_pipeliner", "xla_tpu_enable_ici_ar_pipelining",
           "xla_tpu_enable_ici_rs_pipelining", "xla_tpu_ici_rs_pipelining_threshold_kib",
           "xla_tpu_prefer_async_allgather_to_allreduce"},
          "asynchronous and pipelined collectives: tpusim's collectives are asynchronous ops already, overlapped as "
          "their dependencies allow");
  ignored(
      r,
      {"xla_tpu_use_minor_sharding_for_major_trivial_input", "xla_tpu_relayout_group_size_threshold_for_reduce_scatter",
       "xla_tpu_assign_all_reduce_scatter_layout", "xla_tpu_enable_3d_reduce_scatter_decomposer"},
      "layouts that let XLA turn an all-reduce and a slice into a reduce-scatter: tpusim emits reduce-scatters "
      "for sharded gradients already");
  ignored(r,
          {"xla_tpu_enable_all_gather_offload_tracing", "xla_tpu_enable_reduce_scatter_offload_tracing",
           "xla_tpu_enable_all_reduce_offload_tracing"},
          "tracing of offloaded collectives");
  ignored(r,
          {"xla_tpu_use_tc_device_shape_on_sc", "xla_sc_disable_megacore_partitioning",
           "xla_sc_enable_instruction_fusion", "xla_sc_disjoint_spmem", "2a886c8_chip_config_name"},
          "settings that come with SparseCore offload (MaxText's xla_flags_library.py); which collectives are "
          "offloaded is the per-collective flag");
  ignored(
      r,
      {"xla_tpu_use_single_sparse_core_for_all_gather_offload", "xla_tpu_enable_concurrent_sparse_core_offloading",
       "xla_tpu_enable_sparse_core_collective_aggregator", "xla_tpu_enable_sparse_core_offload_queuing_in_lhs",
       "xla_tpu_sparse_core_all_gather_latency_multiplier", "xla_tpu_sparse_core_reduce_scatter_latency_multiplier"},
      "SparseCore offload tuning and how the scheduler prices it");
  ignored(r,
          {"xla_tpu_use_bundle_aware_cost_model_for_fusions", "xla_tpu_mosaic_fusion", "xla_tpu_rwb_fusion",
           "xla_tpu_dot_dot_fusion_duplicated", "xla_tpu_order_dot_after_layout", "xla_tpu_megacore_fusion_allow_ags",
           "xla_tpu_prefetch_interval_picker_size_override", "xla_tpu_async_copy_bandwidth_scaling_factor",
           "xla_tpu_pcie_bandwidth_multiplier", "xla_tpu_impure_use_lmr_on_gxc"},
          "the compiler's fusion and cost-model choices: tpusim plans its kernels with its own cost model");
  for (const char* n :
       {"xla_tpu_enable_sparse_core_collective_offload_2d_all_gather",
        "xla_tpu_enable_sparse_core_collective_offload_3d_all_gather",
        "xla_tpu_enable_sparse_core_collective_offload_nd_reduce_scatter",
        "xla_tpu_enable_sparse_core_reduce_scatter_v2", "xla_tpu_enable_offloading_gather_to_sparsecore"})
    r.push_back({n, KeyClass::unmodelled, "more work on the SparseCores", "false", nullptr});
  r.push_back({"xla_tpu_sparse_core_all_reduce_offload_min_size_in_bytes", KeyClass::unmodelled,
               "which all-reduces are offloaded, by size", "", nullptr});
  for (const char* n :
       {"xla_tpu_bf16_emission_mode", "xla_tpu_impure_enable_packed_bf16_math_ops", "xla_tpu_accumulate_into_mrb"})
    r.push_back({n, KeyClass::unmodelled, "the vector unit's bfloat16 arithmetic", "", nullptr});
  return r;
}

}  // namespace

const std::vector<XlaFlagRule>& xla_flag_rules() {
  static const std::vector<XlaFlagRule> rules = make_rules();
  return rules;
}

std::vector<XlaFlagText> split_xla_flags(const std::string& text) {
  std::vector<XlaFlagText> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i >= text.size()) break;
    const std::size_t start = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    const std::string word = text.substr(start, i - start);
    XlaFlagText f;
    f.offset = start;
    std::size_t b = 0;
    while (b < word.size() && b < 2 && word[b] == '-') ++b;
    const std::size_t eq = word.find('=');
    f.flag.name = word.substr(b, eq == std::string::npos ? std::string::npos : eq - b);
    f.flag.value = eq == std::string::npos ? "true" : word.substr(eq + 1);
    out.push_back(std::move(f));
  }
  return out;
}

namespace {

// A flag's place: the string's own location, moved to the flag when the
// string sits on one line (a quoted scalar starts one column before its text).
[[noreturn]] void fail_at(const sim::YamlNode& node, std::size_t offset, const std::string& what) {
  sim::SourceLocation at = node.location();
  const std::string text = node.as_string();
  if (at.line > 0 && text.find('\n') == std::string::npos)
    at.column += static_cast<int>(offset) + (node.raw().Tag() == "!" ? 1 : 0);
  throw sim::ConfigError(at, node.path(), what);
}

}  // namespace

void load_xla_flags(const sim::YamlNode& node, MaxTextConfig& cfg) {
  if (!node.is_scalar()) node.fail("expected the flags as one string, \"--flag=value --flag=value ...\"");
  std::vector<std::string> known;
  for (const auto& r : xla_flag_rules()) known.push_back(r.name);
  for (const auto& f : split_xla_flags(node.as_string())) {
    const std::string shown = "--" + f.flag.name;
    const XlaFlagRule* rule = nullptr;
    for (const auto& r : xla_flag_rules())
      if (r.name == f.flag.name) rule = &r;
    if (!rule) {
      const std::string hint = sim::did_you_mean(f.flag.name, known);
      fail_at(node, f.offset,
              "unknown XLA flag '" + shown + "'" + (hint.empty() ? "" : "; " + hint) +
                  " (docs/maxtext.md lists the flags tpusim knows)");
    }
    cfg.xla.flags[f.flag.name] = f.flag.value;
    const ListedKey listed{shown, f.flag.value, node.location().str(), rule->why};
    if (rule->cls == KeyClass::modelled) {
      if (!rule->apply(f.flag.value, cfg.xla)) fail_at(node, f.offset, "bad value '" + f.flag.value + "' for " + shown);
    } else if (rule->cls == KeyClass::ignored || (!rule->neutral.empty() && same_value(f.flag.value, rule->neutral))) {
      cfg.ignored_keys.push_back(listed);
    } else if (cfg.allow_unmodelled) {
      cfg.approximations.push_back(listed);
    } else {
      fail_at(node, f.offset,
              shown + " changes performance in a way tpusim does not model (" + rule->why +
                  "); remove it, or set allow_unmodelled: true to run without it");
    }
  }
}

}  // namespace workloads
