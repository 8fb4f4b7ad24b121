// trace.json as Perfetto needs it, checked on the files real runs write
// (`tpusim run --trace`, --trace-chips): every track's slices nest or are
// disjoint, every flow arrow starts and finishes (finish not before start),
// counters are non-negative and the HBM one stays within the chip's HBM
// bandwidth, link utilizations stay within 1, a training step's chips have a
// memory counter, and the written
// chips are the ones asked for. The validator is
// written from the Trace Event Format document (complete events "X",
// counters "C", flow events "s"/"f"), not from the writer, and rejects a
// hand-made bad trace.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "app/cli_runner.h"
#include "workloads/experiment.h"

namespace test_trace_validator {

namespace {

// Timestamps are microseconds written as doubles with picosecond fractions.
constexpr double kEps = 1e-6;
const char* const kHbmCounter = "HBM bandwidth in use (B/s)";
const char* const kMemoryCounter = "HBM in use (B)";

struct Expect {
  std::set<int> chips;         // the processes the trace must have, exactly
  double hbm_bytes_per_s = 0;  // the chip's HBM bandwidth
  bool flows = false;          // the run sends messages between written chips
  bool memory = false;         // a training step: each chip has a memory counter
};

// The problems found, empty for a good trace.
std::vector<std::string> validate(const nlohmann::json& t, const Expect& want) {
  std::vector<std::string> bad;
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> tracks;  // (pid, tid) -> (start, end)
  std::map<std::uint64_t, double> flow_start;
  std::vector<std::pair<std::uint64_t, double>> flow_finish;
  std::set<int> processes, with_counters, with_hbm, with_memory;
  for (const auto& e : t.at("traceEvents")) {
    const std::string ph = e.at("ph");
    const int pid = e.at("pid");
    if (ph == "M" && e.at("name") == "process_name") processes.insert(pid);
    if (ph == "X") {
      const double ts = e.at("ts"), dur = e.at("dur");
      if (dur < 0) bad.push_back("negative duration");
      tracks[{pid, e.at("tid").get<int>()}].emplace_back(ts, ts + dur);
    } else if (ph == "s") {
      if (!flow_start.emplace(e.at("id").get<std::uint64_t>(), e.at("ts").get<double>()).second)
        bad.push_back("two flow starts with one id");
    } else if (ph == "f") {
      flow_finish.emplace_back(e.at("id").get<std::uint64_t>(), e.at("ts").get<double>());
    } else if (ph == "C") {
      with_counters.insert(pid);
      if (e.at("name") == kMemoryCounter) with_memory.insert(pid);
      const std::string name = e.at("name");
      if (name.rfind("ICI link ", 0) == 0)
        for (const auto& [k, v] : e.at("args").items())
          if (v.get<double>() > 1 + 1e-9) bad.push_back(name + " above 1");
      for (const auto& [k, v] : e.at("args").items()) {
        if (v.get<double>() < 0) bad.push_back("counter " + e.at("name").get<std::string>() + " below 0");
        if (e.at("name") == kHbmCounter) {
          with_hbm.insert(pid);
          if (v.get<double>() > want.hbm_bytes_per_s * (1 + 1e-9))
            bad.push_back("HBM counter " + std::to_string(v.get<double>()) + " B/s above the chip's " +
                          std::to_string(want.hbm_bytes_per_s));
        }
      }
    }
  }
  // Nesting: in start order (the longer first at a tie), each slice ends
  // before the enclosing one does, or starts after it has ended.
  for (auto& [track, slices] : tracks) {
    std::sort(slices.begin(), slices.end(),
              [](const auto& a, const auto& b) { return std::tie(a.first, b.second) < std::tie(b.first, a.second); });
    std::vector<double> open;  // ends of the enclosing slices
    for (const auto& [start, end] : slices) {
      while (!open.empty() && open.back() <= start + kEps) open.pop_back();
      if (!open.empty() && end > open.back() + kEps) {
        bad.push_back("chip " + std::to_string(track.first) + " track " + std::to_string(track.second) +
                      ": a slice at " + std::to_string(start) + " us overlaps another without nesting");
        break;
      }
      open.push_back(end);
    }
  }
  std::set<std::uint64_t> finished;
  for (const auto& [id, ts] : flow_finish) {
    const auto it = flow_start.find(id);
    if (it == flow_start.end()) {
      bad.push_back("flow " + std::to_string(id) + " finishes without a start");
      continue;
    }
    if (ts + kEps < it->second) bad.push_back("flow " + std::to_string(id) + " finishes before it starts");
    finished.insert(id);
  }
  for (const auto& [id, ts] : flow_start)
    if (!finished.count(id)) bad.push_back("flow " + std::to_string(id) + " starts without a finish");
  if (want.flows && flow_start.empty()) bad.push_back("no flow arrows");
  if (processes != want.chips) bad.push_back("written chips differ from the ones asked for");
  for (const int c : want.chips)
    if (!with_counters.count(c) || !with_hbm.count(c))
      bad.push_back("chip " + std::to_string(c) + " has no HBM counter");
  if (want.memory)
    for (const int c : want.chips)
      if (!with_memory.count(c)) bad.push_back("chip " + std::to_string(c) + " has no memory counter");
  return bad;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

nlohmann::json read_trace(const testing_cli::TempDir& dir) {
  std::ifstream in(dir / "trace.json");
  REQUIRE(in);
  return nlohmann::json::parse(in);
}

double hbm_bandwidth(const std::string& experiment) {
  return workloads::load_experiment(std::string(TPUSIM_SOURCE_DIR) + "/" + experiment).chip.hbm.bandwidth_bytes_per_s;
}

// The chips report.json says the trace wrote.
std::set<int> reported_chips(const testing_cli::TempDir& dir) {
  const nlohmann::json report = testing_cli::read_report(dir.path.string());  // held: the loop reads into it
  std::set<int> chips;
  for (const auto& w : report.at("simulator").at("trace").at("written")) chips.insert(w.at("chip").get<int>());
  return chips;
}

}  // namespace

TEST_CASE("trace validator: a pipeline run's trace nests, its sends flow to their receives", "[app][trace]") {
  const std::string exp = "configs/experiments/train-pp-v5e.yaml";
  testing_cli::TempDir dir("trace-pp");
  // A cut of the shipped run: 4 microbatches of 256 (the schedule's shape, a quarter of its ops).
  const auto r = testing_cli::run_tpusim("run " + exp + " --trace --set workload.global_batch=1024 " +
                                         "--set workload.parallelism.microbatches=4 --out " + dir.path.string());
  INFO(r.output);
  REQUIRE(r.status == 0);
  const auto t = read_trace(dir);
  // Four pipeline stages, each its own program: every chip is simulated.
  const std::set<int> all{0, 1, 2, 3};
  CHECK(reported_chips(dir) == all);
  const auto bad = validate(t, {all, hbm_bandwidth(exp), true, true});
  INFO(joined(bad));
  CHECK(bad.empty());
}

TEST_CASE("trace validator: a data-parallel run writes its simulated chip, or the chips asked for", "[app][trace]") {
  const std::string exp = "configs/experiments/train-dp-v4.yaml";
  const std::string cut = " --set workload.model.layers=2";
  {
    testing_cli::TempDir dir("trace-dp");
    const auto r = testing_cli::run_tpusim("run " + exp + cut + " --trace --out " + dir.path.string());
    INFO(r.output);
    REQUIRE(r.status == 0);
    const auto t = read_trace(dir);
    // Eight replicas of one program on a 2x2x2 torus without wraparound:
    // the report names the chips simulated, and the trace writes those.
    const std::set<int> simulated = reported_chips(dir);
    REQUIRE(!simulated.empty());
    CHECK(simulated.size() < 8);
    const auto bad = validate(t, {simulated, hbm_bandwidth(exp), false, true});
    INFO(joined(bad));
    CHECK(bad.empty());
    // The all-reduce slices carry their bytes.
    bool collective_bytes = false;
    for (const auto& e : t["traceEvents"])
      if (e["ph"] == "X" && e["cat"] == "ici" && e.contains("args") && e["args"].contains("bytes"))
        collective_bytes = collective_bytes || e["args"]["bytes"].get<double>() > 0;
    CHECK(collective_bytes);
  }
  {
    testing_cli::TempDir dir("trace-dp-chips");
    const auto r = testing_cli::run_tpusim("run " + exp + cut + " --trace-chips 0,5-6 --out " + dir.path.string());
    INFO(r.output);
    REQUIRE(r.status == 0);
    const auto bad = validate(read_trace(dir), {{0, 5, 6}, hbm_bandwidth(exp), false, true});
    INFO(joined(bad));
    CHECK(bad.empty());
    CHECK(reported_chips(dir) == std::set<int>{0, 5, 6});
  }
  {
    const auto r = testing_cli::run_tpusim("run " + exp + " --trace-chips 3,9");
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Catch::Contains("chip 9 is not in the 8-chip pod"));
    CHECK(testing_cli::run_tpusim("run " + exp + " --trace-chips 4-2").status == 2);
  }
}

TEST_CASE("trace validator: rejects a hand-made bad trace", "[app][trace]") {
  const auto t = nlohmann::json::parse(R"json({"traceEvents": [
    {"ph": "M", "pid": 0, "name": "process_name", "args": {"name": "chip0"}},
    {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "chip1"}},
    {"ph": "X", "pid": 0, "tid": 1, "name": "a", "ts": 0, "dur": 10},
    {"ph": "X", "pid": 0, "tid": 1, "name": "b", "ts": 5, "dur": 10},
    {"ph": "X", "pid": 0, "tid": 2, "name": "c", "ts": 0, "dur": 10},
    {"ph": "X", "pid": 0, "tid": 2, "name": "d", "ts": 2, "dur": 3},
    {"ph": "C", "pid": 0, "name": "HBM bandwidth in use (B/s)", "ts": 0, "args": {"value": 2e12}},
    {"ph": "C", "pid": 0, "name": "ICI bandwidth in use (B/s)", "ts": 0, "args": {"value": -1}},
    {"ph": "C", "pid": 0, "name": "ICI link x+ utilization", "ts": 0, "args": {"value": 1.5}},
    {"ph": "s", "id": 1, "pid": 0, "tid": 1, "name": "m", "ts": 8},
    {"ph": "f", "id": 1, "pid": 1, "tid": 1, "name": "m", "ts": 4, "bp": "e"},
    {"ph": "f", "id": 2, "pid": 1, "tid": 1, "name": "m", "ts": 4, "bp": "e"},
    {"ph": "s", "id": 3, "pid": 0, "tid": 1, "name": "m", "ts": 1}]})json");
  const auto bad = validate(t, {{0, 1, 2}, 1e12, true, true});
  const std::string all = joined(bad);
  INFO(all);
  CHECK_THAT(all, Catch::Contains("chip 0 track 1: a slice at 5"));  // a, b overlap; c holds d: fine
  CHECK_THAT(all, !Catch::Contains("track 2"));
  CHECK_THAT(all, Catch::Contains("above the chip's"));
  CHECK_THAT(all, Catch::Contains("below 0"));
  CHECK_THAT(all, Catch::Contains("flow 1 finishes before it starts"));
  CHECK_THAT(all, Catch::Contains("flow 2 finishes without a start"));
  CHECK_THAT(all, Catch::Contains("flow 3 starts without a finish"));
  CHECK_THAT(all, Catch::Contains("written chips differ"));
  CHECK_THAT(all, Catch::Contains("chip 1 has no HBM counter"));
  CHECK_THAT(all, Catch::Contains("chip 0 has no memory counter"));
  CHECK_THAT(all, Catch::Contains("ICI link x+ utilization above 1"));
  CHECK(bad.size() == 13);
}

}  // namespace test_trace_validator
