// --trace: the Perfetto/Chrome trace has the shape ui.perfetto.dev expects
// (a schema check written from the Trace Event Format document), and every
// op of every chip appears once, on its engine's track, with the start and
// duration the pod runtime measured.
#include <catch2/catch.hpp>

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

}  // namespace test_trace
