// --trace: the Perfetto/Chrome trace has the shape ui.perfetto.dev expects
// (a schema check written from the Trace Event Format document), and every
// op of every chip appears once, on its engine's track, with the start and
// duration the pod runtime measured.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "runtime/pod_run.h"
#include "sim/trace.h"
#include "workloads/experiment.h"
#include "workloads/sharding/workload.h"

namespace test_trace {

namespace {

// Trace Event Format: {"traceEvents": [...]}; complete events ("X") carry
// name, ph, ts, dur (microseconds), pid, tid; metadata events ("M") name
// processes and threads.
void check_schema(const nlohmann::json& t) {
  REQUIRE(t.is_object());
  REQUIRE(t["traceEvents"].is_array());
  for (const auto& e : t["traceEvents"]) {
    REQUIRE(e.is_object());
    REQUIRE(e["ph"].is_string());
    REQUIRE(e["pid"].is_number_integer());
    REQUIRE(e["name"].is_string());
    const std::string ph = e["ph"];
    REQUIRE((ph == "X" || ph == "M" || ph == "C" || ph == "s" || ph == "f"));
    if (ph == "X") {
      REQUIRE(e["tid"].is_number_integer());
      REQUIRE(e["ts"].is_number());
      REQUIRE(e["dur"].is_number());
      REQUIRE(e["dur"].get<double>() >= 0);
    } else if (ph != "s" && ph != "f") {
      REQUIRE(e["args"].is_object());
    }
  }
}

}  // namespace

TEST_CASE("pod trace: schema, and every op of every chip with its start and duration", "[workloads][trace]") {
  auto exp =
      workloads::load_experiment(std::string(TPUSIM_SOURCE_DIR) + "/configs/experiments/sharded-matmul-v5e-2x4.yaml");
  auto where = sim::YamlNode::load_string("{}", "t");
  workloads::ShardedMatmulSpec spec;
  spec.shape = {2048, 1024, 1024, 2};
  spec.a = workloads::parse_partition_spec(sim::YamlNode::load_string("[data, model]", "a"), 2, exp.mesh, "A");
  spec.b = workloads::parse_partition_spec(sim::YamlNode::load_string("[null, model]", "b"), 2, exp.mesh, "B");
  spec.out = workloads::parse_partition_spec(sim::YamlNode::load_string("[data, model]", "c"), 2, exp.mesh, "C");
  spec.collective_matmul = true;
  spec.plan = workloads::plan_sharded_matmul(spec.shape, spec.a, spec.b, spec.out, exp.mesh, where);

  auto program = workloads::build_sharded_matmul_program(exp, spec);
  auto run = runtime::run_pod(workloads::pod_config(exp), program, true);
  auto trace = nlohmann::json::parse(run.trace_json);
  check_schema(trace);

  std::map<std::pair<int, int>, std::string> track;  // (pid, tid) -> engine name
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name") {
      // An engine's overlapping ops go on its sub-tracks, "mxu0 #1" and on.
      const std::string name = e["args"]["name"];
      track[{e["pid"], e["tid"]}] = name.substr(0, name.find(" #"));
    }
  // (chip, op name, engine) -> (ts, dur) of each X event
  std::multimap<std::tuple<int, std::string, std::string>, std::pair<double, double>> events;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X")
      events.insert({{e["pid"].get<int>(), e["name"].get<std::string>(), track.at({e["pid"], e["tid"]})},
                     {e["ts"].get<double>(), e["dur"].get<double>()}});

  std::size_t ops = 0;
  for (std::uint32_t c = 0; c < program.chip_count(); ++c) {
    const auto& prog = program.chip(c);
    for (std::size_t i = 0; i < prog.ops.size(); ++i, ++ops) {
      const auto& op = prog.ops[i];
      const auto& t = (*run.timings[c])[i];
      const std::string engine = std::string(hw::engine_kind_name(op.engine.kind)) + std::to_string(op.engine.index);
      auto range = events.equal_range({static_cast<int>(c), op.name, engine});
      bool found = false;
      for (auto it = range.first; it != range.second && !found; ++it)
        found = it->second.first == Approx(double(t.start_ps) * 1e-6).margin(1e-9) &&
                it->second.second == Approx(double(t.end_ps - t.start_ps) * 1e-6).margin(1e-9);
      INFO("chip " << c << " op " << op.name << " on " << engine);
      CHECK(found);
    }
  }
  CHECK(events.size() == ops);
  // The collective matmul's permutes run while the MXUs work: visible in the trace.
  CHECK(run.chip_stats(0).value("program.hidden_communication_time") > 0);
}

TEST_CASE("trace: stops at its bound and counts the ops it left out", "[workloads][trace]") {
  sim::TraceWriter tw(3);
  tw.name_process(0, "chip0");
  tw.name_track(0, 1, "mxu0");
  for (std::uint64_t i = 0; i < 5; ++i) tw.op(0, 1, "op" + std::to_string(i), 1000 * i, 1000 * i + 500);
  CHECK(tw.ops() == 3);
  CHECK(tw.dropped() == 2);
  const auto t = nlohmann::json::parse(tw.json());
  check_schema(t);
  std::vector<std::string> names;
  for (const auto& e : t["traceEvents"])
    if (e["ph"] == "X") names.push_back(e["name"]);
  CHECK(names == std::vector<std::string>{"op0", "op1", "op2"});  // the first three, in order
  CHECK(t["displayTimeUnit"] == "ns");
}

TEST_CASE("trace: aggregated, ops merge per bin and counters keep their integral", "[workloads][trace]") {
  sim::TraceWriter tw;
  tw.aggregate(10);  // bins of 10 ps
  tw.name_process(0, "chip0");
  tw.name_track(0, 1, "mxu0");
  // Two ops start in bin 0 ([0, 3] and [4, 6], 2 and 3 FLOPs), one in bin 1.
  const std::size_t a = tw.op(0, 1, "a", 0, 3, "mxu", {{"flops", 2}});
  const std::size_t b = tw.op(0, 1, "b", 4, 6, "mxu", {{"flops", 3}});
  tw.op(0, 1, "c", 12, 15, "mxu", {{"flops", 7}});
  tw.op(0, 2, "task", 1, 2, "pipeline", {}, false);  // kept whole
  CHECK(a == b);
  tw.flow(a, b);  // left out
  // A counter at 2 from 0, 4 from 5, 0 from 25: by hand, bin [0, 10) means
  // (2 x 5 + 4 x 5) / 10 = 3, [10, 20) holds 4, [20, 25) means 4, then 0;
  // 90 under the curve, as the samples' own 2 x 5 + 4 x 20.
  tw.counter(0, "rate", 0, 2.0);
  tw.counter(0, "rate", 5, 4.0);
  tw.counter(0, "rate", 25, 0.0);
  const auto t = nlohmann::json::parse(tw.json());
  check_schema(t);
  CHECK(t["otherData"]["tpusim"].get<std::string>().find("aggregated") == 0);
  std::vector<nlohmann::json> slices, samples;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] == "X") slices.push_back(e);
    if (e["ph"] == "C") samples.push_back(e);
    CHECK(e["ph"] != "s");
  }
  REQUIRE(slices.size() == 3);
  CHECK(tw.ops() == slices.size() + 4);  // the slices and the counter's four samples below
  CHECK(slices[0]["name"] == "2 mxu ops");
  CHECK(slices[0]["ts"].get<double>() == 0);
  CHECK(slices[0]["dur"].get<double>() == Approx(6e-6));  // [0, 6] ps in us
  CHECK(slices[0]["args"]["ops"] == 2);
  CHECK(slices[0]["args"]["busy_s"].get<double>() == Approx(5e-12));
  CHECK(slices[0]["args"]["flops"].get<double>() == 5);
  CHECK(slices[1]["name"] == "c");  // alone in its bin: the op as it is
  CHECK(slices[2]["name"] == "task");
  std::vector<std::pair<double, double>> curve;  // (ps, value)
  for (const auto& c : samples) curve.emplace_back(c["ts"].get<double>() * 1e6, c["args"]["value"].get<double>());
  std::sort(curve.begin(), curve.end());
  REQUIRE(curve.size() == 4);
  CHECK(curve[0].first == Approx(0));
  CHECK(curve[0].second == Approx(3.0));
  CHECK(curve[1].first == Approx(10));
  CHECK(curve[1].second == Approx(4.0));
  CHECK(curve[2].first == Approx(20));
  CHECK(curve[2].second == Approx(4.0));
  CHECK(curve[3].first == Approx(25));
  CHECK(curve[3].second == 0);
  double integral = 0;
  for (std::size_t k = 0; k + 1 < curve.size(); ++k)
    integral += curve[k].second * (curve[k + 1].first - curve[k].first);
  CHECK(integral == Approx(2.0 * 5 + 4.0 * 20));
}

TEST_CASE("trace: aggregated only for a default request past the bound", "[workloads][trace]") {
  const sim::TraceRequest all_simulated(true);
  sim::TraceRequest chosen(true);
  chosen.chips = {0, 1};
  const std::uint64_t span = 36'000'000'000'000;  // 36 s
  CHECK(sim::TraceWriter::aggregate_bin_ps(all_simulated, 2e6, span) == span / 1000);
  CHECK(sim::TraceWriter::aggregate_bin_ps(all_simulated, 1e6, span) == 0);  // within the bound: op by op
  CHECK(sim::TraceWriter::aggregate_bin_ps(chosen, 2e6, span) == 0);         // --trace-chips: op by op, bounded
}

}  // namespace test_trace
