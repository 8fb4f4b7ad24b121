#pragma once
// An XLA HLO module as XLA prints it (HloModule::ToString, the text
// `jax.jit(f).lower(...).compile().as_text()` gives): the header, the
// computations, each instruction with its shape, operands and attributes,
// in the printed (for a scheduled module: the executed) order. The parser
// keeps what the cost model and the simulation read (shapes, operands,
// called computations, replica groups, ...) typed, and every other
// attribute as its printed text. Bad text is a sim::ConfigError at
// file:line:column naming the construct (docs/hlo.md).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hlo {

// An array or a tuple of shapes. Arrays: element type and dimensions; the
// layout's memory space (S(n); 0 = HBM, 1 = VMEM on TPU) decides whether
// moving the array costs HBM bytes.
struct Shape {
  std::string type;  // bf16, f32, s32, pred, token, ...; empty for a tuple
  std::vector<std::int64_t> dims;
  int memory_space = 0;                          // S(n): 0 HBM, 1 VMEM, kHostMemorySpace host memory
  std::vector<std::int64_t> minor_to_major;      // the layout's {1,0}: dimensions, most minor first (empty: row-major)
  std::vector<std::vector<std::int64_t>> tiles;  // T(8,128)(2,1): the layout's tiles, major first ('*' as -1)
  bool tuple = false;
  std::vector<Shape> elements;  // a tuple's

  std::uint64_t element_count() const;  // an array's (1 for a scalar)
  // Elements an array occupies in memory: with tiles, the whole tiles that
  // cover it, padding included (XLA's tiled layout, docs/hlo.md); else
  // element_count(). Checked: throws std::overflow_error past 64 bits (the
  // parser turns that into a located error, so a parsed shape never does).
  std::uint64_t stored_element_count() const;
  // Bytes of an array as stored (tile padding included), or of all of a
  // tuple's arrays; with only_hbm, those in memory space 0.
  std::uint64_t bytes(bool only_hbm = false) const;
  std::string str() const;  // "bf16[128,4096]"
};

// XLA's memory space of host memory (xla/layout.h, Layout::kHostMemorySpace):
// an array there lives in the host's DRAM, and reaches HBM over the host link.
inline constexpr int kHostMemorySpace = 5;

// Bits of an element of `type`; 0 for an unknown type.
int element_bits(const std::string& type);

struct Location {
  int line = 0, column = 0;
};

struct Instruction {
  std::string name;  // without the '%'
  Shape shape;
  std::string opcode;
  std::vector<std::string> operands;              // names, without '%'
  std::string literal;                            // constant(...), parameter(N): the text between the parentheses
  std::map<std::string, std::string> attributes;  // key -> printed value (braces kept)
  bool root = false;
  Location where;

  const std::string* attribute(const std::string& key) const;
  // An async op's thread: its async_execution_thread= ("main" without one).
  std::string async_thread() const;
};

struct Computation {
  std::string name;
  bool entry = false;
  std::vector<Instruction> instructions;     // printed order
  std::map<std::string, std::size_t> index;  // instruction name -> position
  std::size_t root = 0;
  // The thread it runs on (`}, execution_thread="sparsecore"` after its
  // body); XLA's default is "main", the TensorCore.
  std::string execution_thread = "main";
  Location where;

  const Instruction* find(const std::string& name) const;
};

struct Module {
  std::string name;
  std::string file;
  bool scheduled = false;
  int num_partitions = 1, replica_count = 1;
  std::vector<Computation> computations;  // printed order
  std::map<std::string, std::size_t> index;
  std::optional<std::size_t> entry;
  Location where;

  const Computation* find(const std::string& name) const;
  // Throws sim::ConfigError at `where` unless the computation exists.
  const Computation& computation(const std::string& name, const Location& where) const;
  int devices() const { return num_partitions * replica_count; }
};

// Parses HLO text; `file` is what error locations name. Every instruction's
// operands and called computations must exist, and the module needs an
// ENTRY computation. With `cut_short` the text is the head of a longer dump
// (MaxText's reference modules keep its first 2000 lines): it is parsed up
// to its last whole computation and may lack the ENTRY (docs/hlo.md).
Module parse_module(const std::string& text, const std::string& file, bool cut_short = false);
// Reads and parses a file (a file that cannot be read, is not a regular file
// or is larger than kMaxModuleBytes is a ConfigError).
Module load_module(const std::string& path, bool cut_short = false);

// The largest HLO text tpusim reads: the modules XLA prints for the largest
// models are tens of MB (MaxText's Llama-3-8B layer dump is 0.3 MB per
// 2000 lines); a 1 GB file ran out of memory while parsing.
inline constexpr std::uintmax_t kMaxModuleBytes = std::uintmax_t(256) << 20;
// Host bytes the parsed module holds per byte of text (measured on
// tests/data/hlo/maxtext-llama3_8b-v6e-4.hlo.txt, docs/hardening.md), for the
// memory budget checked before reading (workloads/hlo).
inline constexpr double kModuleBytesPerTextByte = 8.0;

// Replica groups in every form XLA prints: explicit `{{0,1},{2,3}}`, iota
// `[2,2]<=[4]` and `[4,2]<=[2,2,2]T(1,0,2)`, mesh axes
// `mesh['x'=2,'y'=2] {'y'}`, and `{}` (one group of every device, given as
// `devices`). Throws sim::ConfigError at `where` of `file` when the text does
// not parse or a group names a device outside [0, devices) (`ids` says what
// the numbers are, for the message).
std::vector<std::vector<std::int64_t>> parse_replica_groups(
    const std::string& text, std::int64_t devices, const std::string& file, const Location& where,
    const std::string& ids = "partitions (num_partitions x replica_count)");

// The groups of global device ids (replica x num_partitions + partition, XLA's
// default device assignment) a collective runs over: its replica_groups read
// in the group mode XLA derives from channel_id and use_global_device_ids
// (xla/service/collective_ops_utils.h, GetCollectiveOpGroupMode): no
// channel_id, replica ids (cross-replica); a channel_id and no
// use_global_device_ids attribute (all-to-all, collective-broadcast), partition
// ids (cross-partition); a channel_id with use_global_device_ids=false on an
// all-reduce, all-gather or reduce-scatter, groups of replicas each with all
// their partitions; use_global_device_ids=true, global ids. Throws
// sim::ConfigError at the instruction for a combination XLA rejects (use_global_device_ids
// without a channel_id) or an id outside its range.
std::vector<std::vector<std::int64_t>> device_groups(const Module& m, const Instruction& collective);
// The same checks without expanding the groups (the parser's, for every
// collective of the text).
void check_groups(const Module& m, const Instruction& collective);

// A collective-permute's pairs as global device ids: partition ids with a
// channel_id (one set of pairs per replica), replica ids without.
std::vector<std::pair<std::int64_t, std::int64_t>> device_pairs(const Module& m, const Instruction& permute);
void check_pairs(const Module& m, const Instruction& permute);  // the same checks, not expanded

// `{{0,1},{1,2}}` (source_target_pairs).
std::vector<std::pair<std::int64_t, std::int64_t>> parse_pairs(const std::string& text, const std::string& file,
                                                               const Location& where);

// `{1,2}` (dimensions=, *_contracting_dims=, ...): the integers.
std::vector<std::int64_t> parse_int_list(const std::string& text, const std::string& file, const Location& where);

}  // namespace hlo
