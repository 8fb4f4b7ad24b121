#include <catch2/catch.hpp>

#include <fstream>
#include <regex>
#include <sstream>
#include <tuple>

#include "hlo/cost.h"
#include "hlo/module.h"
#include "sim/error.h"
#include "workloads/experiment.h"
#include "workloads/hlo/workload.h"

namespace test_hlo {

const std::string kData = std::string(TPUSIM_SOURCE_DIR) + "/tests/data/hlo/";

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Lines of the text up to its last line that is exactly "}" (the whole
// computations of a cut-short dump), counted with a regex, not the parser.
int count_lines(const std::string& text, const std::regex& re) {
  const std::string whole = text.substr(0, text.rfind("\n}") + 2);
  std::istringstream in(whole);
  int n = 0;
  for (std::string line; std::getline(in, line);)
    if (std::regex_search(line, re)) ++n;
  return n;
}

std::vector<std::vector<std::int64_t>> groups(const std::string& text, std::int64_t devices) {
  return hlo::parse_replica_groups(text, devices, "t.hlo", {1, 1});
}

TEST_CASE("replica groups in every printed form, derived by hand") {
  using G = std::vector<std::vector<std::int64_t>>;
  CHECK(groups("{{0,1},{2,3}}", 4) == G{{0, 1}, {2, 3}});
  CHECK(groups("{}", 4) == G{{0, 1, 2, 3}});
  CHECK(groups("[2,2]<=[4]", 4) == G{{0, 1}, {2, 3}});
  // iota(8) as [2,2,2] holds 4a+2b+c; transposed (1,0,2) it reads b, a, c:
  // 0,1,4,5,2,3,6,7, in groups of 2.
  CHECK(groups("[4,2]<=[2,2,2]T(1,0,2)", 8) == G{{0, 1}, {4, 5}, {2, 3}, {6, 7}});
  CHECK(groups("[2,4]<=[4,2]T(1,0)", 8) == G{{0, 2, 4, 6}, {1, 3, 5, 7}});
  // Devices row-major over the mesh: 'a' major, so 'b' pairs neighbours.
  CHECK(groups("mesh['a'=2,'b'=2] {'b'}", 4) == G{{0, 1}, {2, 3}});
  CHECK(groups("mesh['a'=2,'b'=2] {'a'}", 4) == G{{0, 2}, {1, 3}});
  CHECK(groups("mesh['axis_0'=4,'axis_1'=1] {'axis_0'}", 4) == G{{0, 1, 2, 3}});
  // A group naming a device the module does not have is a located error.
  try {
    groups("{{0,1},{2,7}}", 4);
    FAIL("no error");
  } catch (const sim::ConfigError& e) {
    CHECK(e.where().line == 1);
    CHECK(std::string(e.what()).find("device 7") != std::string::npos);
  }
  CHECK_THROWS_AS(groups("[3,2]<=[4]", 4), sim::ConfigError);
  CHECK_THROWS_AS(groups("mesh['a'=2] {'z'}", 2), sim::ConfigError);
}

const char* kLoop = R"(HloModule loop, is_scheduled=true, num_partitions=1

%body (p: (s32[], f32[8,16])) -> (s32[], f32[8,16]) {
  %p = (s32[], f32[8,16]{1,0}) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %x = f32[8,16]{1,0} get-tuple-element(%p), index=1
  %w = f32[16,32]{1,0} constant({...})
  %d = f32[8,32]{1,0} dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %one = s32[] constant(1)
  %n = s32[] add(%i, %one)
  ROOT %t = (s32[], f32[8,16]{1,0}) tuple(%n, %x)
}

%cond (p.1: (s32[], f32[8,16])) -> pred[] {
  %p.1 = (s32[], f32[8,16]{1,0}) parameter(0)
  %i.1 = s32[] get-tuple-element(%p.1), index=0
  %k = s32[] constant(3)
  ROOT %lt = pred[] compare(%i.1, %k), direction=LT
}

ENTRY %main (a: f32[8,16]) -> (s32[], f32[8,16]) {
  %a = f32[8,16]{1,0} parameter(0)
  %z = s32[] constant(0)
  %init = (s32[], f32[8,16]{1,0}) tuple(%z, %a)
  ROOT %loop = (s32[], f32[8,16]{1,0}) while(%init), condition=%cond, body=%body
}
)";

TEST_CASE("a while loop repeats its body by the trip count of its condition") {
  const hlo::Module m = hlo::parse_module(kLoop, "loop.hlo");
  hlo::CostModel cm(m);
  double flops = 0;
  for (const auto& s : cm.schedule(m.computations[*m.entry])) flops += cm.cost(*s.computation, *s.instruction).flops;
  // 3 trips of an 8x16 by 16x32 dot: 3 x 2 x 8 x 16 x 32.
  CHECK(flops == 3.0 * 2 * 8 * 16 * 32);
  CHECK(cm.approximations().empty());
}

TEST_CASE("a while loop's known_trip_count comes first, a loop of unknown count is one trip, reported") {
  // The condition compares with a parameter (no constant): only the
  // backend_config says 5 trips.
  std::string text = kLoop;
  const std::string from = "  %k = s32[] constant(3)\n";
  text.replace(text.find(from), from.size(), "  %k = s32[] get-tuple-element(%p.1), index=0\n");
  std::string known = text;
  const std::string loop = "condition=%cond, body=%body";
  known.replace(known.find(loop), loop.size(), loop + R"(, backend_config={"known_trip_count":{"n":"5"}})");
  for (const auto& [t, trips, notes] : {std::tuple<std::string, double, std::size_t>{known, 5, 0}, {text, 1, 1}}) {
    const hlo::Module m = hlo::parse_module(t, "loop.hlo");
    hlo::CostModel cm(m);
    double flops = 0;
    for (const auto& s : cm.schedule(m.computations[*m.entry])) flops += cm.cost(*s.computation, *s.instruction).flops;
    CHECK(flops == trips * 2 * 8 * 16 * 32);
    CHECK(cm.approximations().size() == notes);
  }
}

TEST_CASE("a convolution's FLOPs skip its padding, a nested fusion's dots count") {
  // bf0_i0o->b0f with a window of 4 padded 3_3 over an input of spatial
  // size 1: each of the 4 output positions reads the one input position
  // once, so 2 x (2 x 4 x 5 outputs) x 3 features x 1 = 240 FLOPs.
  const char* text = R"(HloModule conv, num_partitions=1

%inner (q0: bf16[2,3,1], q1: bf16[3,4,5]) -> bf16[2,4,5] {
  %q0 = bf16[2,3,1]{2,1,0} parameter(0)
  %q1 = bf16[3,4,5]{2,1,0} parameter(1)
  ROOT %c = bf16[2,4,5]{2,1,0} convolution(%q0, %q1), window={size=4 pad=3_3 rhs_reversal=1}, dim_labels=bf0_i0o->b0f
}

%outer (r0: bf16[2,3,1], r1: bf16[3,4,5]) -> bf16[2,4,5] {
  %r0 = bf16[2,3,1]{2,1,0} parameter(0)
  %r1 = bf16[3,4,5]{2,1,0} parameter(1)
  ROOT %f = bf16[2,4,5]{2,1,0} fusion(%r0, %r1), kind=kOutput, calls=%inner
}

ENTRY %main (a: bf16[2,3,1], b: bf16[3,4,5]) -> bf16[2,4,5] {
  %a = bf16[2,3,1]{2,1,0} parameter(0)
  %b = bf16[3,4,5]{2,1,0} parameter(1)
  ROOT %g = bf16[2,4,5]{2,1,0:S(1)} fusion(%a, %b), kind=kOutput, calls=%outer
}
)";
  const hlo::Module m = hlo::parse_module(text, "conv.hlo");
  hlo::CostModel cm(m);
  const hlo::Computation& e = m.computations[*m.entry];
  const hlo::Cost c = cm.cost(e, e.instructions[e.root]);
  CHECK(c.flops == 240.0);
  // Operands in HBM (2x3x1 + 3x4x5 bf16 = 132 B), the result in VMEM (S(1)).
  CHECK(c.read_bytes == 132);
  CHECK(c.written_bytes == 0);
}

void expect_error(const std::string& text, int line, const std::string& words) {
  try {
    hlo::parse_module(text, "bad.hlo");
    FAIL("no error for: " << text);
  } catch (const sim::ConfigError& e) {
    INFO(e.what());
    CHECK(e.where().file == "bad.hlo");
    CHECK(e.where().line == line);
    CHECK(e.where().column > 0);
    CHECK(std::string(e.what()).find(words) != std::string::npos);
  }
}

TEST_CASE("malformed HLO is a located error") {
  const std::string head = "HloModule m\n\nENTRY %main () -> f32[2] {\n";
  expect_error(head + "  ROOT %a = f32[2]{0} constant({1,2})\n", 5, "truncated");  // where the text ends
  expect_error(head + "  ROOT %a = f32[2 constant({1,2})\n}\n", 4, "shape");
  expect_error(head + "  ROOT %a = q32[2]{0} constant({1,2})\n}\n", 4, "unknown element type");
  expect_error(head + "  %a = f32[2]{0} constant({1,2})\n  ROOT %b = f32[2]{0} fusion(%a), calls=%nowhere\n}\n", 5,
               "no computation of that name");
  expect_error(head + "  ROOT %b = f32[2]{0} negate(%ghost)\n}\n", 4, "operand %ghost");
  // A fusion calling its own computation (found by fuzz_hlo: the cost walk recursed without end).
  expect_error(
      "HloModule m\n\n%f (p: f32[2]) -> f32[2] {\n  %p = f32[2]{0} parameter(0)\n"
      "  ROOT %g = f32[2]{0} fusion(%p), kind=kLoop, calls=%f\n}\n\n" +
          head.substr(head.find("ENTRY")) +
          "  %a = f32[2]{0} constant({1,2})\n  ROOT %b = f32[2]{0} fusion(%a), calls=%f\n}\n",
      5, "cycle in the call graph");
  expect_error("HloModule m\n\n%c () -> f32[] {\n  ROOT %k = f32[] constant(1)\n}\n", 6, "no ENTRY");
  expect_error(head + "  ROOT %a = f32[2]{0} constant({1,2}), backend_config={\"x\":1\n", 4, "never closed");
}

struct Real {
  const char* file;
  const char* body;
  double flops;  // of one decoder layer, from the model's shapes by hand
};

// Llama-3-8B: d 4096, 32 query and 8 KV heads of 128, MLP 14336: weights
// 2 x 4096^2 + 2 x 4096 x 1024 + 3 x 4096 x 14336 = 218,103,808 per layer;
// Qwen3-1.7B: d 2048, 16 and 8 heads of 128, MLP 6144: 50,331,648. FLOPs of
// the layer's matmuls: 2 x 128 tokens x weights (attention's own
// scores are in the splash-attention custom call).
const Real kReal[] = {
    {"maxtext-llama3_8b-v6e-4.hlo.txt", "wide.region_1.6_spmd.sunk.clone.clone.clone.sunk", 2.0 * 128 * 218103808.0},
    {"maxtext-qwen3_1.7b-v6e-4.hlo.txt", "wide.region_1.8_spmd.sunk.clone.clone.clone.sunk", 2.0 * 128 * 50331648.0},
};

TEST_CASE("MaxText's modules: cut short at 2000 lines, parsed whole up to the cut, counts as grep makes them") {
  for (const Real& r : kReal) {
    INFO(r.file);
    const std::string path = kData + r.file;
    // As they are, the text ends inside a computation: a located error.
    try {
      hlo::load_module(path);
      FAIL("no error");
    } catch (const sim::ConfigError& e) {
      CHECK(e.where().line == 2001);
      CHECK(std::string(e.what()).find("truncated") != std::string::npos);
    }
    const hlo::Module m = hlo::load_module(path, true);
    const std::string text = read(path);
    std::size_t instructions = 0, fusions = 0, gathers = 0;
    for (const auto& c : m.computations)
      for (const auto& in : c.instructions) {
        ++instructions;
        fusions += in.opcode == "fusion";
        gathers += in.opcode == "all-gather";
      }
    CHECK(m.scheduled);
    CHECK(m.num_partitions == 4);
    CHECK(m.computations.size() == std::size_t(count_lines(text, std::regex(R"(^%\S+ \(.*\{$)"))));
    CHECK(instructions == std::size_t(count_lines(text, std::regex(R"(^\s+(ROOT )?%\S+ = )"))));
    CHECK(fusions == std::size_t(count_lines(text, std::regex(R"(^\s+(ROOT )?%\S+ = .* fusion\(%)"))));
    CHECK(gathers == std::size_t(count_lines(text, std::regex(R"(^\s+(ROOT )?%\S+ = \S+ all-gather\()"))));
    CHECK(gathers == 7);
    // The decoder layer's matmul FLOPs, within 1% of the hand count.
    hlo::CostModel cm(m);
    double flops = 0;
    for (const auto& s : cm.schedule(*m.find(r.body))) flops += cm.cost(*s.computation, *s.instruction).flops;
    CHECK(flops == Approx(r.flops).epsilon(0.01));
  }
}

TEST_CASE("MaxText's decoder layers run on a v6e 2x2, every collective on the torus") {
  for (const char* name : {"llama3_8b", "qwen3_1.7b"}) {
    INFO(name);
    const workloads::Experiment exp = workloads::load_experiment(kData + name + "-layer-v6e-2x2.yaml");
    const workloads::RunOutput out = exp.workload->run(exp, {});
    const nlohmann::json& res = out.report["result"];
    const nlohmann::json& h = res["hlo"];
    REQUIRE(h["collectives"].size() == 7);
    for (const auto& c : h["collectives"]) {
      CHECK(c["time_s"].get<double>() > 0);
      CHECK(c["axes"].size() == 2);  // mesh axes of 4 devices: the whole 2x2
    }
    // Roofline: never faster than the chip's peak on the dots' FLOPs or its
    // HBM on the bytes, nor than the gathers' ICI time; within a sane factor.
    const double step = res["step_time_s"].get<double>();
    const double flops = h["flops_per_device"].get<double>();
    const double bytes = h["hbm_bytes_per_device"].get<double>();
    const double bound = std::max(flops / exp.chip.peak_flops_per_s(), bytes / exp.chip.hbm.bandwidth_bytes_per_s);
    CHECK(step >= bound);
    double comm = 0;
    for (const auto& c : h["collectives"]) comm += c["time_s"].get<double>();
    CHECK(step >= comm);  // the gathers are synchronous in this body
    CHECK(step <= 3.0 * (bound + comm));
  }
}

double step_of(const std::string& hlo_file) {
  const std::string yaml =
      "name: t\nchip: tpu-v6e\npod: {topology: torus2d, shape: [2, 2], wraparound: [false, false]}\n"
      "workload: {kind: hlo, file: " +
      hlo_file + "}\n";
  const workloads::Experiment exp = workloads::load_experiment_text(yaml, kData + "t.yaml");
  return exp.workload->run(exp, {}).report["result"]["step_time_s"].get<double>();
}

TEST_CASE("an async all-reduce overlaps the instructions scheduled between its start and done") {
  const double dot = step_of("dot-only.hlo.txt"), ar = step_of("all-reduce-only.hlo.txt");
  const double sync = step_of("sync-all-reduce.hlo.txt"), async = step_of("async-all-reduce.hlo.txt");
  INFO("dot " << dot << " all-reduce " << ar << " sync " << sync << " async " << async);
  // Synchronous: one after the other; asynchronous: the longer of the two.
  CHECK(sync == Approx(dot + ar).epsilon(0.02));
  CHECK(async == Approx(std::max(dot, ar)).epsilon(0.05));
  CHECK(async >= std::max(dot, ar));
}

TEST_CASE("an HLO sharded matmul takes the step time of the sharded_matmul kind it was written for") {
  const std::string dir = std::string(TPUSIM_SOURCE_DIR) + "/configs/experiments/";
  auto step = [&](const char* file) {
    const workloads::Experiment exp = workloads::load_experiment(dir + file);
    return exp.workload->run(exp, {}).report["result"]["step_time_s"].get<double>();
  };
  CHECK(step("hlo-sharded-matmul-v5e-2x4.yaml") == Approx(step("sharded-matmul-v5e-2x4.yaml")).epsilon(0.05));
}

TEST_CASE("a module that does not fit the pod is a located error") {
  const std::string pod = "chip: tpu-v6e\npod: {topology: torus2d, shape: [2, 2], wraparound: [false, false]}\n";
  // 8 partitions on 4 chips: at the header.
  try {
    workloads::load_experiment_text(
        pod + "workload: {kind: hlo, file: ../../../configs/hlo/sharded-matmul-v5e-2x4.hlo.txt}\n", kData + "t.yaml");
    FAIL("no error");
  } catch (const sim::ConfigError& e) {
    CHECK(e.where().line == 1);
    CHECK(std::string(e.what()).find("compiled for 8 devices") != std::string::npos);
  }
}

TEST_CASE("a kernel's FLOPs from workload.custom_call_flops run on the MXUs at their rate") {
  // One Pallas kernel without a cost_estimate on a v5e (196.6 TFLOP/s:
  // 4 MXUs x 128 x 128 x 2 x 1.5 GHz, configs/chips/tpu-v5e.yaml).
  const auto run = [](const std::string& flops) {
    const workloads::Experiment exp = workloads::load_experiment_text(
        "name: t\nchip: tpu-v5e\nworkload: {kind: hlo, file: custom-call-kernel.hlo.txt" + flops + "}\n",
        kData + "t.yaml");
    return exp.workload->run(exp, {}).report["result"];
  };
  const auto bytes_only = run("");
  CHECK(bytes_only["flops"].get<double>() == 0);
  // Given by its name without `.3`: 2^31 x 1000 FLOPs, 10.92 ms at peak.
  const double flops = 2147483648000.0, at_peak = flops / (4 * 128 * 128 * 2 * 1.5e9);
  const auto given = run(", custom_call_flops: {splash_fwd: 2147483648000}");
  CHECK(given["flops"].get<double>() == flops);
  const double t = given["step_time_s"].get<double>();
  INFO("step " << t << " s, at peak " << at_peak << " s");
  CHECK(t >= at_peak);
  CHECK(t <= 1.10 * at_peak);
  // By its full name, the same.
  CHECK(run(", custom_call_flops: {splash_fwd.3: 2147483648000}")["step_time_s"].get<double>() == t);
  // A name that is no custom-call of the module: exit 2 at the key, the nearest named.
  try {
    run(", custom_call_flops: {splash_fdw: 1e9}");
    FAIL("no error");
  } catch (const sim::ConfigError& e) {
    INFO(e.what());
    CHECK(e.where().line == 3);
    CHECK(std::string(e.what()).find("no custom-call 'splash_fdw'") != std::string::npos);
    CHECK(std::string(e.what()).find("did you mean 'splash_fwd'") != std::string::npos);
  }
  CHECK_THROWS_WITH(run(", custom_call_flops: {splash_fwd: -1}"),
                    Catch::Contains("FLOPs of a kernel must be at least 0 and below 2^62"));
}

}  // namespace test_hlo
