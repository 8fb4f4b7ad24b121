// The bad-input catalogue: one case per way a user can be wrong, each run
// through the real binary as a user would. Every case asserts the exit
// status, that the message names file:line:column (or the --set it came
// from) and the key path, what it says, that nothing crashed, and that no
// output file was left behind, half-written or not. Bad input is exit 2 and
// also fails `tpusim validate` with the same message; a simulated system
// that cannot do the job (does not fit in HBM) is exit 3 and its message
// says what does not fit (it is about the system, not a line of the file).
// The first cases live in test_bad_input.cpp; docs/hardening.md lists all.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "cli_runner.h"

namespace test_bad_input_catalogue {

using testing_cli::run_tpusim;
namespace fs = std::filesystem;

namespace {

struct BadCase {
  const char* mistake;   // the way the user is wrong
  const char* command;   // "run FILE ..." or "sweep FILE ..." (paths from the source dir)
  int status;            // 2 bad input, 3 the simulated system fails
  const char* location;  // expected "file:line:column:" (or "--set ...:") prefix, "" for exit 3
  const char* key_path;  // expected "key.path:" after the location, "" when the whole document is wrong
  const char* says;
  const char* validate_says = nullptr;  // what `tpusim validate` says instead, when it differs
};

const BadCase kCases[] = {
    // Files that are not experiments at all.
    {"an empty file", "run tests/data/bad/empty.yaml", 2, "tests/data/bad/empty.yaml:1:1:", "",
     "an experiment file must be a mapping", "cannot tell what this file is"},
    {"a list instead of a mapping", "run tests/data/bad/not_mapping.yaml", 2, "tests/data/bad/not_mapping.yaml:1:1:",
     "", "an experiment file must be a mapping", "cannot tell what this file is"},
    {"a second YAML document (yaml-cpp would read only the first)", "run tests/data/bad/two_documents.yaml", 2,
     "tests/data/bad/two_documents.yaml:4:1:", "", "a second YAML document: a file holds one document"},
    {"a YAML tag (kept by yaml-cpp, acted on by nothing)", "run tests/data/bad/yaml_tag.yaml", 2,
     "tests/data/bad/yaml_tag.yaml:1:7:", "name:", "YAML tags are not supported"},
    {"a device instead of a file (read forever)", "run /dev/zero", 2, "/dev/zero:", "", "not a regular file"},
    {"a name that would leave runs/", "run tests/data/bad/name_escapes.yaml", 2,
     "tests/data/bad/name_escapes.yaml:1:7:", "name:",
     "a name is at most 100 letters, digits, '_', '-', '.' (not starting with '.' or '-'), got '../../escaped'"},
    {"a mesh axis name that reads as a key path", "run tests/data/bad/mesh_axis_name.yaml", 2,
     "tests/data/bad/mesh_axis_name.yaml:4:16:", "mesh.a[x]:", "a mesh axis name is at most 100 letters"},
    {"a key given twice (YAML would silently keep one)", "run tests/data/bad/duplicate_key.yaml", 2,
     "tests/data/bad/duplicate_key.yaml:8:3:", "workload.m:", "duplicate key 'm' (first given at line 5)"},
    {"an alias inside the node it names", "run tests/data/bad/alias_cycle.yaml", 2,
     "tests/data/bad/alias_cycle.yaml:8:10:", "workload.block.bn:", "an alias refers to a node that contains it"},
    {"aliases that expand to millions of values", "run tests/data/bad/alias_bomb.yaml", 2,
     "tests/data/bad/alias_bomb.yaml:8:4:", "f:", "aliases expand this document to more than 1000000 values"},
    // Wrong types and values.
    {"a word where a boolean goes", "run tests/data/bad/wrong_bool.yaml", 2,
     "tests/data/bad/wrong_bool.yaml:3:13:", "functional:", "expected true or false, got 'yes please'"},
    {"a word that is not one of the choices", "run tests/data/bad/replicas_value.yaml", 2,
     "tests/data/bad/replicas_value.yaml:3:11:", "replicas:",
     "unknown replicas mode 'one'; expected one of: auto (one chip per group of identical replicas"},
    {"a collective launch cost in seconds where microseconds were meant",
     "run tests/data/bad/collective_launch_range.yaml", 2, "tests/data/bad/collective_launch_range.yaml:7:52:",
     "chip.ici.collective_launch:", "value 5 is out of range: expected between 0 and 0.001 s"},
    {"a sustained share of the clock in percent where a fraction is meant",
     "run tests/data/bad/chip_compute_efficiency_range.yaml", 2,
     "tests/data/bad/chip_compute_efficiency_range.yaml:5:23:", "chip.compute_efficiency:",
     "value 94 is out of range: expected between 0.01 and 1"},
    {"a negative energy per operation", "run tests/data/bad/energy_range.yaml", 2,
     "tests/data/bad/energy_range.yaml:8:20:", "chip.energy.mac_pj:",
     "value -2 is out of range: expected between 0 and"},
    {"a limit out of range", "run tests/data/bad/limits_time.yaml", 2, "tests/data/bad/limits_time.yaml:3:24:",
     "limits.max_sim_time:", "is out of range: expected between 1e-12 and 1000000 s"},
    {"a wall-time limit of zero", "run tests/data/bad/limits_wall_time.yaml", 2,
     "tests/data/bad/limits_wall_time.yaml:3:25:", "limits.max_wall_time:",
     "value 0 is out of range: expected between 0.001 and 10000000 s"},
    {"a negative memory limit", "run tests/data/bad/limits_memory.yaml", 2,
     "tests/data/bad/limits_memory.yaml:3:22:", "limits.max_memory:", "value -8.0e+9 is out of range: expected > 0 B"},
    {"a PE-cycle budget that is not a number", "run tests/data/bad/limits_pe_cycles.yaml", 2,
     "tests/data/bad/limits_pe_cycles.yaml:3:25:", "limits.max_pe_cycles:", "expected a number"},
    {"an event limit of zero", "run tests/data/bad/limits_events.yaml", 2,
     "tests/data/bad/limits_events.yaml:4:15:", "limits.max_events:", "value 0 is out of range: expected >= 1 events"},
    {"an unknown collective", "run tests/data/bad/collective_op.yaml", 2,
     "tests/data/bad/collective_op.yaml:6:7:", "workload.op:",
     "unknown collective 'allreduce'; expected one of: all_reduce, reduce_scatter, all_gather, all_to_all, permute, "
     "broadcast; did you mean 'all_reduce'?"},
    // Chip and pod files.
    {"an unknown pod file", "run tests/data/bad/unknown_pod.yaml", 2,
     "tests/data/bad/unknown_pod.yaml:3:6:", "pod:", "unknown pod 'v4-4x4x9'; did you mean 'v4-4x4x4' or 'v4-4x4x8'?"},
    {"a chip file with a bad value (named in the chip file)", "run tests/data/bad/bad_chip_file.yaml", 2,
     "tests/data/bad/chips/broken-chip.yaml:7:9:", "mxu.rows:", "expected an integer, got '128.5'"},
    // Topology and mesh.
    {"an unknown topology", "run tests/data/bad/unknown_topology.yaml", 2,
     "tests/data/bad/unknown_topology.yaml:4:13:", "pod.topology:",
     "unknown topology 'torus4d'; expected one of: ring (1 axis), torus2d (2 axes), torus3d (3 axes); did you mean "
     "'torus2d' or 'torus3d'?"},
    {"a shape of the wrong rank for the topology", "run tests/data/bad/shape_rank.yaml", 2,
     "tests/data/bad/shape_rank.yaml:5:10:", "pod.shape:", "a torus2d needs a list of 2 axis sizes"},
    {"more chips than supported", "run tests/data/bad/too_many_chips.yaml", 2,
     "tests/data/bad/too_many_chips.yaml:5:10:", "pod.shape:", "chips are supported, got 16777216"},
    {"wraparound flags that do not match the axes", "run tests/data/bad/wraparound_length.yaml", 2,
     "tests/data/bad/wraparound_length.yaml:6:15:", "pod.wraparound:", "a list of 3 booleans"},
    {"mesh axes that do not multiply to the chip count", "run tests/data/bad/mesh_product.yaml", 2,
     "tests/data/bad/mesh_product.yaml:6:7:", "mesh:", "mesh axes multiply to 8 chips but the pod has 16"},
    {"a mesh that counts chips where the chip has two devices each", "run tests/data/bad/mesh_devices.yaml", 2,
     "tests/data/bad/mesh_devices.yaml:4:7:", "mesh:",
     "mesh axes multiply to 4 devices but the pod has 8 (4 chips of 2 devices"},
    {"a chip whose device count is neither 1 nor its TensorCores", "run tests/data/bad/chip_devices.yaml", 2,
     "tests/data/bad/chip_devices.yaml:5:12:", "chip.devices:", "a chip is 1 device or one device per TensorCore"},
    {"a mesh axis that divides no physical axis", "run tests/data/bad/mesh_split.yaml", 2,
     "tests/data/bad/mesh_split.yaml:6:14:", "mesh.data:",
     "size 3 does not map onto the 4x6 topology (mesh axes take consecutive axes x, y, z, or a factor that divides "
     "one); sizes that map here: 1, 2, 4, 8, 12, 24"},
    // Shardings and parallelism.
    {"a sharding that does not divide the dimension", "run tests/data/bad/shard_indivisible.yaml", 2,
     "tests/data/bad/shard_indivisible.yaml:10:6:", "workload.m:", "1001 is not divisible by 4"},
    {"a mesh axis no parallelism uses (degrees vs chips)", "run tests/data/bad/train_unused_axis.yaml", 2,
     "tests/data/bad/train_unused_axis.yaml:12:16:", "workload.parallelism:",
     "data x tensor x pipeline = 2 x 1 x 1 = 2 chips, but the pod has 8"},
    {"a parallel degree no mesh axis has", "run tests/data/bad/train_degree.yaml", 2,
     "tests/data/bad/train_degree.yaml:12:37:", "workload.parallelism.tensor:", "no unused mesh axis has 3 chips"},
    {"training sizes whose product overflows 64 bits (was an internal error)",
     "run tests/data/bad/train_size_overflow.yaml", 2,
     "tests/data/bad/train_size_overflow.yaml:10:10:", "workload.model:",
     "attention probabilities: 576460752303423488 x 1048576 does not fit in 64 bits (with 524288 "
     "sequences per microbatch)"},
    {"pipeline stages that do not divide the layers", "run tests/data/bad/train_stages.yaml", 2,
     "tests/data/bad/train_stages.yaml:10:27:", "workload.parallelism.pipeline:",
     "4 pipeline stages do not divide the 6 Transformer blocks"},
    {"microbatches that do not divide the batch", "run tests/data/bad/train_microbatches.yaml", 2,
     "tests/data/bad/train_microbatches.yaml:10:47:", "workload.parallelism.microbatches:",
     "3 microbatches do not divide the per-replica batch of 16"},
    {"a global batch that does not divide over data parallelism", "run tests/data/bad/train_batch.yaml", 2,
     "tests/data/bad/train_batch.yaml:8:17:", "workload.global_batch:",
     "global_batch 10 does not divide over data parallelism of 4"},
    {"attention heads that do not split over tensor parallelism", "run tests/data/bad/train_heads.yaml", 2,
     "tests/data/bad/train_heads.yaml:7:74:", "workload.model.heads:",
     "10 does not split evenly over tensor parallelism of 4"},
    // Memory that does not fit: the simulated system fails (exit 3).
    {"training state that does not fit in HBM", "run tests/data/bad/train_oom.yaml", 3, "", "",
     "does not fit in HBM: chip 0"},
    {"offloaded activations that do not fit in the host's memory", "run tests/data/bad/train_offload_host_oom.yaml", 3,
     "", "",
     "does not fit in host memory: chip 0 offloads 192.2 GiB of activations (remat: offload), its share of "
     "the host's DRAM is 104.3 GiB (host.memory 417.2 GiB over 4 chips)"},
    {"a KV cache that does not fit in HBM", "run tests/data/bad/inference_oom.yaml", 3, "", "",
     "does not fit in HBM: each chip needs 64.2 GiB of 16.0 GiB: weights 189.0 MiB, KV cache 64.0 GiB (4096 "
     "sequences x 2048 tokens of model.seq_len x 8192 B). The largest batch that fits is 1012 (workload.batch)"},
    {"matmul operands that do not fit in HBM", "run tests/data/bad/matmul_oom.yaml", 3, "", "",
     "does not fit: A, B and C need 25.8 GB of HBM but teach-8x8 has 1.07 GB"},
    // --set overrides.
    {"a --set path that does not exist", "run configs/experiments/matmul-v4.yaml --set limits.max_events=5", 2,
     "--set limits.max_events=5:", "limits.max_events:", "the path does not exist: no key 'limits'"},
    // The size came from --set: the error names the --set, not the file's line (issue 48).
    {"a --set size that the sharding does not divide", "run configs/tutorial/ch5-case3.yaml --set workload.k=4097", 2,
     "--set workload.k=4097:", "workload.k:",
     "A dimension 1 (k = 4097) is split over mesh axis 'model' (size 2): 4097 is not divisible by 2"},
    // A missing parent: --set replaces leaves only, so the message offers the mapping form (issue 48).
    {"a --set under a mapping the file does not have",
     "run configs/tutorial/ch7-oom.yaml --set workload.precision.optimizer=bfloat16", 2,
     "--set workload.precision.optimizer=bfloat16:", "workload.precision.optimizer:",
     "give it as a mapping: --set \"workload.precision={optimizer: bfloat16}\""},
    {"a --set value that is not YAML", "run configs/experiments/matmul-v4.yaml --set workload.m=[1,", 2,
     "--set workload.m=[1,:", "workload.m:", "value is not valid YAML"},
    {"a --set value with a key twice",
     "run configs/experiments/allreduce-v4-4x4x4.yaml --set \"pod={topology: ring, shape: [4], shape: [8]}\"", 2,
     "--set pod={topology: ring, shape: [4], shape: [8]}:", "pod.shape:", "duplicate key 'shape'"},
    {"a --set value of the wrong type", "run configs/experiments/matmul-v4.yaml --set workload.k=lots", 2,
     "--set workload.k=lots:", "workload.k:", "expected a number, got 'lots'"},
    // Sweeps.
    {"a misspelt sweep key", "sweep tests/data/bad/sweep_unknown_key.yaml", 2,
     "tests/data/bad/sweep_unknown_key.yaml:4:1:", "sweeps:", "did you mean 'sweep'?"},
    {"a swept value that makes a point invalid", "sweep tests/data/bad/sweep_bad_point.yaml", 2,
     "tests/data/bad/sweep_bad_point.yaml:5:25:", "sweep.pod.shape[2]:", "point p002 (pod.shape=[0])"},
    // Every section is typed (sim::ParamTable): per section a wrong type, an
    // out-of-range value, a misspelt word with its suggestion, an unknown key
    // with its suggestion.
    // Experiment top level.
    {"a list where the experiment name goes", "run tests/data/bad/name_list.yaml", 2,
     "tests/data/bad/name_list.yaml:1:7:", "name:", "expected a string, got a list"},
    {"a misspelt fidelity (letters swapped)", "run tests/data/bad/fidelity_typo.yaml", 2,
     "tests/data/bad/fidelity_typo.yaml:3:11:", "fidelity:",
     "unknown fidelity 'tlie'; expected one of: kernel (a whole kernel is one op: a flow on the chip's HBM capped "
     "by its engine time), tile (every block's DMA and MXU ops, each MXU op in closed form), pe (every processing "
     "element every cycle); did you mean 'tile'?"},
    // limits.
    {"a word where an event limit goes", "run tests/data/bad/limits_type.yaml", 2,
     "tests/data/bad/limits_type.yaml:4:15:", "limits.max_events:", "expected a number, got 'lots'"},
    {"a misspelt limit", "run tests/data/bad/limits_unknown_key.yaml", 2, "tests/data/bad/limits_unknown_key.yaml:4:3:",
     "limits.max_sim_tme:", "unknown key 'max_sim_tme'; did you mean 'max_sim_time'?"},
    // pod.
    {"a word where the pod shape goes", "run tests/data/bad/pod_shape_type.yaml", 2,
     "tests/data/bad/pod_shape_type.yaml:5:10:", "pod.shape:", "expected a list of integer values, got 'four'"},
    {"an ICI packet of zero bytes", "run tests/data/bad/pod_packet_range.yaml", 2,
     "tests/data/bad/pod_packet_range.yaml:6:17:", "pod.packet_bytes:",
     "value 0 is out of range: expected between 1 and 1073741824 B"},
    {"a hop latency beyond the chip's range (1e8 s wrapped simulated time)",
     "run tests/data/bad/pod_link_latency_range.yaml", 2, "tests/data/bad/pod_link_latency_range.yaml:8:17:",
     "pod.link_latency:", "value 1.0e+8 is out of range: expected between 0 and 0.01 s"},
    {"a chip clock out of range (was '<input>: mxu.period')", "run tests/data/bad/chip_clock_range.yaml", 2,
     "tests/data/bad/chip_clock_range.yaml:5:10:", "chip.clock:",
     "value 1.0e-30 is out of range: expected between 1000000 and 10000000000 Hz"},
    {"a topology needing more ICI ports than the chip has (links_per_chip was ignored)",
     "run tests/data/bad/pod_links_per_chip.yaml", 2, "tests/data/bad/pod_links_per_chip.yaml:7:10:", "pod.shape:",
     "this torus3d joins a chip to 6 neighbour links, but the chip has 4 ICI ports (ici.links_per_chip)"},
    {"a misspelt switching", "run tests/data/bad/pod_switching_typo.yaml", 2,
     "tests/data/bad/pod_switching_typo.yaml:6:14:", "pod.switching:",
     "unknown switching 'cut-through'; expected one of: cut_through (a packet's head moves on after the hop latency), "
     "store_and_forward (every hop waits for the whole packet); did you mean 'cut_through'?"},
    {"a misspelt network model", "run tests/data/bad/pod_network_model_typo.yaml", 2,
     "tests/data/bad/pod_network_model_typo.yaml:3:50:", "pod.network_model:",
     "unknown network model 'packets'; expected one of: fluid (max-min fair flows, the fast model), packet (every "
     "packet hop by hop, the slow reference); did you mean 'packet'?"},
    {"a misspelt pod key", "run tests/data/bad/pod_unknown_key.yaml", 2, "tests/data/bad/pod_unknown_key.yaml:6:3:",
     "pod.wrapround:", "unknown key 'wrapround'; did you mean 'wraparound'?"},
    // pod: slices joined by DCN.
    {"no slices at all", "run tests/data/bad/dcn_slices_range.yaml", 2, "tests/data/bad/dcn_slices_range.yaml:5:11:",
     "pod.slices:", "value 0 is out of range: expected between 1 and 262144 slices"},
    {"several slices but no slice", "run tests/data/bad/dcn_slice_missing.yaml", 2,
     "tests/data/bad/dcn_slice_missing.yaml:4:3:", "pod.slice:",
     "missing required key: the pod file or mapping every slice is"},
    // Stragglers: chips of the pod, each slowed once, by a share in (0, 1].
    {"a straggler outside the pod", "run tests/data/bad/straggler_outside_pod.yaml", 2,
     "tests/data/bad/straggler_outside_pod.yaml:5:17:", "stragglers[0].chips[1]:",
     "chip 4 is outside the pod: its chips are 0 to 3"},
    {"a straggler faster than the chip", "run tests/data/bad/straggler_compute_range.yaml", 2,
     "tests/data/bad/straggler_compute_range.yaml:5:27:", "stragglers[0].compute:", "value 1.5 is out of range"},
    {"a chip slowed twice", "run tests/data/bad/straggler_twice.yaml", 2,
     "tests/data/bad/straggler_twice.yaml:6:17:", "stragglers[1].chips[1]:", "chip 2 is already a straggler (entry 0)"},
    // Degraded and failed links: neighbouring chips of the pod, each link direction once, a share in [0, 1].
    {"a link from a chip outside the pod", "run tests/data/bad/link_outside_pod.yaml", 2,
     "tests/data/bad/link_outside_pod.yaml:7:14:", "pod.links[0].from:",
     "chip (4,0) is outside the pod: it is 4x4, so x runs from 0 to 3"},
    {"a link between chips that are not neighbours", "run tests/data/bad/link_not_neighbours.yaml", 2,
     "tests/data/bad/link_not_neighbours.yaml:7:26:", "pod.links[0].to:",
     "chips (0,0) and (2,0) are not neighbours: they are 2 apart along x"},
    {"a link given twice", "run tests/data/bad/link_twice.yaml", 2,
     "tests/data/bad/link_twice.yaml:8:23:", "pod.links[1].to:", "the link (3) - (2) is already in entry 0"},
    {"a link faster than nominal", "run tests/data/bad/link_bandwidth_range.yaml", 2,
     "tests/data/bad/link_bandwidth_range.yaml:7:39:", "pod.links[0].bandwidth:",
     "value 1.5 is out of range: expected between 0 and 1"},
    {"failed links that cut the ring in two", "run tests/data/bad/link_cut.yaml", 3, "", "",
     "along x avoids the failed link chip 2 (2) -> chip 3 (3) and the failed link chip 6 (6) -> chip 5 (5) "
     "(pod.links)"},
    {"a misspelt DCN key", "run tests/data/bad/dcn_unknown_key.yaml", 2,
     "tests/data/bad/dcn_unknown_key.yaml:6:9:", "pod.dcn.nic_bandwith:", "did you mean 'nic_bandwidth'?"},
    {"a fabric that adds bandwidth", "run tests/data/bad/dcn_oversubscription_range.yaml", 2,
     "tests/data/bad/dcn_oversubscription_range.yaml:6:27:", "pod.dcn.oversubscription:",
     "value 0.5 is out of range: expected between 1 and 1000"},
    {"a word where the DCN latency goes", "run tests/data/bad/dcn_latency_type.yaml", 2,
     "tests/data/bad/dcn_latency_type.yaml:6:18:", "pod.dcn.latency:", "expected a number, got 'fast'"},
    {"a misspelt DCN axis", "run tests/data/bad/dcn_axes_unknown.yaml", 2,
     "tests/data/bad/dcn_axes_unknown.yaml:6:14:", "pod.dcn_axes[0]:", "unknown mesh axis 'dta'; did you mean 'data'?"},
    {"a DCN axis that does not divide the slices", "run tests/data/bad/dcn_axes_divide.yaml", 2,
     "tests/data/bad/dcn_axes_divide.yaml:6:13:", "pod.dcn_axes:", "data (4) does not divide 3 slices"},
    {"several slices and no axis across them", "run tests/data/bad/dcn_axes_missing.yaml", 2,
     "tests/data/bad/dcn_axes_missing.yaml:4:3:", "pod.dcn_axes:",
     "the 2 slices need the mesh axes placed across them"},
    {"an ICI axis that does not fit a slice", "run tests/data/bad/dcn_ici_axis_fit.yaml", 2,
     "tests/data/bad/dcn_ici_axis_fit.yaml:7:15:", "mesh.model:", "size 4 does not map onto the 6x4 slice topology"},
    {"a host of no chips", "run tests/data/bad/dcn_host_range.yaml", 2, "tests/data/bad/dcn_host_range.yaml:8:17:",
     "chip.host.chips:", "value 0 is out of range: expected between 1 and 64 chips"},
    {"NICs of no bandwidth", "run tests/data/bad/dcn_nic_bandwidth_range.yaml", 2,
     "tests/data/bad/dcn_nic_bandwidth_range.yaml:6:24:", "pod.dcn.nic_bandwidth:",
     "value 0 is out of range: expected > 0 B/s"},
    {"a list where the host link's bandwidth goes", "run tests/data/bad/dcn_host_bandwidth_type.yaml", 2,
     "tests/data/bad/dcn_host_bandwidth_type.yaml:6:25:", "pod.dcn.host_bandwidth:", "expected a number, got a list"},
    {"a chip's PCIe of negative bandwidth", "run tests/data/bad/chip_host_pcie_range.yaml", 2,
     "tests/data/bad/chip_host_pcie_range.yaml:8:36:", "chip.host.pcie_bandwidth:",
     "value -1.6e10 is out of range: expected > 0 B/s"},
    {"a NIC bandwidth with a unit", "run tests/data/bad/chip_host_nic_type.yaml", 2,
     "tests/data/bad/chip_host_nic_type.yaml:8:35:", "chip.host.nic_bandwidth:", "expected a number, got '200Gbps'"},
    {"the packet model across slices", "run tests/data/bad/dcn_packet_model.yaml", 2,
     "tests/data/bad/dcn_packet_model.yaml:4:3:", "pod.network_model:", "the packet model has no DCN"},
    // kind: collective.
    {"a word where a collective's bytes go", "run tests/data/bad/collective_bytes_type.yaml", 2,
     "tests/data/bad/collective_bytes_type.yaml:7:10:", "workload.bytes:", "expected a number, got 'lots'"},
    {"an element size that would wrap to 2 in 32 bits", "run tests/data/bad/collective_element_bytes_wrap.yaml", 2,
     "tests/data/bad/collective_element_bytes_wrap.yaml:8:18:", "workload.element_bytes:",
     "value 4294967298 is out of range: expected between 1 and 8 B"},
    {"a broadcast root that would wrap to 0 in 32 bits", "run tests/data/bad/collective_root_wrap.yaml", 2,
     "tests/data/bad/collective_root_wrap.yaml:8:9:", "workload.root:",
     "value 4294967296 is out of range: expected between 0 and 2147483647"},
    {"a misspelt collective algorithm", "run tests/data/bad/collective_algorithm_typo.yaml", 2,
     "tests/data/bad/collective_algorithm_typo.yaml:8:14:", "workload.algorithm:",
     "unknown algorithm 'bidirectional-ring'; expected one of: auto (the op's default), ring (all_reduce, "
     "reduce_scatter, all_gather, broadcast: one ring through the group), bidirectional_ring (all_reduce, "
     "reduce_scatter, all_gather, broadcast: the ring both ways, half the data each way), torus (all_reduce, "
     "reduce_scatter, all_gather: streams along every axis in both directions at once), direct (all_to_all, permute: "
     "every block straight to its chip), dimension_ordered (all_to_all: one phase per axis, blocks aggregated and "
     "forwarded); did you mean 'bidirectional_ring'?"},
    {"a misspelt collective key", "run tests/data/bad/collective_unknown_key.yaml", 2,
     "tests/data/bad/collective_unknown_key.yaml:8:3:", "workload.element_byte:",
     "unknown key 'element_byte'; did you mean 'element_bytes'?"},
    // kind: train.
    {"a word where a training flag goes", "run tests/data/bad/train_overlap_type.yaml", 2,
     "tests/data/bad/train_overlap_type.yaml:9:12:", "workload.overlap:", "expected true or false, got 'sometimes'"},
    {"a word where the collective-matmul flag goes", "run tests/data/bad/train_collective_matmul_type.yaml", 2,
     "tests/data/bad/train_collective_matmul_type.yaml:9:22:", "workload.collective_matmul:",
     "expected true or false, got 'maybe'"},
    {"a global batch of zero", "run tests/data/bad/train_batch_range.yaml", 2,
     "tests/data/bad/train_batch_range.yaml:8:17:", "workload.global_batch:",
     "value 0 is out of range: expected between 1 and 16777216 samples"},
    {"microbatches that would wrap to 1 in 32 bits", "run tests/data/bad/train_microbatches_range.yaml", 2,
     "tests/data/bad/train_microbatches_range.yaml:11:19:", "workload.parallelism.microbatches:",
     "value 4294967297 is out of range: expected between 1 and 65536"},
    {"a misspelt elementwise mode", "run tests/data/bad/train_elementwise_typo.yaml", 2,
     "tests/data/bad/train_elementwise_typo.yaml:9:16:", "workload.elementwise:",
     "unknown elementwise mode 'fuse'; expected one of: fused (no HBM traffic of their own), unfused (each op's own "
     "HBM round trip); did you mean 'fused'?"},
    {"a misspelt pipeline schedule", "run tests/data/bad/train_schedule_typo.yaml", 2,
     "tests/data/bad/train_schedule_typo.yaml:9:72:", "workload.parallelism.schedule:",
     "unknown pipeline schedule 'gpip'; expected one of: gpipe (all forwards, then all backwards), 1f1b (one "
     "forward, one backward: PipeDream-Flush), interleaved (1F1B over virtual_stages chunks of layers per stage "
     "(Megatron-LM)); did you mean 'gpipe'?"},
    {"a misspelt MXU dataflow", "run tests/data/bad/mxu_dataflow_typo.yaml", 2,
     "tests/data/bad/mxu_dataflow_typo.yaml:5:41:", "chip.mxu.dataflow:",
     "unknown MXU dataflow 'oss'; expected one of: ws (weight-stationary: weight tiles stay, activations stream), "
     "os (output-stationary: output tiles accumulate in place), is (input-stationary: activation tiles stay, "
     "weights stream); did you mean 'os'?"},
    {"virtual stages that do not divide a pipeline stage's layers", "run tests/data/bad/train_virtual_stages.yaml", 2,
     "tests/data/bad/train_virtual_stages.yaml:10:89:", "workload.parallelism.virtual_stages:",
     "4 virtual stages do not divide the 2 layers of each pipeline stage; chunks must hold equal numbers of layers"},
    {"context parallelism with a sliding window", "run tests/data/bad/train_context_sliding_window.yaml", 2,
     "tests/data/bad/train_context_sliding_window.yaml:8:26:", "workload.parallelism.context:",
     "the model has a sliding window (model.sliding_window), which tpusim's ring attention does not model"},
    // kind: maxtext (docs/maxtext.md): MaxText's keys and flags.
    {"a misspelt MaxText key", "run tests/data/maxtext/bad/unknown_key.yaml", 2,
     "tests/data/maxtext/bad/unknown_key.yaml:9:5:", "workload.config.per_device_batch_sise:",
     "unknown MaxText key 'per_device_batch_sise'; did you mean 'per_device_batch_size'?"},
    {"a MaxText key that changes performance and is not modelled", "run tests/data/maxtext/bad/unmodelled_key.yaml", 2,
     "tests/data/maxtext/bad/unmodelled_key.yaml:11:5:", "workload.config.matmul_precision:",
     "'matmul_precision' changes performance in a way tpusim does not model"},
    {"a misspelt XLA flag", "run tests/data/maxtext/bad/unknown_xla_flag.yaml", 2,
     "tests/data/maxtext/bad/unknown_xla_flag.yaml:8:53:", "workload.xla_flags:",
     "unknown XLA flag '--xla_tpu_enable_async_colective_fusion'; did you mean "
     "'xla_tpu_enable_async_collective_fusion'?"},
    {"a MaxText mesh that does not fill the chips", "run tests/data/maxtext/bad/mesh_not_dividing.yaml", 2,
     "tests/data/maxtext/bad/mesh_not_dividing.yaml:9:27:", "workload.config.ici_fsdp_parallelism:",
     "the ici_*_parallelism values multiply to 6, not the 8 chips of a slice"},
    {"a key the MaxText model file sets too", "run tests/data/maxtext/bad/model_key_twice.yaml", 2,
     "tests/data/maxtext/bad/model_key_twice.yaml:10:5:", "workload.config.base_num_decoder_layers:",
     "'base_num_decoder_layers' is set by the model file too"},
    {"a misspelt remat policy", "run tests/data/bad/train_remat_typo.yaml", 2,
     "tests/data/bad/train_remat_typo.yaml:8:10:", "workload.remat:",
     "unknown remat policy 'minimum'; expected one of: none (keep every activation the backward pass reads), full "
     "(keep each repeated layer's input, recompute its forward in the backward), minimal (keep each repeated layer's "
     "input and its weight matmuls' outputs, recompute the rest of its forward), offload (move each repeated "
     "layer's stash to host memory in the forward and back for its backward), save_dot_except_mlpwi (MaxText: keep "
     "Q, K, V, the output projection and the MLP's down projection), save_dot_except_mlp (MaxText: keep Q, K, V and "
     "the output projection), save_qkv_proj (MaxText: keep Q, K and V), save_out_proj (MaxText: keep the output "
     "projection), qkv_proj_offloaded (MaxText: offload Q, K and V to host memory), minimal_offloaded (MaxText: "
     "offload every weight matmul's output), custom (MaxText: each named tensor where remat_tensors puts it); did "
     "you mean 'minimal'?"},
    {"an fsdp axis missing from the mesh", "run tests/data/bad/train_fsdp_axis.yaml", 2,
     "tests/data/bad/train_fsdp_axis.yaml:10:23:", "workload.parallelism.fsdp:",
     "'fdsp' is not a mesh axis; the mesh has fsdp 4 (did you mean 'fsdp'?)"},
    {"key/value heads that do not divide the query heads", "run tests/data/bad/train_kv_heads.yaml", 2,
     "tests/data/bad/train_kv_heads.yaml:5:87:", "workload.model.kv_heads:",
     "3 key/value heads do not divide the 8 query heads"},
    {"a misspelt precision", "run tests/data/bad/train_precision_typo.yaml", 2,
     "tests/data/bad/train_precision_typo.yaml:8:23:", "workload.precision.params:",
     "unknown number format 'fp32'; expected one of: bfloat16 (2 bytes), float32 (4 bytes)"},
    {"a context axis missing from the mesh", "run tests/data/bad/train_context_axis.yaml", 2,
     "tests/data/bad/train_context_axis.yaml:10:38:", "workload.parallelism.context:",
     "'cxt' is not a mesh axis; the mesh has data 2, ctx 2 (did you mean 'ctx'?)"},
    {"a context axis another parallelism uses", "run tests/data/bad/train_context_used.yaml", 2,
     "tests/data/bad/train_context_used.yaml:10:45:", "workload.parallelism.context:",
     "mesh axis 'ctx' is already used by data parallelism"},
    {"a sequence that does not split for ring attention", "run tests/data/bad/train_context_seq.yaml", 2,
     "tests/data/bad/train_context_seq.yaml:8:20:", "workload.model.seq_len:",
     "seq_len 1020 does not split into 2 x 4 = 8 equal chunks for context parallelism of 4"},
    {"context parallelism with materialized attention", "run tests/data/bad/train_context_materialized.yaml", 2,
     "tests/data/bad/train_context_materialized.yaml:10:26:", "workload.parallelism.context:",
     "context parallelism runs ring attention, a blockwise kernel: it needs model.attention: flash"},
    {"more experts per token than experts", "run tests/data/bad/train_moe_top_k.yaml", 2,
     "tests/data/bad/train_moe_top_k.yaml:8:58:", "workload.model.top_k:", "top_k 6 is more than the 4 experts"},
    {"expert parallelism for a dense model", "run tests/data/bad/train_moe_expert_dense.yaml", 2,
     "tests/data/bad/train_moe_expert_dense.yaml:10:25:", "workload.parallelism.expert:",
     "expert parallelism shards a mixture of experts; the model has none (model.experts)"},
    {"expert-parallel chips that do not divide the experts", "run tests/data/bad/train_moe_expert_divide.yaml", 2,
     "tests/data/bad/train_moe_expert_divide.yaml:10:25:", "workload.parallelism.expert:",
     "4 expert-parallel chips do not divide the 6 experts (each chip holds whole experts)"},
    {"measured routing loads not one per expert", "run tests/data/bad/train_moe_loads.yaml", 2,
     "tests/data/bad/train_moe_loads.yaml:9:52:", "workload.model.routing.loads:",
     "expected one load per expert (4), got 3"},
    {"an expert's measured share above 1 / top_k", "run tests/data/bad/train_moe_share.yaml", 2,
     "tests/data/bad/train_moe_share.yaml:9:53:", "workload.model.routing.loads[0]:",
     "is above 1 / top_k: a token goes to an expert at most once"},
    {"a misspelt routing distribution", "run tests/data/bad/train_moe_routing_typo.yaml", 2,
     "tests/data/bad/train_moe_routing_typo.yaml:8:75:", "workload.model.routing.distribution:",
     "unknown distribution 'zipff'; expected one of: uniform, zipf, measured; did you mean 'zipf'?"},
    {"an expert width tensor parallelism does not divide", "run tests/data/bad/train_moe_tensor.yaml", 2,
     "tests/data/bad/train_moe_tensor.yaml:8:64:", "workload.model.expert_d_ff:",
     "the experts' MLP width 1023 does not split evenly over tensor parallelism of 2"},
    {"a negative input length", "run tests/data/bad/train_input_negative.yaml", 2,
     "tests/data/bad/train_input_negative.yaml:9:40:", "workload.input.length:",
     "value -5 is out of range: expected between 1 and 16777216 tokens"},
    {"an input length above seq_len", "run tests/data/bad/train_input_above_seq_len.yaml", 2,
     "tests/data/bad/train_input_above_seq_len.yaml:9:50:", "workload.input.lengths[1]:",
     "2048 tokens is above model.seq_len 1024"},
    {"a misspelt input distribution", "run tests/data/bad/train_input_distribution.yaml", 2,
     "tests/data/bad/train_input_distribution.yaml:9:25:", "workload.input.distribution:",
     "unknown distribution 'lognormall'; expected one of: fixed, uniform, lognormal, measured; did you mean "
     "'lognormal'?"},
    {"measured input lengths not one per replica", "run tests/data/bad/train_input_replicas.yaml", 2,
     "tests/data/bad/train_input_replicas.yaml:9:44:", "workload.input.lengths:",
     "expected one length per data-parallel replica (data x fsdp = 2), got 3"},
    {"input lengths for an MLP", "run tests/data/bad/train_input_mlp.yaml", 2,
     "tests/data/bad/train_input_mlp.yaml:9:10:", "workload.input:",
     "input lengths are tokens per sequence of a Transformer; the model is an mlp"},
    {"a misspelt training key", "run tests/data/bad/train_unknown_key.yaml", 2,
     "tests/data/bad/train_unknown_key.yaml:9:3:", "workload.optimiser:",
     "unknown key 'optimiser'; did you mean 'optimizer'?"},
    // kind: inference.
    {"a prompt and decode longer than the model's context window", "run tests/data/bad/inference_context.yaml", 2,
     "tests/data/bad/inference_context.yaml:8:15:", "workload.decode_len:",
     "prompt_len 2048 + decode_len 128 tokens exceed the model's context window (model.seq_len 2048)"},
    {"key/value heads that tensor parallelism can neither split nor replicate evenly",
     "run tests/data/bad/inference_kv_heads.yaml", 2, "tests/data/bad/inference_kv_heads.yaml:7:89:",
     "workload.model.kv_heads:", "3 key/value heads neither split over tensor parallelism of 8 nor replicate"},
    {"expert parallelism serving a dense model", "run tests/data/bad/inference_expert.yaml", 2,
     "tests/data/bad/inference_expert.yaml:11:25:", "workload.parallelism.expert:",
     "expert parallelism shards a mixture of experts; the model has none (model.experts)"},
    {"serving expert parallelism that does not divide the experts", "run tests/data/bad/inference_expert_split.yaml", 2,
     "tests/data/bad/inference_expert_split.yaml:11:25:", "workload.parallelism.expert:",
     "8 expert-parallel chips do not divide the 6 experts (each chip holds whole experts)"},
    {"a serving batch that does not split over the expert chips", "run tests/data/bad/inference_expert_batch.yaml", 2,
     "tests/data/bad/inference_expert_batch.yaml:8:10:", "workload.batch:",
     "batch 4 does not divide over data x expert parallelism of 1 x 8"},
    {"int8 weights on a chip without int8 matmuls", "run tests/data/bad/inference_int8_chip_lacks.yaml", 2,
     "tests/data/bad/inference_int8_chip_lacks.yaml:9:20:", "workload.dtype.weights:",
     "tpu-v2 has no int8 matmuls; its formats: bf16"},
    {"a request stream with one phase only", "run tests/data/bad/inference_stream_phase.yaml", 2,
     "tests/data/bad/inference_stream_phase.yaml:9:10:", "workload.phase:",
     "a request stream runs prefills and decode steps: phase must be both, got decode"},
    {"a request stream longer than the context window", "run tests/data/bad/inference_stream_window.yaml", 2,
     "tests/data/bad/inference_stream_window.yaml:12:17:", "workload.requests.decode_len:",
     "the longest prompt (4000) and output (256) exceed the model's context window (model.seq_len 4096)"},
    {"a misspelt batching", "run tests/data/bad/inference_stream_batching.yaml", 2,
     "tests/data/bad/inference_stream_batching.yaml:9:69:", "workload.requests.batching:", "continuous"},
    {"a prefill pool of the whole pod", "run tests/data/bad/inference_disagg_no_decode.yaml", 2,
     "tests/data/bad/inference_disagg_no_decode.yaml:16:20:", "workload.requests.prefill_chips:",
     "4 prefill chips leave none to decode: the pod has 4"},
    {"a prefill pool of no chips", "run tests/data/bad/inference_disagg_zero.yaml", 2,
     "tests/data/bad/inference_disagg_zero.yaml:16:20:", "workload.requests.prefill_chips:",
     "expected between 1 and 1048576 chips"},
    {"a prefill pool that splits a model replica", "run tests/data/bad/inference_disagg_replica.yaml", 2,
     "tests/data/bad/inference_disagg_replica.yaml:16:20:", "workload.requests.prefill_chips:",
     "1 chips are not whole model replicas of 2 chips (tensor 2)"},
    {"a prefill pool that splits a slice", "run tests/data/bad/inference_disagg_slices.yaml", 2,
     "tests/data/bad/inference_disagg_slices.yaml:12:74:", "workload.requests.prefill_chips:",
     "1 chips are not whole slices of 2"},
    {"static batching in a disaggregated decode pool", "run tests/data/bad/inference_disagg_static.yaml", 2,
     "tests/data/bad/inference_disagg_static.yaml:16:15:", "workload.requests.batching:",
     "the decode pool of disaggregated serving (prefill_chips) batches continuously"},
    {"closed-loop clients beside open-loop arrivals", "run tests/data/bad/inference_closed_rate.yaml", 2,
     "tests/data/bad/inference_closed_rate.yaml:13:11:", "workload.requests.rate:",
     "rate (open-loop arrivals) and concurrency (closed-loop clients, each sending when its previous request "
     "finishes) exclude each other"},
    {"more closed-loop clients than requests", "run tests/data/bad/inference_closed_clients.yaml", 2,
     "tests/data/bad/inference_closed_clients.yaml:13:18:", "workload.requests.concurrency:",
     "32 clients for 16 requests: the extra clients would send nothing"},
    {"a warm-up of every request", "run tests/data/bad/inference_closed_warmup.yaml", 2,
     "tests/data/bad/inference_closed_warmup.yaml:14:13:", "workload.requests.warmup:",
     "warmup 16 leaves none of the 16 requests to measure"},
    {"fewer closed-loop clients than replicas", "run tests/data/bad/inference_closed_replicas.yaml", 2,
     "tests/data/bad/inference_closed_replicas.yaml:16:18:", "workload.requests.concurrency:",
     "2 clients for 4 replicas (request i goes to replica i mod 4): each replica needs a client of its own"},
    {"closed-loop clients of disaggregated serving", "run tests/data/bad/inference_closed_disagg.yaml", 2,
     "tests/data/bad/inference_closed_disagg.yaml:17:20:", "workload.requests.prefill_chips:",
     "disaggregated serving (prefill_chips) is simulated open loop only"},
    {"a chunked-prefill budget below the slots", "run tests/data/bad/inference_chunked_budget.yaml", 2,
     "tests/data/bad/inference_chunked_budget.yaml:13:43:", "workload.requests.chunked_prefill.max_batched_tokens:",
     "4 tokens a step for 8 slots per replica: every decoding sequence's token must fit; at least 8"},
    {"chunked prefill with static batching", "run tests/data/bad/inference_chunked_static.yaml", 2,
     "tests/data/bad/inference_chunked_static.yaml:13:15:", "workload.requests.batching:",
     "chunked prefill mixes prompt chunks into the decode steps of continuous batching"},
    {"a prompt longer than every prefill bucket", "run tests/data/bad/inference_prefill_bucket.yaml", 2,
     "tests/data/bad/inference_prefill_bucket.yaml:13:34:", "workload.requests.prefill.buckets:",
     "the longest prompt (1500 tokens) is longer than every bucket (1024)"},
    {"a fixed decode step with chunked prefill", "run tests/data/bad/inference_fixed_chunked.yaml", 2,
     "tests/data/bad/inference_fixed_chunked.yaml:14:18:", "workload.requests.decode_step:",
     "a fixed decode step has no room for prompt chunks"},
    {"a misspelt inference key", "run tests/data/bad/inference_unknown_key.yaml", 2,
     "tests/data/bad/inference_unknown_key.yaml:7:3:", "workload.prompt_length:",
     "unknown key 'prompt_length'; did you mean 'prompt_len'?"},
    // kind: sharded_matmul.
    {"a word where the collective matmul flag goes", "run tests/data/bad/shard_bool_type.yaml", 2,
     "tests/data/bad/shard_bool_type.yaml:11:22:", "workload.collective_matmul:",
     "expected true or false, got 'maybe'"},
    {"a sharded matmul with no rows", "run tests/data/bad/shard_m_range.yaml", 2,
     "tests/data/bad/shard_m_range.yaml:7:6:", "workload.m:",
     "value 0 is out of range: expected between 1 and 4194304 elements"},
    {"a misspelt mesh axis in a PartitionSpec", "run tests/data/bad/shard_axis_typo.yaml", 2,
     "tests/data/bad/shard_axis_typo.yaml:10:12:", "workload.a_spec[0]:",
     "unknown mesh axis 'dta' in the spec of A; the mesh has: model data (did you mean 'data'?)"},
    {"a misspelt sharded matmul key", "run tests/data/bad/shard_unknown_key.yaml", 2,
     "tests/data/bad/shard_unknown_key.yaml:10:3:", "workload.a_spex:", "unknown key 'a_spex'; did you mean 'a_spec'?"},
    // kind: matmul.
    {"a misspelt matmul dtype", "run tests/data/bad/matmul_dtype_typo.yaml", 2,
     "tests/data/bad/matmul_dtype_typo.yaml:3:57:", "workload.dtype:",
     "unknown number format 'bf17'; expected one of: bf16 (bfloat16, FP32 accumulation), int8"},
    {"a matmul format the chip lacks", "run tests/data/bad/matmul_dtype_chip_lacks.yaml", 2,
     "tests/data/bad/matmul_dtype_chip_lacks.yaml:4:57:", "workload.dtype:",
     "tpu-v2 has no int8 matmuls; its formats: bf16"},
    {"int8 on v3, which has bf16 only (docs/reference/tpu-specs.md#runtime-table)",
     "run tests/data/bad/matmul_int8_v3.yaml", 2,
     "tests/data/bad/matmul_int8_v3.yaml:4:57:", "workload.dtype:", "tpu-v3 has no int8 matmuls; its formats: bf16"},
    {"an fp8 matmul in a functional run", "run tests/data/bad/matmul_dtype_functional_fp8.yaml", 2,
     "tests/data/bad/matmul_dtype_functional_fp8.yaml:4:57:", "workload.dtype:", "fp8's rounding is not modelled"},
    {"an int8 functional matmul too deep for exact sums", "run tests/data/bad/matmul_int8_functional_depth.yaml", 2,
     "tests/data/bad/matmul_int8_functional_depth.yaml:4:35:", "workload.k:", "k <= 1024 (got 2048)"},
    {"a sharded matmul's format the chip lacks", "run tests/data/bad/shard_dtype_chip_lacks.yaml", 2,
     "tests/data/bad/shard_dtype_chip_lacks.yaml:5:90:", "workload.dtype:",
     "tpu-v2 has no fp8 matmuls; its formats: bf16"},
    {"a training step's matmul format the chip lacks", "run tests/data/bad/train_precision_matmul_chip_lacks.yaml", 2,
     "tests/data/bad/train_precision_matmul_chip_lacks.yaml:7:23:", "workload.precision.matmul:",
     "tpu-v2 has no int8 matmuls; its formats: bf16"},
    {"a chip format rate out of range", "run tests/data/bad/chip_format_rate.yaml", 2,
     "tests/data/bad/chip_format_rate.yaml:8:19:", "chip.formats.int8:", "expected between 0 and 4"},
    {"a forced blocking without bn", "run tests/data/bad/matmul_block_missing.yaml", 2,
     "tests/data/bad/matmul_block_missing.yaml:8:10:", "workload.block.bn:",
     "missing required key (columns of a B and C block)"},
    // SCALE-Sim inputs (tpusim scalesim CONFIG.cfg TOPOLOGY.csv, docs/scalesim.md).
    {"a SCALE-Sim config without its [run_presets] section",
     "scalesim tests/data/bad/scalesim_no_section.cfg configs/scalesim/gemm-mix.csv", 2,
     "tests/data/bad/scalesim_no_section.cfg:1:1:", "run_presets:", "missing section [run_presets]"},
    {"a SCALE-Sim config without ArrayWidth",
     "scalesim tests/data/bad/scalesim_missing_key.cfg configs/scalesim/gemm-mix.csv", 2,
     "tests/data/bad/scalesim_missing_key.cfg:4:1:", "architecture_presets.ArrayWidth:",
     "missing required key (columns of the array"},
    {"a SCALE-Sim array size that is not a number",
     "scalesim tests/data/bad/scalesim_not_number.cfg configs/scalesim/gemm-mix.csv", 2,
     "tests/data/bad/scalesim_not_number.cfg:5:17:", "architecture_presets.ArrayHeight:",
     "expected a number, got '8x8'"},
    {"a SCALE-Sim SRAM of 0 kB", "scalesim tests/data/bad/scalesim_zero_sram.cfg configs/scalesim/gemm-mix.csv", 2,
     "tests/data/bad/scalesim_zero_sram.cfg:7:17:", "architecture_presets.IfmapSramSzkB:",
     "value 0 is out of range: expected between 1 and"},
    {"a SCALE-Sim array wider than tpusim's array model",
     "scalesim tests/data/bad/scalesim_array_too_wide.cfg configs/scalesim/gemm-mix.csv", 2,
     "tests/data/bad/scalesim_array_too_wide.cfg:6:17:", "architecture_presets.ArrayWidth:",
     "value 512 is out of range: expected between 2 and 256 PEs"},
    {"a SCALE-Sim dataflow that does not exist",
     "scalesim tests/data/bad/scalesim_unknown_dataflow.cfg configs/scalesim/gemm-mix.csv", 2,
     "tests/data/bad/scalesim_unknown_dataflow.cfg:10:12:", "architecture_presets.Dataflow:",
     "unknown MXU dataflow 'sw'; expected one of: ws (weight-stationary"},
    {"a misspelt SCALE-Sim key", "scalesim tests/data/bad/scalesim_key_typo.cfg configs/scalesim/gemm-mix.csv", 2,
     "tests/data/bad/scalesim_key_typo.cfg:5:1:", "architecture_presets.ArrayHieght:",
     "unknown key 'ArrayHieght'; did you mean 'ArrayHeight'?"},
    {"a SCALE-Sim key given twice (configparser refuses it too)",
     "scalesim tests/data/bad/scalesim_duplicate_key.cfg configs/scalesim/gemm-mix.csv", 2,
     "tests/data/bad/scalesim_duplicate_key.cfg:10:1:", "architecture_presets.OfmapSramSzkB:",
     "the key appears twice in [architecture_presets] (first on line 9)"},
    {"USER bandwidth without Bandwidth",
     "scalesim tests/data/bad/scalesim_user_no_bandwidth.cfg configs/scalesim/gemm-mix.csv", 2,
     "tests/data/bad/scalesim_user_no_bandwidth.cfg:4:1:", "architecture_presets.Bandwidth:",
     "InterfaceBandwidth: USER needs Bandwidth"},
    {"a SCALE-Sim config line without = or :",
     "scalesim tests/data/bad/scalesim_no_separator.cfg configs/scalesim/gemm-mix.csv", 2,
     "tests/data/bad/scalesim_no_separator.cfg:10:1:", "architecture_presets:", "expected KEY = VALUE or KEY : VALUE"},
    {"a topology row with too few columns",
     "scalesim configs/scalesim/array-32x32-ws.cfg tests/data/bad/scalesim_conv_columns.csv", 2,
     "tests/data/bad/scalesim_conv_columns.csv:3:20:", "Conv2:", "6 columns; a convolution row has 8 or 9"},
    {"a topology size that is not a number (letter O for zero)",
     "scalesim configs/scalesim/array-32x32-ws.cfg tests/data/bad/scalesim_conv_not_number.csv", 2,
     "tests/data/bad/scalesim_conv_not_number.csv:3:11:", "Conv2.IFMAP Width:",
     "expected a positive integer, got '3O'"},
    {"a topology layer of zero filters",
     "scalesim configs/scalesim/array-32x32-ws.cfg tests/data/bad/scalesim_conv_zero.csv", 2,
     "tests/data/bad/scalesim_conv_zero.csv:2:19:", "Conv1.Num Filter:",
     "expected an integer between 1 and 16777216, got 0"},
    {"a filter taller than its input",
     "scalesim configs/scalesim/array-32x32-ws.cfg tests/data/bad/scalesim_conv_filter_too_big.csv", 2,
     "tests/data/bad/scalesim_conv_filter_too_big.csv:2:12:", "Conv1.Filter Height:",
     "Filter Height 7 is larger than IFMAP Height 5"},
    {"a negative GEMM size", "scalesim configs/scalesim/array-32x32-ws.cfg tests/data/bad/scalesim_gemm_negative.csv",
     2, "tests/data/bad/scalesim_gemm_negative.csv:2:8:", "fc1.N:", "expected a positive integer, got '-128'"},
    {"a topology header that is neither GEMM nor convolution",
     "scalesim configs/scalesim/array-32x32-ws.cfg tests/data/bad/scalesim_header.csv", 2,
     "tests/data/bad/scalesim_header.csv:1:1:", "",
     "a header of 3 columns; expected 4 (Layer, M, N, K: GEMM) or 8 or 9"},
    {"a device instead of a topology file (read forever)", "scalesim configs/scalesim/array-32x32-ws.cfg /dev/zero", 2,
     "/dev/zero:", "", "not a regular file"},
    {"a topology with no layers",
     "scalesim configs/scalesim/array-32x32-ws.cfg tests/data/bad/scalesim_header_only.csv", 2,
     "tests/data/bad/scalesim_header_only.csv:1:1:", "", "no layers: the topology has a header row only"},
    {"an unknown chip for SCALE-Sim layers' energies",
     "scalesim configs/scalesim/array-32x32-ws.cfg configs/scalesim/gemm-mix.csv --chip tpu-v9", 2,
     "command line:", "--chip:", "unknown chip 'tpu-v9'"},
    // Sweep files.
    {"a word where a sweep flag goes", "sweep tests/data/bad/sweep_plot_type.yaml", 2,
     "tests/data/bad/sweep_plot_type.yaml:3:7:", "plot:", "expected true or false, got 'sometimes'"},
    {"a per-chip value of zero", "sweep tests/data/bad/sweep_per_chip_range.yaml", 2,
     "tests/data/bad/sweep_per_chip_range.yaml:3:28:", "per_chip.workload.units:",
     "value 0 is out of range: expected > 0"},
    {"a misspelt scaling law (letters swapped)", "sweep tests/data/bad/sweep_scaling_typo.yaml", 2,
     "tests/data/bad/sweep_scaling_typo.yaml:3:10:", "scaling:",
     "unknown scaling 'strnog'; expected one of: strong (fixed global work: speedups against Amdahl's law), weak "
     "(fixed work per chip: against Gustafson's law), none (no speedups, just the table); did you mean 'strong'?"},
    {"a published figure at a value the sweep does not run", "sweep tests/data/bad/sweep_published_value.yaml", 2,
     "tests/data/bad/sweep_published_value.yaml:8:24:", "published.points.[3]:",
     "no point has pod.shape=[3]; the swept values are [1], [2], [4]"},
    // kind: hlo: the error is in the HLO file, at its line and column.
    {"HLO replica groups that name a partition the module does not have", "run tests/data/bad/hlo_groups.yaml", 2,
     "tests/data/bad/hlo_groups.hlo.txt:11:3:", "replica_groups:", "device 5 is not one of the module's 4 partitions"},
    {"HLO text cut off inside a computation", "run tests/data/bad/hlo_truncated.yaml", 2,
     "tests/data/bad/hlo_truncated.hlo.txt:11:1:", "computation %main:",
     "the text ends inside computation %main (opened at line 9): it is truncated"},
    {"an HLO tuple shape nested past the bound (50,000 deep was a SIGSEGV)", "run tests/data/bad/hlo_tuple_deep.yaml",
     2, "tests/data/bad/hlo_tuple_deep.hlo.txt:5:72:", "shape:", "tuple shapes nest deeper than 64 levels"},
    {"an HLO shape of 2^64 elements (wrapped to 0: a copy cost 0 s and 0 B)",
     "run tests/data/bad/hlo_elements_wrap.yaml", 2, "tests/data/bad/hlo_elements_wrap.hlo.txt:3:48:", "shape:",
     "f32[4294967296,4294967296]: elements: 4294967296 x 4294967296 does not fit in 64 bits"},
    {"a negative FLOP count in a kernel's cost_estimate (was cast unchecked)",
     "run tests/data/bad/hlo_cost_negative.yaml", 2, "tests/data/bad/hlo_cost_negative.hlo.txt:5:3:", "instruction %k:",
     "cost_estimate.flops is -1e+30: a count of the kernel's work must be at least 0"},
    {"HLO permute pairs with a source twice (was '<input>: workload.pairs', no file or line)",
     "run tests/data/bad/hlo_pairs_twice.yaml", 2,
     "tests/data/bad/hlo_pairs_twice.hlo.txt:5:3:", "instruction %cp:", "source 0 appears twice"},
    // Serving numbers past what the closed forms can state (were inf, nan and 0 s with exit 0).
    {"disaggregated serving over a 1e-300 B/s DCN (inf and nan in the report)",
     "run tests/data/bad/inference_runaway_dcn.yaml", 3, "", "", "runaway: the KV transfer of a"},
    {"a request stream of 1e-12 requests/s (TTFT and TPOT of 0 s)", "run tests/data/bad/inference_runaway_rate.yaml", 3,
     "", "", "runaway: the request stream reached"},
    // kind: cluster's placement.
    {"two jobs on one slice", "run tests/data/bad/cluster_shared_slice.yaml", 2,
     "tests/data/bad/cluster_shared_slice.yaml:17:20:", "workload.jobs[1].slices[1]:",
     "slice 'a1' is job a's: two jobs never share a slice's chips"},
    {"a job on a misspelt slice", "run tests/data/bad/cluster_unknown_slice.yaml", 2,
     "tests/data/bad/cluster_unknown_slice.yaml:11:28:", "workload.jobs[0].slices[1]:",
     "no slice 'p1-slce-a' in the data center; did you mean 'p1-slice-a'?"},
    {"a job of two slices placed on one", "run tests/data/bad/cluster_slices_count.yaml", 2,
     "tests/data/bad/cluster_slices_count.yaml:10:15:", "workload.jobs[0].slices:",
     "the job's pod is 2 slices, but it is placed on 1"},
    {"a job's slices of 4 chips placed on slices of 8", "run tests/data/bad/cluster_slice_shape.yaml", 2,
     "tests/data/bad/cluster_slice_shape.yaml:10:16:", "workload.jobs[0].slices[0]:",
     "slice 'a0' is 8 chips, but the job's slices are 4"},
    {"a SCALE-Sim layer name that is not UTF-8 (was an internal error)",
     "scalesim configs/scalesim/array-32x32-ws.cfg tests/data/bad/scalesim_not_utf8.csv", 2,
     "tests/data/bad/scalesim_not_utf8.csv:3:4:", "", "byte \\xe9 is not UTF-8 text"},
    {"depthwise rows expanding past the layer bound (a 14 MB file took 4.8 GB)",
     "scalesim configs/scalesim/array-32x32-ws.cfg tests/data/bad/scalesim_too_many_layers.csv", 2,
     "tests/data/bad/scalesim_too_many_layers.csv:18:14:", "DP16.Channels:",
     "this row adds 4096 layers past the 65536 a topology may run"},
};

// Every regular file under `dir` (none when it does not exist).
std::vector<std::string> files_under(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec))
    if (e.is_regular_file()) out.push_back(e.path().string());
  return out;
}

}  // namespace

TEST_CASE("bad-input catalogue: exit status, located message, nothing written", "[app][bad-input]") {
  for (const auto& c : kCases) {
    DYNAMIC_SECTION(c.mistake) {
      const std::string out_dir = "build-test-out/catalogue/" + std::to_string(&c - kCases);
      const fs::path out_abs = fs::path(TPUSIM_SOURCE_DIR) / out_dir;
      fs::remove_all(out_abs);
      const auto r = run_tpusim(std::string(c.command) + " --out " + out_dir);
      INFO(c.mistake << "\n$ tpusim " << c.command << "\n" << r.output);
      CHECK(r.status == c.status);
      if (c.status == 2) {
        // "error: LOCATION: KEY.PATH: message" on one line.
        const std::string head = std::string("error: ") + c.location + " " + c.key_path;
        CHECK(r.output.find(head) != std::string::npos);
      } else {
        CHECK(r.output.find("simulation failed: ") != std::string::npos);
      }
      CHECK(r.output.find(c.says) != std::string::npos);
      for (const char* crash : {"terminate", "Aborted", "internal error", "Segmentation", "what():"})
        CHECK(r.output.find(crash) == std::string::npos);
      CHECK(files_under(out_abs).empty());
    }
  }
}

TEST_CASE("bad-input catalogue: validate reports what run reports", "[app][bad-input]") {
  for (const auto& c : kCases) {
    const std::string cmd = c.command;
    // tpusim validate reads YAML files; SCALE-Sim inputs have their own command.
    if (c.status != 2 || cmd.find("--set") != std::string::npos || cmd.rfind("scalesim ", 0) == 0) continue;
    DYNAMIC_SECTION(c.mistake) {
      const std::string file = cmd.substr(cmd.find(' ') + 1);
      const auto r = run_tpusim("validate " + file);
      INFO(c.mistake << "\n$ tpusim validate " << file << "\n" << r.output);
      CHECK(r.status == 2);
      CHECK(r.output.find(std::string("error: ") + c.location + " " + c.key_path) != std::string::npos);
      CHECK(r.output.find(c.validate_says ? c.validate_says : c.says) != std::string::npos);
    }
  }
}

TEST_CASE("bad-input catalogue: a failed run keeps an earlier report whole", "[app][bad-input]") {
  // A good run writes report.json; a later run into the same folder that
  // fails (bad input, or a system that does not fit) leaves it as it was.
  const std::string out_dir = "build-test-out/catalogue/keep";
  const fs::path report = fs::path(TPUSIM_SOURCE_DIR) / out_dir / "report.json";
  fs::remove_all(report.parent_path());
  const auto good = run_tpusim("run configs/experiments/matmul-teach.yaml --out " + out_dir);
  REQUIRE(good.status == 0);
  const auto before = fs::file_size(report);
  const auto files_before = files_under(report.parent_path());
  CHECK(run_tpusim("run tests/data/bad/duplicate_key.yaml --out " + out_dir).status == 2);
  CHECK(run_tpusim("run tests/data/bad/matmul_oom.yaml --out " + out_dir).status == 3);
  CHECK(fs::file_size(report) == before);
  CHECK(files_under(report.parent_path()) == files_before);
}

}  // namespace test_bad_input_catalogue
