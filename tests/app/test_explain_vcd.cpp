// mxu.vcd from the command line: `explain mxu --vcd FILE` and
// `run EXP.yaml --vcd` (pe fidelity, MXU 0 of chip 0, into the run's out
// directory), and their refusals. The signal values themselves are checked
// against the PE model in tests/app/explain/test_mxu_vcd.cpp; here the files are
// checked for their structure and for covering every cycle of every op the
// report counts.
#include <unistd.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_runner.h"

namespace test_explain_vcd {

using testing_cli::run_tpusim;
using testing_cli::TempDir;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// How often the VCD records a value for the variable named `name` (its
// initial dump plus every change), and its last value (vectors only).
struct VarHistory {
  std::size_t records = 0;
  std::uint64_t last = 0;
};

VarHistory history(const std::string& vcd, const std::string& name) {
  std::istringstream in(vcd);
  std::string line, id;
  while (std::getline(in, line)) {
    std::istringstream t(line);
    std::string var, type, size, code, n;
    if (t >> var >> type >> size >> code >> n && var == "$var" && n == name) {
      id = code;
      break;
    }
  }
  REQUIRE(!id.empty());
  VarHistory h;
  while (std::getline(in, line)) {
    std::istringstream t(line);
    std::string value, code;
    if (t >> value >> code && code == id && value[0] == 'b') {
      ++h.records;
      h.last = std::stoull(value.substr(1), nullptr, 2);
    }
  }
  return h;
}

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("explain mxu --vcd writes the PE array of one op", "[app][explain][vcd]") {
  TempDir dir("explain-vcd");
  const std::string file = dir / "walk.vcd";
  auto r = run_tpusim("explain mxu --no-pager --rows 4 --cols 4 --m 6 --k 4 --n 4 --vcd " + file);
  INFO(r.output.substr(0, 1000));
  REQUIRE(r.status == 0);
  CHECK(r.output.find("VCD: " + file + " (121 signals, 16 cycles at 1 ns each; values match the host reference)") !=
        std::string::npos);
  const std::string vcd = slurp(file);
  CHECK(vcd.find("$timescale\n     1 ps\n$end") != std::string::npos);
  CHECK(vcd.find("$enddefinitions") != std::string::npos);
  CHECK(count(vcd, "$var real") == 5 * 16);  // a_in, w, w0, w1, psum per PE
  CHECK(vcd.find("$scope module pe_r3_c3 $end") != std::string::npos);
  CHECK(history(vcd, "cycle").records == 16);
  CHECK(history(vcd, "cycle").last == 15);
  CHECK(vcd.find("#16000\n") != std::string::npos);  // the idle array after the op

  // Without --walk: the table, with a VCD row (pe fidelity implied).
  auto table = run_tpusim("explain mxu --rows 2 --cols 2 --m 2 --k 2 --n 2 --vcd " + (dir / "t.vcd"));
  CHECK(table.status == 0);
  CHECK(table.output.find("pe fidelity") != std::string::npos);
  CHECK(table.output.find("values match the host reference") != std::string::npos);
  CHECK(std::filesystem::file_size(dir / "t.vcd") > 1000);
  auto json = run_tpusim("explain mxu --json --rows 2 --cols 2 --m 2 --k 2 --n 2 --vcd " + (dir / "j.vcd"));
  REQUIRE(json.status == 0);
  CHECK(nlohmann::json::parse(json.output)["vcd"]["matches_reference"] == true);
}

TEST_CASE("explain mxu --vcd refuses large ops and bad file names", "[app][explain][vcd][bad-input]") {
  TempDir dir("explain-vcd-bad");
  struct Bad {
    std::string args, says;
  };
  const Bad cases[] = {
      {"--vcd " + (dir / "big.vcd"), "VCD is for small arrays: the MXU is 128x128"},
      {"--rows 32 --cols 32 --m 4096 --k 64 --n 64 --vcd " + (dir / "long.vcd"), "VCD is for small ops"},
      {"--rows 4 --cols 4 --m 4 --k 4 --n 4 --vcd " + (dir / "wave.txt"), "must end in .vcd"},
      {"--rows 4 --cols 4 --m 4 --k 4 --n 4 --vcd /nonexistent-dir/x.vcd", "cannot write"},
      {"--rows 4 --cols 4 --m 4 --k 4 --n 4 --fidelity tile --vcd " + (dir / "tile.vcd"), "needs --fidelity pe"},
  };
  for (const Bad& c : cases) {
    auto r = run_tpusim("explain mxu " + c.args);
    INFO(c.args << " said: " << r.output);
    CHECK(r.status == 2);
    CHECK(r.output.find(c.says) != std::string::npos);
    CHECK(r.output.find("terminate") == std::string::npos);
  }
  CHECK_FALSE(std::filesystem::exists(dir / "big.vcd"));
  CHECK_FALSE(std::filesystem::exists(dir / "long.vcd"));
}

TEST_CASE("run --vcd writes OUT/mxu.vcd for pe-fidelity matmuls", "[app][vcd]") {
  TempDir dir("run-vcd");
  const std::string out = dir / "teach";
  auto r = run_tpusim("run configs/experiments/matmul-teach.yaml --set fidelity=pe --vcd --out " + out);
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("VCD (MXU 0)") != std::string::npos);
  const std::string vcd = slurp(out + "/mxu.vcd");
  CHECK(vcd.find("$scope module pe_r7_c7 $end") != std::string::npos);  // teach-8x8
  CHECK(count(vcd, "$var real") == 5 * 64);
  // Every op of MXU 0 and every one of its cycles is on file: the op
  // counter ends at the report's op count, and the cycle counter takes one
  // value per busy cycle.
  const auto report = nlohmann::json::parse(slurp(out + "/report.json"));
  const auto& mxu0 = report["stats"]["chip0"]["mxu0"];
  CHECK(history(vcd, "op").last == mxu0["ops"]["value"].get<double>());
  CHECK(history(vcd, "cycle").records == mxu0["busy_cycles"]["value"].get<double>());
  CHECK(report["result"]["functional"]["matches_reference"] == true);
}

TEST_CASE("run --vcd refuses tile fidelity, large MXUs or ops, and os arrays", "[app][vcd][bad-input]") {
  TempDir dir("run-vcd-bad");
  struct Bad {
    std::string args, says;
  };
  const Bad cases[] = {
      {"configs/experiments/matmul-teach.yaml --vcd",
       "mxu.vcd shows the PE array cycle by cycle, which needs fidelity: pe"},
      {"configs/experiments/matmul-v4.yaml --set fidelity=pe --vcd", "VCD is for small arrays: the MXU is 128x128"},
      {"configs/experiments/matmul-teach.yaml --set fidelity=pe --set workload.m=4096 --vcd",
       "VCD is for small ops: MXU 0's"},
  };
  const auto run_bad = [](const std::string& args, const std::string& says, const std::string& out) {
    auto r = run_tpusim("run " + args + " --out " + out);
    INFO(args << " said: " << r.output);
    CHECK(r.status == 2);
    CHECK(r.output.find("command line: --vcd: " + says) != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(out + "/report.json"));
    CHECK_FALSE(std::filesystem::exists(out + "/mxu.vcd"));
  };
  int i = 0;
  for (const Bad& c : cases) {
    const std::string out = dir / std::to_string(i++);
    run_bad(c.args, c.says, out);
  }
  // An output-stationary array has no weight registers to draw.
  const std::string os = dir / "os.yaml";
  std::ofstream(os) << "chip:\n  clock: 1.0e9\n  mxu: {rows: 8, cols: 8, dataflow: os}\n  vector_flops_per_cycle: 64\n"
                       "  vmem: 1048576\n  hbm: {capacity: 1073741824, bandwidth: 1.0e10}\n"
                       "  ici: {link_bandwidth: 1.0e10}\nfidelity: pe\nworkload: {kind: matmul, m: 8, k: 8, n: 8}\n";
  run_bad(os + " --vcd", "mxu.vcd draws the PEs' weight registers, which an output-stationary array", dir / "os");
}

}  // namespace test_explain_vcd
