// One small hand-written module per construct of the HLO text current XLA
// prints (docs/hlo.md), each with the ops, FLOPs, bytes and collectives
// worked out by hand from its shapes, and the located errors for what
// tpusim does not read.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "hlo/cost.h"
#include "hlo/module.h"
#include "sim/error.h"

namespace test_hlo_grammar {

namespace {

// What a computation executes, summed by hand-checkable figures.
struct Summary {
  std::vector<std::string> ops;  // opcodes of the executed instructions that cost something
  std::vector<std::string> threads;
  double flops = 0, bytes = 0;
  std::vector<std::pair<hlo::CollectiveKind, std::uint64_t>> collectives;
  std::size_t approximations = 0;
};

Summary summarize(const hlo::Module& m, const std::string& entry = "") {
  hlo::CostModel cm(m);
  Summary s;
  const hlo::Computation& comp = entry.empty() ? m.computations[*m.entry] : *m.find(entry);
  for (const auto& step : cm.schedule(comp)) {
    const hlo::Cost c = cm.cost(*step.computation, *step.instruction);
    if (c.free) continue;
    s.ops.push_back(step.instruction->opcode);
    s.threads.push_back(step.thread);
    s.flops += c.flops;
    s.bytes += c.bytes();
    if (c.collective != hlo::CollectiveKind::none) s.collectives.emplace_back(c.collective, c.collective_bytes);
  }
  s.approximations = cm.approximations().size();
  return s;
}

void expect_error(const std::string& text, int line, const std::string& words) {
  try {
    const hlo::Module m = hlo::parse_module(text, "bad.hlo");
    summarize(m);
    FAIL("no error for: " << text);
  } catch (const sim::ConfigError& e) {
    INFO(e.what());
    CHECK(e.where().file == "bad.hlo");
    CHECK(e.where().line == line);
    CHECK(e.where().column > 0);
    CHECK(std::string(e.what()).find(words) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("grammar: execution_thread after a computation's body, async-start/-update/-done on the sparsecore thread") {
  // The form of XLA's own parser tests (async_execution_thread="sparsecore").
  const char* text = R"(HloModule sc, is_scheduled=true, num_partitions=1

%sc_body (p0: f32[1024,128], p1: s32[256]) -> f32[256,128] {
  %p0 = f32[1024,128]{1,0} parameter(0)
  %p1 = s32[256]{0} parameter(1)
  ROOT %g = f32[256,128]{1,0} gather(%p0, %p1), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,128}
}, execution_thread="sparsecore"

ENTRY %main (t: f32[1024,128], i: s32[256]) -> f32[256,128] {
  %t = f32[1024,128]{1,0} parameter(0)
  %i = s32[256]{0} parameter(1)
  // the start binds both operands; the update passes it on
  %start = ((f32[1024,128]{1,0}, s32[256]{0}), f32[256,128]{1,0}, s32[]{:S(2)}) async-start(%t, %i), async_execution_thread="sparsecore", calls=%sc_body
  %update = ((f32[1024,128]{1,0}, s32[256]{0}), f32[256,128]{1,0}, s32[]{:S(2)}) async-update(%start)
  ROOT %done = f32[256,128]{1,0} async-done(%update)
}
)";
  const hlo::Module m = hlo::parse_module(text, "sc.hlo");
  CHECK(m.find("sc_body")->execution_thread == "sparsecore");
  CHECK(m.find("main")->execution_thread == "main");
  CHECK(m.find("main")->find("start")->async_thread() == "sparsecore");
  const Summary s = summarize(m);
  // One instruction costs: the gather, on the SparseCore. Its bytes: the
  // operands (1024 x 128 + 256) x 4 B and the result 256 x 128 x 4 B.
  CHECK(s.ops == std::vector<std::string>{"gather"});
  CHECK(s.threads == std::vector<std::string>{"sparsecore"});
  CHECK(s.flops == 0);
  CHECK(s.bytes == (1024.0 * 128 + 256) * 4 + 256.0 * 128 * 4);
}

TEST_CASE("grammar: call-start sugar offloads an all-gather to the SparseCore") {
  // The form XLA gives a collective with --xla_tpu_enable_sparse_core_collective_offload_all_gather.
  const char* text = R"(HloModule offload, is_scheduled=true, num_partitions=4

%ag (q: bf16[1024,512]) -> bf16[4096,512] {
  %q = bf16[1024,512]{1,0} parameter(0)
  ROOT %a = bf16[4096,512]{1,0} all-gather(%q), channel_id=3, replica_groups=[1,4]<=[4], dimensions={0}, use_global_device_ids=true
}, execution_thread="sparsecore"

ENTRY %main (x: bf16[1024,512]) -> bf16[4096,512] {
  %x = bf16[1024,512]{1,0} parameter(0)
  %cs = ((bf16[1024,512]{1,0}), bf16[4096,512]{1,0}, s32[]) call-start(%x), async_execution_thread="sparsecore", to_apply=%ag, backend_config={"sparse_core_config":{"offload":"OFFLOAD_COLLECTIVE"}}
  ROOT %cd = bf16[4096,512]{1,0} call-done(%cs)
}
)";
  const hlo::Module m = hlo::parse_module(text, "offload.hlo");
  const Summary s = summarize(m);
  CHECK(s.ops == std::vector<std::string>{"all-gather"});
  CHECK(s.threads == std::vector<std::string>{"sparsecore"});
  // The gathered output: 4096 x 512 x 2 B.
  REQUIRE(s.collectives.size() == 1);
  CHECK(s.collectives[0].first == hlo::CollectiveKind::all_gather);
  CHECK(s.collectives[0].second == 4096u * 512 * 2);
  CHECK(hlo::device_groups(m, *m.find("ag")->find("a")) == std::vector<std::vector<std::int64_t>>{{0, 1, 2, 3}});
}

TEST_CASE("grammar: <op>-start sugar runs the op asynchronously with its attributes inline") {
  const char* text = R"(HloModule sugar, is_scheduled=true, num_partitions=2

%sum (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %add = f32[] add(%x, %y)
}

ENTRY %main (g: f32[4096], t: f32[64,64]) -> (f32[2048], f32[8,64]) {
  %g = f32[4096]{0} parameter(0)
  %t = f32[64,64]{1,0} parameter(1)
  %k = s32[] constant(8)
  %rs = ((f32[4096]{0}), f32[2048]{0}) reduce-scatter-start(%g), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, dimensions={0}, to_apply=%sum
  %ds = ((f32[64,64]{1,0}, s32[], s32[]), f32[8,64]{1,0}, s32[]) dynamic-slice-start(%t, %k, %k), dynamic_slice_sizes={8,64}
  %dsd = f32[8,64]{1,0} dynamic-slice-done(%ds)
  %rsd = f32[2048]{0} reduce-scatter-done(%rs)
  ROOT %out = (f32[2048]{0}, f32[8,64]{1,0}) tuple(%rsd, %dsd)
}
)";
  const hlo::Module m = hlo::parse_module(text, "sugar.hlo");
  const Summary s = summarize(m);
  CHECK(s.ops == std::vector<std::string>{"reduce-scatter-start", "dynamic-slice-start"});
  // The reduce-scatter: its input, 4096 x 4 B. The dynamic slice, costed as
  // the op it wraps: its operands (64 x 64 x 4 + 2 x 4 B) and its result
  // (8 x 64 x 4 B), not the start's whole tuple.
  REQUIRE(s.collectives.size() == 1);
  CHECK(s.collectives[0] == std::make_pair(hlo::CollectiveKind::reduce_scatter, std::uint64_t(4096 * 4)));
  CHECK(s.bytes == 64.0 * 64 * 4 + 8 + 8.0 * 64 * 4);
}

TEST_CASE("grammar: layouts with tiles and memory spaces, S(1) VMEM and S(5) host memory move no HBM bytes") {
  const char* text = R"(HloModule layouts, num_partitions=1

ENTRY %main (a: f32[16,256], b: bf16[1024]) -> f32[16,256] {
  %a = f32[16,256]{1,0:T(8,128)(2,1)S(5)} parameter(0)
  %b = bf16[1024]{0:T(1024)(128)(2,1)S(1)} parameter(1)
  %c = f32[16,256]{1,0:T(8,128)E(32)} copy(%a)
  %d = f32[16,256]{1,0:T(2,*)L(s32)P(s64)M(8)} negate(%c)
  ROOT %e = f32[16,256]{1,0:T(8,128)S(5)} copy(%d)
}
)";
  const hlo::Module m = hlo::parse_module(text, "layouts.hlo");
  const hlo::Computation& e = m.computations[*m.entry];
  CHECK(e.find("a")->shape.memory_space == hlo::kHostMemorySpace);
  CHECK(e.find("a")->shape.tiles == std::vector<std::vector<std::int64_t>>{{8, 128}, {2, 1}});
  CHECK(e.find("b")->shape.memory_space == 1);
  CHECK(e.find("b")->shape.tiles.size() == 3);
  CHECK(e.find("d")->shape.tiles == std::vector<std::vector<std::int64_t>>{{2, -1}});
  const Summary s = summarize(m);
  // HBM bytes of 16 x 256 x 4 B = 16 KiB arrays: the first copy reads host
  // memory (none) and writes HBM (16 KiB), negate reads and writes HBM
  // (32 KiB), the last copy reads HBM (16 KiB) and writes host memory.
  CHECK(s.ops == std::vector<std::string>{"copy", "negate", "copy"});
  CHECK(s.bytes == 4 * 16384.0);
  expect_error("HloModule m\n\nENTRY %main () -> f32[2] {\n  ROOT %a = f32[2]{0:Q(3)} constant({1,2})\n}\n", 4,
               "unknown layout item 'Q'");
  expect_error("HloModule m\n\nENTRY %main () -> f32[2] {\n  ROOT %a = f32[2]{0:S(1,2)} constant({1,2})\n}\n", 4,
               "one memory space");
}

TEST_CASE("grammar: a tiled layout stores whole tiles with their padding, as XLA's tiled layout lays them out") {
  const char* text = R"(HloModule padding, num_partitions=1

ENTRY %main (a: bf16[3,100], b: f32[5,3]) -> f32[5,3] {
  %a = bf16[3,100]{1,0:T(8,128)(2,1)} parameter(0)
  %n = bf16[3,100]{1,0:T(8,128)(2,1)} negate(%a)
  %b = f32[5,3]{0,1:T(2,2)} parameter(1)
  %s = f32[]{:T(128)} constant(1)
  %x = bf16[8,128]{1,0:T(8,128)(3,1)} constant({...})
  %u = f32[16,256]{1,0} constant({...})
  ROOT %c = f32[5,3]{0,1:T(2,2)} copy(%b)
}
)";
  const hlo::Module m = hlo::parse_module(text, "padding.hlo");
  const hlo::Computation& e = m.computations[*m.entry];
  // bf16[3,100] in 8 x 128 tiles: one tile, 1024 elements, 2 KiB (600 B unpadded).
  CHECK(e.find("a")->shape.bytes() == 8 * 128 * 2);
  // f32[5,3] with dimension 0 minor: physically [3,5], in 2 x 2 tiles [4,6]: 24 x 4 B.
  CHECK(e.find("b")->shape.bytes() == 24 * 4);
  // A scalar in a 128-element tile occupies the tile.
  CHECK(e.find("s")->shape.bytes() == 128 * 4);
  // The second tile tiles the first: 8 rows in tiles of 3 are 9, so each
  // 8 x 128 tile takes 9 x 128 elements.
  CHECK(e.find("x")->shape.bytes() == 9 * 128 * 2);
  // Without tiles, the dense array.
  CHECK(e.find("u")->shape.bytes() == 16 * 256 * 4);
  // negate reads and writes a whole tile (2 x 2 KiB); the copy 96 B each way.
  const Summary s = summarize(m);
  CHECK(s.ops == std::vector<std::string>{"negate", "copy"});
  CHECK(s.bytes == 2 * 2048.0 + 2 * 96.0);
  expect_error("HloModule m\n\nENTRY %main () -> f32[2,3] {\n  ROOT %a = f32[2,3]{0:T(8,128)} constant({...})\n}\n", 4,
               "{0} is no order of the 2 dimensions of f32[2,3]");
  expect_error("HloModule m\n\nENTRY %main () -> f32[2] {\n  ROOT %a = f32[2]{0:T(0)} constant({1,2})\n}\n", 4,
               "a tile's dimensions are positive");
  expect_error(
      "HloModule m\n\nENTRY %main () -> f32[2] {\n  ROOT %a = f32[2]{0:T(4611686018427387904)} constant({1,2})\n}\n", 4,
      "no device holds it");
}

TEST_CASE("grammar: frontend_attributes kept as text, backend_config JSON as an object or a quoted string") {
  const char* text = R"(HloModule attrs, num_partitions=1

%body (p: (s32[], f32[8,16])) -> (s32[], f32[8,16]) {
  %p = (s32[], f32[8,16]{1,0}) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %x = f32[8,16]{1,0} get-tuple-element(%p), index=1
  %w = f32[16,16]{1,0} constant({...})
  %d = f32[8,16]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, frontend_attributes={_xla_stream_annotation="1",_scheduling_group_id="0"}
  ROOT %t = (s32[], f32[8,16]{1,0}) tuple(%i, %d)
}

%cond (q: (s32[], f32[8,16])) -> pred[] {
  %q = (s32[], f32[8,16]{1,0}) parameter(0)
  %j = s32[] get-tuple-element(%q), index=0
  ROOT %lt = pred[] compare(%j, %j), direction=LT
}

ENTRY %main (a: f32[8,16]) -> (s32[], f32[8,16]) {
  %a = f32[8,16]{1,0} parameter(0)
  %z = s32[] constant(0)
  %init = (s32[], f32[8,16]{1,0}) tuple(%z, %a)
  ROOT %loop = (s32[], f32[8,16]{1,0}) while(%init), condition=%cond, body=%body, backend_config=LOOPCONFIG
}
)";
  auto with = [&](const std::string& config) {
    std::string t = text;
    t.replace(t.find("LOOPCONFIG"), 10, config);
    return t;
  };
  for (const char* config : {R"({"known_trip_count":{"n":"4"}})", R"("{\"known_trip_count\":{\"n\":\"4\"}}")"}) {
    INFO(config);
    const hlo::Module m = hlo::parse_module(with(config), "attrs.hlo");
    CHECK(*m.find("body")->find("d")->attribute("frontend_attributes") ==
          R"({_xla_stream_annotation="1",_scheduling_group_id="0"})");
    const Summary s = summarize(m);
    // 4 trips of an 8x16 by 16x16 dot: 4 x 2 x 8 x 16 x 16 FLOPs.
    CHECK(s.flops == 4.0 * 2 * 8 * 16 * 16);
    CHECK(s.approximations == 0);
  }
  expect_error(with(R"({"known_trip_count":})"), 22, "not JSON");
}

TEST_CASE("grammar: a while loop's trip count from its induction variable's start, step and bound") {
  // i from 2 by 3 while i < 11: 2, 5, 8 (3 trips); i <= 11 also 11 (4 trips).
  const char* text = R"(HloModule induction, num_partitions=1

%body (p: (s32[], f32[8,16])) -> (s32[], f32[8,16]) {
  %p = (s32[], f32[8,16]{1,0}) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %x = f32[8,16]{1,0} get-tuple-element(%p), index=1
  %w = f32[16,16]{1,0} constant({...})
  %d = f32[8,16]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %three = s32[] constant(3)
  %next = s32[] add(%i, %three)
  ROOT %t = (s32[], f32[8,16]{1,0}) tuple(%next, %d)
}

%cond (q: (s32[], f32[8,16])) -> pred[] {
  %q = (s32[], f32[8,16]{1,0}) parameter(0)
  %j = s32[] get-tuple-element(%q), index=0
  %n = s32[] constant(11)
  ROOT %lt = pred[] compare(%j, %n), direction=DIR
}

ENTRY %main (a: f32[8,16]) -> (s32[], f32[8,16]) {
  %a = f32[8,16]{1,0} parameter(0)
  %two = s32[] constant(2)
  %init = (s32[], f32[8,16]{1,0}) tuple(%two, %a)
  ROOT %loop = (s32[], f32[8,16]{1,0}) while(%init), condition=%cond, body=%body
}
)";
  for (const auto& [dir, trips] : {std::pair<std::string, int>{"LT", 3}, {"LE", 4}}) {
    std::string t = text;
    t.replace(t.find("DIR"), 3, dir);
    const hlo::Module m = hlo::parse_module(t, "induction.hlo");
    const Summary s = summarize(m);
    // Each trip: the dot (2 x 8 x 16 x 16 FLOPs) and the add.
    CHECK(s.flops == trips * 2.0 * 8 * 16 * 16);
    CHECK(std::count(s.ops.begin(), s.ops.end(), "dot") == trips);
  }
}

TEST_CASE("grammar: call inlined, conditional as its costliest branch, fusion kinds") {
  const char* text = R"(HloModule control, num_partitions=1

%small (s0: f32[8,16]) -> f32[8,16] {
  %s0 = f32[8,16]{1,0} parameter(0)
  ROOT %n = f32[8,16]{1,0} negate(%s0)
}

%big (b0: f32[8,16]) -> f32[8,16] {
  %b0 = f32[8,16]{1,0} parameter(0)
  %w = f32[16,16]{1,0} constant({...})
  ROOT %d = f32[8,16]{1,0} dot(%b0, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}

%fused (f0: f32[8,16], f1: f32[16,16]) -> f32[8,16] {
  %f0 = f32[8,16]{1,0} parameter(0)
  %f1 = f32[16,16]{1,0} parameter(1)
  ROOT %fd = f32[8,16]{1,0} dot(%f0, %f1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}

ENTRY %main (a: f32[8,16], k: s32[], w: f32[16,16]) -> f32[8,16] {
  %a = f32[8,16]{1,0} parameter(0)
  %k = s32[] parameter(1)
  %w = f32[16,16]{1,0} parameter(2)
  %c = f32[8,16]{1,0} call(%a), to_apply=%big
  %sel = f32[8,16]{1,0} conditional(%k, %c, %c), branch_computations={%small, %big}
  %l = f32[8,16]{1,0} fusion(%sel, %w), kind=kLoop, calls=%fused
  %o = f32[8,16]{1,0} fusion(%l, %w), kind=kOutput, calls=%fused
  %in = f32[8,16]{1,0} fusion(%o, %w), kind=kInput, calls=%fused
  ROOT %cu = f32[8,16]{1,0} fusion(%in, %w), kind=kCustom, calls=%fused
}
)";
  const hlo::Module m = hlo::parse_module(text, "control.hlo");
  const Summary s = summarize(m);
  // The call's dot, the big branch's dot, four fusions of one dot each:
  // six 8x16 by 16x16 dots of 4096 FLOPs.
  CHECK(s.ops == std::vector<std::string>{"dot", "dot", "fusion", "fusion", "fusion", "fusion"});
  CHECK(s.flops == 6 * 2.0 * 8 * 16 * 16);
  // Bytes: the two dots read the 512 B activation and write 512 B (their
  // weights are constants, 1 KiB each, read too); each fusion reads 512 B +
  // 1 KiB and writes 512 B.
  CHECK(s.bytes == 2 * (512.0 + 1024 + 512) + 4 * (512.0 + 1024 + 512));
  CHECK(s.approximations == 1);  // the conditional
}

TEST_CASE("grammar: custom-call tpu_custom_call from its cost_estimate, else its bytes, marked approximated") {
  const std::string head =
      "HloModule kernel, num_partitions=1\n\nENTRY %main (q: bf16[128,256]) -> bf16[128,256] {\n"
      "  %q = bf16[128,256]{1,0} parameter(0)\n";
  const std::string call = "  ROOT %k = bf16[128,256]{1,0} custom-call(%q), custom_call_target=\"tpu_custom_call\"";
  {
    const hlo::Module m = hlo::parse_module(
        head + call +
            R"(, backend_config={"custom_call_config": {"body": "TUzvUgFNTElSMjAuMC4w", "cost_estimate": {"flops": 8388608, "transcendentals": 0, "bytes_accessed": 262144}}})" +
            "\n}\n",
        "kernel.hlo");
    const Summary s = summarize(m);
    CHECK(s.flops == 8388608.0);
    CHECK(s.bytes == 262144.0);
    CHECK(s.approximations == 0);
  }
  {
    const hlo::Module m = hlo::parse_module(
        head + call + R"(, backend_config={"custom_call_config": {"body": "TUzvUgFNTElSMjAuMC4w"}})" + "\n}\n",
        "kernel.hlo");
    const Summary s = summarize(m);
    // No estimate: its operand and result, 2 x 128 x 256 x 2 B; no FLOPs.
    CHECK(s.flops == 0);
    CHECK(s.bytes == 2 * 128.0 * 256 * 2);
    CHECK(s.approximations == 1);
  }
}

TEST_CASE(
    "grammar: collectives' replica groups in list and iota forms, read in the mode channel_id and "
    "use_global_device_ids give") {
  // 2 replicas x 2 partitions: device = replica x 2 + partition.
  const char* text = R"(HloModule groups, num_partitions=2, replica_count=2

%sum (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %add = f32[] add(%x, %y)
}

ENTRY %main (g: f32[256]) -> f32[256] {
  %g = f32[256]{0} parameter(0)
  %replicas = f32[256]{0} all-reduce(%g), replica_groups={{0,1}}, to_apply=%sum
  %both = f32[256]{0} all-reduce(%replicas), channel_id=1, replica_groups={{0},{1}}, to_apply=%sum
  %parts = f32[256]{0} all-to-all(%both), channel_id=2, replica_groups={{0,1}}, dimensions={0}
  %global = f32[512]{0} all-gather(%parts), channel_id=3, replica_groups=[2,2]<=[2,2]T(1,0), dimensions={0}, use_global_device_ids=true
  %list = f32[512]{0} all-reduce(%global), channel_id=4, replica_groups={{0,3},{1,2}}, use_global_device_ids=true, to_apply=%sum
  ROOT %perm = f32[512]{0} collective-permute(%list), channel_id=5, source_target_pairs={{0,1},{1,0}}
}
)";
  using G = std::vector<std::vector<std::int64_t>>;
  const hlo::Module m = hlo::parse_module(text, "groups.hlo");
  const hlo::Computation& e = m.computations[*m.entry];
  // No channel_id: replica ids, once per partition.
  CHECK(hlo::device_groups(m, *e.find("replicas")) == G{{0, 2}, {1, 3}});
  // A channel_id, use_global_device_ids false: each replica group with all its partitions.
  CHECK(hlo::device_groups(m, *e.find("both")) == G{{0, 1}, {2, 3}});
  // all-to-all has no use_global_device_ids: partition ids, once per replica.
  CHECK(hlo::device_groups(m, *e.find("parts")) == G{{0, 1}, {2, 3}});
  // Global ids in iota form: iota(4) as [2,2] transposed is 0,2,1,3.
  CHECK(hlo::device_groups(m, *e.find("global")) == G{{0, 2}, {1, 3}});
  CHECK(hlo::device_groups(m, *e.find("list")) == G{{0, 3}, {1, 2}});
  using P = std::vector<std::pair<std::int64_t, std::int64_t>>;
  CHECK(hlo::device_pairs(m, *e.find("perm")) == P{{0, 1}, {1, 0}, {2, 3}, {3, 2}});
  const Summary s = summarize(m);
  // Bytes as NCCL-tests counts them: the reduced arrays (1 KiB, 1 KiB, 2 KiB),
  // the all-to-all's input (1 KiB), the gathered output (2 KiB), the permuted array (2 KiB).
  REQUIRE(s.collectives.size() == 6);
  CHECK(s.collectives[0].second == 1024);
  CHECK(s.collectives[2] == std::make_pair(hlo::CollectiveKind::all_to_all, std::uint64_t(1024)));
  CHECK(s.collectives[3] == std::make_pair(hlo::CollectiveKind::all_gather, std::uint64_t(2048)));
  CHECK(s.collectives[5] == std::make_pair(hlo::CollectiveKind::collective_permute, std::uint64_t(2048)));
  // use_global_device_ids without a channel_id: XLA rejects it.
  std::string bad = text;
  bad.replace(bad.find("channel_id=4, "), 14, "");
  expect_error(bad, 15, "needs a channel_id");
  // A replica id past replica_count.
  bad = text;
  bad.replace(bad.find("replica_groups={{0,1}}, to_apply"), 22, "replica_groups={{0,2}}");
  expect_error(bad, 11, "device 2 is not one of the module's 2 replicas");
}

TEST_CASE("grammar: what tpusim does not read stops the parse at its line, never a wrong parse") {
  const std::string head = "HloModule m\n\nENTRY %main () -> f32[2] {\n";
  expect_error(head + "  ROOT %a = f32[2]{0} al-gather(f32[2]{0} %a)\n}\n", 4, "did you mean 'all-gather'");
  expect_error(head + "  ROOT %a = f32[2]{0} frobnicate()\n}\n", 4, "unknown opcode 'frobnicate'");
  expect_error(head + "  ROOT %a = f32[2]{0} constant({1,2})\n}, execution_mode=\"fast\"\n", 5,
               "unknown computation attribute 'execution_mode'");
  // XLA's own async ops are not sugar: no async-start-start.
  expect_error(head + "  ROOT %a = f32[2]{0} async-start-start()\n}\n", 4, "unknown opcode");
}

}  // namespace test_hlo_grammar
