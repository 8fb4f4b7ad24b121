// Issue 46 (reliability, round three), tried as a user would through the
// real binary: the output-path policy (sim::output_path_problem: a regular
// file or nothing, never a FIFO, device or a link leaving its folder,
// checked before any work), bounded HLO input (nesting, call chains, file
// size, parse memory against limits.max_memory), a report writer that
// refuses numbers that are not finite, and shipped reports without a null
// where a number belongs. Each finding's input is named in
// docs/hardening.md; the catalogue (test_bad_input_catalogue.cpp) holds the
// ones a file in tests/data/bad/ can carry.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "cli_runner.h"
#include "sim/error.h"
#include "workloads/report.h"

namespace test_reliability {

using testing_cli::run_tpusim;
using testing_cli::TempDir;
namespace fs = std::filesystem;

namespace {

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// An experiment of kind: hlo on a 2x2 v6e for the module text `hlo`.
std::string hlo_experiment(const TempDir& dir, const std::string& hlo) {
  write(dir / "module.hlo.txt", hlo);
  write(dir / "exp.yaml",
        "chip: tpu-v6e\npod: {topology: torus2d, shape: [2, 2], wraparound: [false, false]}\n"
        "workload: {kind: hlo, file: module.hlo.txt}\n");
  return dir / "exp.yaml";
}

}  // namespace

TEST_CASE("output paths: a FIFO, a device or a link leaving the folder is refused before any work", "[app][outputs]") {
  TempDir tmp("outpath");
  // --html at a FIFO: renaming over it replaced it (and /dev/null, as root);
  // writing into it would wait for a reader.
  REQUIRE(::mkfifo((tmp / "page.html").c_str(), 0644) == 0);
  auto r =
      run_tpusim("run configs/experiments/matmul-teach.yaml --out " + (tmp / "run") + " --html " + (tmp / "page.html"));
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("--html: cannot write") && Catch::Contains("is a FIFO"));
  CHECK(fs::is_fifo(tmp / "page.html"));
  CHECK_FALSE(fs::exists(tmp / "run/report.json"));  // refused before the run

  // A link to a device outside the folder: refused, the device untouched.
  fs::create_symlink("/dev/null", tmp / "null.html");
  r = run_tpusim("explain mxu --rows 4 --cols 4 --m 4 --k 4 --n 4 --html " + (tmp / "null.html"));
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("symbolic link to a file outside its folder"));
  CHECK(fs::is_character_file("/dev/null"));

  // explain --vcd at a FIFO hung; now refused at once.
  REQUIRE(::mkfifo((tmp / "wave.vcd").c_str(), 0644) == 0);
  r = run_tpusim("explain mxu --rows 4 --cols 4 --m 4 --k 4 --n 4 --vcd " + (tmp / "wave.vcd"));
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("is a FIFO"));

  // report.json in the output folder as a link to a file outside it: the
  // run would have replaced only the link, but the policy refuses writing
  // through links that leave the folder; the file outside keeps its bytes.
  write(tmp / "outside.json", "keep");
  fs::create_directories(tmp / "run");
  fs::create_symlink(tmp / "outside.json", tmp / "run/report.json");
  r = run_tpusim("run configs/experiments/matmul-teach.yaml --out " + (tmp / "run"));
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("report.json in it is a symbolic link to a file outside its folder"));
  CHECK(read(tmp / "outside.json") == "keep");

  // SCALE-Sim's outputs take the same policy.
  fs::create_directories(tmp / "ss");
  REQUIRE(::mkfifo((tmp / "ss/COMPUTE_REPORT.csv").c_str(), 0644) == 0);
  r = run_tpusim("scalesim configs/scalesim/array-32x32-ws.cfg configs/scalesim/gemm-mix.csv --out " + (tmp / "ss"));
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("COMPUTE_REPORT.csv in it is a FIFO"));

  // A link to a regular file inside the folder is an ordinary output.
  write(tmp / "real.html", "old");
  fs::create_symlink("real.html", tmp / "link.html");
  r = run_tpusim("explain mxu --rows 4 --cols 4 --m 4 --k 4 --n 4 --html " + (tmp / "link.html"));
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(read(tmp / "link.html").find("<html") != std::string::npos);
}

TEST_CASE("hlo: a tuple 50,000 deep and a call chain 50,000 long are located errors, not a crash", "[app][hlo]") {
  TempDir tmp("hlo-deep");
  const int depth = 50000;
  std::string text =
      "HloModule deep, num_partitions=4\n\nENTRY %main (p: f32[4]) -> f32[4] {\n  %p = f32[4]{0} "
      "parameter(0)\n  %t = " +
      std::string(depth, '(') + "f32[4]" + std::string(depth, ')') + " tuple(%p)\n  ROOT %c = f32[4]{0} copy(%p)\n}\n";
  auto r = run_tpusim("run " + hlo_experiment(tmp, text) + " --out " + (tmp / "out"));
  INFO(r.output.substr(0, 2000));
  CHECK(r.status == 2);  // was 139, SIGSEGV
  CHECK_THAT(r.output, Catch::Contains("module.hlo.txt:5:") && Catch::Contains("nest deeper than 64 levels"));
  CHECK(r.output.size() < 2000);  // the message does not echo the input

  // Computations calling each other 50,000 deep (the cycle check walked
  // them recursively).
  std::string chain = "HloModule chain, num_partitions=4\n\n";
  const int n = 50000;
  for (int k = n - 1; k >= 0; --k) {
    chain += "%c" + std::to_string(k) + " (x: f32[]) -> f32[] {\n  %x = f32[] parameter(0)\n";
    chain += k + 1 < n ? "  ROOT %r = f32[] call(%x), to_apply=%c" + std::to_string(k + 1) + "\n}\n\n"
                       : "  ROOT %r = f32[] negate(%x)\n}\n\n";
  }
  chain +=
      "ENTRY %main (p: f32[]) -> f32[] {\n  %p = f32[] parameter(0)\n  ROOT %r = f32[] call(%p), to_apply=%c0\n}\n";
  r = run_tpusim("run " + hlo_experiment(tmp, chain) + " --out " + (tmp / "out"));
  INFO(r.output.substr(0, 2000));
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("module.hlo.txt:") && Catch::Contains("calls nest deeper than 64"));
}

TEST_CASE("hlo: a file past the size bound, or a parse above limits.max_memory, is refused before reading",
          "[app][hlo]") {
  TempDir tmp("hlo-size");
  // A sparse file of 257 MiB: refused from its size, never read (a 1 GB
  // module ended in std::bad_alloc, exit 1).
  write(tmp / "module.hlo.txt", "HloModule big\n");
  fs::resize_file(tmp / "module.hlo.txt", (std::uintmax_t(257) << 20));
  write(tmp / "exp.yaml",
        "chip: tpu-v6e\npod: {topology: torus2d, shape: [2, 2], wraparound: [false, false]}\n"
        "workload: {kind: hlo, file: module.hlo.txt}\n");
  auto r = run_tpusim("run " + (tmp / "exp.yaml") + " --out " + (tmp / "out"));
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK_THAT(r.output, Catch::Contains("module.hlo.txt: larger than 256 MiB"));

  // MaxText's Llama-3-8B layer (318 kB of text) against a 100 kB memory
  // limit: exit 3 with the estimate, before it is parsed.
  r = run_tpusim("run tests/data/hlo/llama3_8b-layer-v6e-2x2.yaml --set 'limits={max_memory: 100000}' --out " +
                 (tmp / "out"));
  INFO(r.output);
  CHECK(r.status == 3);
  CHECK_THAT(r.output, Catch::Contains("memory: reading the HLO module would need about"));
}

TEST_CASE("report.json: a number that is not finite is refused, naming its key", "[app][report]") {
  // nlohmann::json prints inf and nan as null: report_text refuses them.
  const nlohmann::json good = {{"result", {{"ttft_s", 0.25}, {"memory", nullptr}}}};
  CHECK(workloads::report_text(good, workloads::ReportDetail::summary).find("0.25") != std::string::npos);
  for (const double bad : {INFINITY, -INFINITY, NAN}) {
    const nlohmann::json j = {{"result", {{"requests", {{{"ttft_s", 0.5}}, {{"ttft_s", bad}}}}}}};
    CHECK_THROWS_AS(workloads::report_text(j, workloads::ReportDetail::summary), sim::SimFailure);
    CHECK_THROWS_WITH(workloads::report_text(j, workloads::ReportDetail::summary),
                      Catch::Contains("result.requests[1].ttft_s is not a finite number"));
  }
  // Text that is not UTF-8 (a name from an input) is written, replaced, not
  // thrown as an internal error.
  const nlohmann::json latin1 = {{"name", std::string("caf\xe9")}};
  CHECK(workloads::report_text(latin1, workloads::ReportDetail::summary).find("caf\xef\xbf\xbd") != std::string::npos);
}

namespace {

// Every key path of `j` ("result.steps[].time_s", array indices folded)
// with the JSON types it holds.
void types_by_path(const nlohmann::json& j, const std::string& path,
                   std::map<std::string, std::set<std::string>>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      types_by_path(it.value(), path.empty() ? it.key() : path + "." + it.key(), out);
  } else if (j.is_array()) {
    for (const auto& e : j) types_by_path(e, path + "[]", out);
  } else {
    out[path].insert(j.is_null() ? "null" : j.is_number() ? "number" : j.type_name());
    if (j.is_number_float()) CHECK(std::isfinite(j.get<double>()));
  }
}

}  // namespace

TEST_CASE("reports: no shipped run has a null where a number belongs", "[app][report]") {
  // One shipped config of each kind and command (the longer ones run under
  // scripts/compare-reports, which runs every shipped config). A key that is
  // a number in one report and null in another is a number lost (inf and
  // nan print as null); optional sections are null or an object, never a
  // number.
  TempDir tmp("null-scan");
  const char* const kRuns[] = {
      "run configs/experiments/matmul-teach.yaml",
      "run configs/experiments/allgather-ring-v5e-16.yaml",
      "run configs/experiments/allreduce-v4-4x4x4-degraded-link.yaml",
      "run configs/experiments/conv-resnet18-head-v4.yaml",
      "run configs/experiments/hlo-sharded-matmul-v5e-2x4.yaml",
      "run configs/experiments/sharded-matmul-v5e-2x4.yaml",
      "run configs/experiments/train-pp-v5e.yaml",
      "run configs/experiments/train-dp-v5e.yaml",
      "run configs/experiments/serve-llama3-70b-v5e-8.yaml",
      "scalesim configs/scalesim/array-32x32-ws.cfg configs/scalesim/resnet18-head.csv",
  };
  std::map<std::string, std::set<std::string>> types;
  int k = 0;
  for (const char* cmd : kRuns) {
    const std::string out = tmp / std::to_string(k++);
    const auto r = run_tpusim(std::string(cmd) + " --out " + out);
    INFO(cmd << "\n" << r.output);
    REQUIRE(r.status == 0);
    const std::string text = read(out + "/report.json");
    types_by_path(nlohmann::json::parse(text), "", types);
  }
  // Numbers workloads/report.h declares optional, null by design ("null
  // without communication", no chip gated the collective).
  const std::set<std::string> optional_numbers = {"collectives[].gated_by", "result.communication.overlap_fraction",
                                                  "result.validation.median_abs_error",
                                                  "result.validation.signed_mean_error"};
  for (const auto& [path, seen] : types) {
    INFO(path);
    if (optional_numbers.count(path)) continue;
    CHECK_FALSE((seen.count("null") && seen.count("number")));
  }
}

}  // namespace test_reliability
