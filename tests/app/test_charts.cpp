// The chart scripts (scripts/plot_roofline, plot_pipeline, plot_bubbles, plot_ici_heatmap, plot_stream)
// on real tpusim output: each must write a real PNG (signature, IHDR size)
// or SVG (root element) of some substance, print what it drew, and refuse
// bad input with exit status 2. The pipeline script's idle fractions are
// also checked on a hand-made GPipe trace whose bubble is known, and on a
// real GPipe training run against its report.
#include <unistd.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_runner.h"

namespace test_charts {

using testing_cli::CliResult;
using testing_cli::run_tpusim;
using testing_cli::TempDir;

namespace {

// Runs a script from the source tree, stdout and stderr together.
CliResult run_script(const std::string& args) { return testing_cli::run_in_source_tree(args); }

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::uint32_t big_endian(const std::string& s, std::size_t at) {
  return std::uint32_t(static_cast<unsigned char>(s[at])) << 24 |
         std::uint32_t(static_cast<unsigned char>(s[at + 1])) << 16 |
         std::uint32_t(static_cast<unsigned char>(s[at + 2])) << 8 |
         std::uint32_t(static_cast<unsigned char>(s[at + 3]));
}

// A PNG file: the 8-byte signature, an IHDR chunk first, at least
// min_width x min_height pixels, and more than min_bytes (a blank figure
// compresses to a few kB).
void check_png(const std::string& path, std::uint32_t min_width, std::uint32_t min_height, std::size_t min_bytes) {
  INFO(path);
  REQUIRE(std::filesystem::exists(path));
  const std::string png = slurp(path);
  REQUIRE(png.size() > 33);
  CHECK(png.compare(0, 8, std::string("\x89PNG\r\n\x1a\n", 8)) == 0);
  CHECK(png.compare(12, 4, "IHDR") == 0);
  CHECK(big_endian(png, 16) >= min_width);
  CHECK(big_endian(png, 20) >= min_height);
  CHECK(png.size() > min_bytes);
  CHECK(png.compare(png.size() - 8, 4, "IEND") == 0);
}

void check_svg(const std::string& path, std::size_t min_bytes) {
  INFO(path);
  REQUIRE(std::filesystem::exists(path));
  const std::string svg = slurp(path);
  CHECK(svg.find("<svg") != std::string::npos);
  CHECK(svg.find("</svg>") != std::string::npos);
  CHECK(svg.size() > min_bytes);
}

}  // namespace

TEST_CASE("plot_roofline places real runs on their chips' roofs", "[app][charts]") {
  TempDir dir("charts-roofline");
  for (const char* e : {"matmul-teach", "matvec-v4", "matmul-v5e"}) {
    auto r = run_tpusim(std::string("run configs/experiments/") + e + ".yaml --out " + (dir / e));
    REQUIRE(r.status == 0);
  }
  // Reports by file and by directory; three chips, three points.
  auto r = run_script("scripts/plot_roofline " + (dir / "matmul-teach/report.json") + " " + (dir / "matvec-v4") + " " +
                      (dir / "matmul-v5e") + " -o " + (dir / "roofline.png"));
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("wrote " + (dir / "roofline.png") + " (3 roofs, 3 points)") != std::string::npos);
  CHECK(r.output.find("matvec-v4: intensity") != std::string::npos);
  CHECK(r.output.find("memory-bound") != std::string::npos);
  check_png(dir / "roofline.png", 600, 400, 30000);

  auto svg = run_script("scripts/plot_roofline " + (dir / "matvec-v4") + " -o " + (dir / "roofline.svg"));
  REQUIRE(svg.status == 0);
  check_svg(dir / "roofline.svg", 20000);

  CHECK(run_script("scripts/plot_roofline " + (dir / "nothing.json") + " -o " + (dir / "x.png")).status == 2);
  CHECK(run_script("scripts/plot_roofline " + (dir / "matvec-v4") + " -o " + (dir / "x.jpg")).status == 2);
  CHECK(run_script("scripts/plot_roofline -o " + (dir / "x.png")).status == 2);
  CHECK_FALSE(std::filesystem::exists(dir / "x.png"));
}

TEST_CASE("plot_stream draws request streams' latencies as the client reports them", "[app][charts]") {
  TempDir dir("charts-stream");
  REQUIRE(run_tpusim("run configs/tutorial/ch11-chunked.yaml --out " + (dir / "chunked")).status == 0);
  REQUIRE(run_tpusim("run configs/tutorial/ch11-chunked.yaml --set workload.requests.chunked_prefill=~ --out " +
                     (dir / "whole"))
              .status == 0);
  const nlohmann::json stream =
      nlohmann::json::parse(slurp(dir / "chunked/report.json"))["result"]["inference"]["stream"];
  auto r = run_script("scripts/plot_stream " + (dir / "whole/report.json") + " " + (dir / "chunked/report.json") +
                      " -o " + (dir / "serving.png"));
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("tutorial-ch11-chunked (rate 8/s): TTFT p50") != std::string::npos);
  char itl[64];
  std::snprintf(itl, sizeof itl, "ITL p50 %.4g s p99 %.4g s", stream["itl_s"]["p50"].get<double>(),
                stream["itl_s"]["p99"].get<double>());
  CHECK(r.output.find(std::string("(rate 8/s, chunks of 256): TTFT p50")) != std::string::npos);
  CHECK(r.output.find(itl) != std::string::npos);
  check_png(dir / "serving.png", 900, 150, 20000);
  // A run without a stream, a missing file, an image type it does not write.
  REQUIRE(run_tpusim("run configs/tutorial/ch11-decode.yaml --out " + (dir / "decode")).status == 0);
  CHECK(run_script("scripts/plot_stream " + (dir / "decode/report.json") + " -o " + (dir / "x.png")).status == 2);
  CHECK(run_script("scripts/plot_stream " + (dir / "nothing.json") + " -o " + (dir / "x.png")).status == 2);
  CHECK(run_script("scripts/plot_stream " + (dir / "chunked/report.json") + " -o " + (dir / "x.jpg")).status == 2);
  CHECK_FALSE(std::filesystem::exists(dir / "x.png"));
}

TEST_CASE("plot_pipeline draws a run's trace and measures the bubbles", "[app][charts]") {
  TempDir dir("charts-pipeline");
  const std::string out = dir / "sharded";
  auto run = run_tpusim("run configs/experiments/sharded-matmul-v5e-2x4.yaml --trace --out " + out);
  REQUIRE(run.status == 0);
  // The sharded matmul has no forward/backward ops; name its phases by pattern.
  auto r = run_script("scripts/plot_pipeline " + out + "/trace.json --forward '^matmul' --backward '^all_gather' -o " +
                      (dir / "pipeline.png"));
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("(8 rows)") != std::string::npos);  // one per chip of the 2x4 slice
  for (int chip = 0; chip < 8; ++chip)
    CHECK(r.output.find("  chip" + std::to_string(chip) + ": ") != std::string::npos);
  // Without collective matmul the gather runs first, alone.
  CHECK(r.output.find("  chip0: forward ") != std::string::npos);
  CHECK(r.output.find("both at once 0, ") != std::string::npos);
  check_png(dir / "pipeline.png", 800, 300, 20000);
  auto tracks =
      run_script("scripts/plot_pipeline " + out + "/trace.json --rows track --tracks mxu -o " + (dir / "tracks.svg"));
  REQUIRE(tracks.status == 0);
  // At kernel fidelity a matmul is one op per TensorCore, on the core's
  // first MXU (v5e: one core of four MXUs).
  CHECK(tracks.output.find("chip7 mxu0") != std::string::npos);
  CHECK(tracks.output.find("chip7 mxu3") == std::string::npos);
  CHECK(tracks.output.find("dma") == std::string::npos);
  check_svg(dir / "tracks.svg", 20000);

  // GPipe by hand, 2 stages x 2 microbatches, forward 2 us, backward 4 us.
  // Stage 0 is named as the train workload names its ops (microbatch 0's
  // forward is a matmul and a relu: one task), stage 1 in the fwd/bwd/mb
  // style. Stage 0: F0 [0,2) F1 [2,4) B1 [10,14) B0 [14,18); stage 1: F0
  // [2,4) F1 [4,6) B1 [6,10) B0 [10,14). "send F1" on stage 0 [4,5) is other
  // work; the wait on stage 0's "ici recv (waiting)" track is idle. Span 18
  // us, 12 us of work per stage: idle 1/3 = (S-1)/(M+S-1), the GPipe bubble.
  const std::string gpipe = dir / "gpipe.json";
  std::ofstream(gpipe) << R"json({"traceEvents": [
    {"ph": "M", "pid": 0, "name": "process_name", "args": {"name": "chip0"}},
    {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "chip1"}},
    {"ph": "M", "pid": 0, "tid": 0, "name": "thread_name", "args": {"name": "mxu0"}},
    {"ph": "M", "pid": 0, "tid": 1000, "name": "thread_name", "args": {"name": "vector0"}},
    {"ph": "M", "pid": 0, "tid": 3000, "name": "thread_name", "args": {"name": "ici send"}},
    {"ph": "M", "pid": 0, "tid": 3001, "name": "thread_name", "args": {"name": "ici recv (waiting)"}},
    {"ph": "M", "pid": 1, "tid": 0, "name": "thread_name", "args": {"name": "mxu0"}},
    {"ph": "X", "pid": 0, "tid": 0, "name": "matmul blk(0,0) k0 [F0 dense0.matmul]", "ts": 0, "dur": 1.5},
    {"ph": "X", "pid": 0, "tid": 1000, "name": "F0 dense0.relu", "ts": 1.5, "dur": 0.5},
    {"ph": "X", "pid": 0, "tid": 0, "name": "matmul blk(0,0) k0 [F1 dense0.matmul]", "ts": 2, "dur": 2},
    {"ph": "X", "pid": 0, "tid": 3000, "name": "send F1", "ts": 4, "dur": 1},
    {"ph": "X", "pid": 0, "tid": 3001, "name": "recv B1", "ts": 4, "dur": 6},
    {"ph": "X", "pid": 0, "tid": 0, "name": "matmul blk(0,0) k0 [B1 dense0.matmul.dX]", "ts": 10, "dur": 4},
    {"ph": "X", "pid": 0, "tid": 0, "name": "matmul blk(0,0) k0 [B0 dense0.matmul.dX]", "ts": 14, "dur": 4},
    {"ph": "X", "pid": 1, "tid": 0, "name": "fwd L1 mb0", "ts": 2, "dur": 2},
    {"ph": "X", "pid": 1, "tid": 0, "name": "fwd L1 mb1", "ts": 4, "dur": 2},
    {"ph": "X", "pid": 1, "tid": 0, "name": "bwd L1 mb1", "ts": 6, "dur": 4},
    {"ph": "X", "pid": 1, "tid": 0, "name": "bwd L1 mb0", "ts": 10, "dur": 4}]})json";
  auto g = run_script("scripts/plot_pipeline " + gpipe + " -o " + (dir / "gpipe.png"));
  INFO(g.output);
  REQUIRE(g.status == 0);
  CHECK(g.output.find("trace 18 us, pipeline span 18 us") != std::string::npos);
  CHECK(g.output.find("  chip0: forward 4, backward 8, both at once 0, other 1, idle 33.3%") != std::string::npos);
  CHECK(g.output.find("  chip1: forward 4, backward 8, both at once 0, other 0, idle 33.3%") != std::string::npos);
  CHECK(g.output.find("  mean idle 33.3%") != std::string::npos);
  check_png(dir / "gpipe.png", 800, 200, 10000);

  CHECK(run_script("scripts/plot_pipeline " + out + "/report.json -o " + (dir / "x.png")).status == 2);
  CHECK(run_script("scripts/plot_pipeline " + gpipe + " --forward '(' -o " + (dir / "x.png")).status == 2);
  CHECK(run_script("scripts/plot_pipeline " + gpipe + " --tracks nothing-like-this -o " + (dir / "x.png")).status == 2);
  CHECK_FALSE(std::filesystem::exists(dir / "x.png"));
}

TEST_CASE("plot_pipeline on a real GPipe run agrees with the train report", "[app][charts]") {
  TempDir dir("charts-train");
  const std::string out = dir / "pp";
  REQUIRE(run_tpusim("run configs/experiments/train-pp-v5e.yaml --trace --out " + out).status == 0);
  auto r = run_script("scripts/plot_pipeline " + out + "/trace.json -o " + (dir / "pp.png"));
  INFO(r.output);
  REQUIRE(r.status == 0);
  check_png(dir / "pp.png", 800, 300, 20000);
  CHECK(r.output.find("(4 rows)") != std::string::npos);  // 4 stages
  for (int stage = 0; stage < 4; ++stage)
    CHECK(r.output.find("(stage " + std::to_string(stage) + ", ") != std::string::npos);
  CHECK(r.output.find("both at once 0, ") != std::string::npos);

  // The default patterns find the train workload's tasks: the pipeline span
  // (first to last forward/backward work) is the report's, and the mean
  // idle fraction is its bubble fraction, up to the overlap of consecutive
  // tasks, which the report counts twice and the script once.
  std::ifstream in(out + "/report.json");
  std::stringstream text;
  text << in.rdbuf();
  const auto pipeline = nlohmann::json::parse(text.str())["result"]["pipeline"];
  const auto number_after = [&r](const std::string& what) {
    const std::size_t at = r.output.find(what);
    REQUIRE(at != std::string::npos);
    return std::stod(r.output.substr(at + what.size()));
  };
  const double span_ms = number_after("pipeline span ");
  CHECK(span_ms == Approx(pipeline["span_s"].get<double>() * 1e3).epsilon(1e-5));
  const double idle = number_after("mean idle ") / 100;
  const double bubble = pipeline["bubble_fraction"].get<double>();
  CHECK(idle >= bubble - 0.001);
  CHECK(idle <= bubble + 0.02);
}

TEST_CASE("plot_bubbles puts a microbatch sweep's bubbles beside (p-1)/(m+p-1)", "[app][charts]") {
  TempDir dir("charts-bubbles");
  const std::string sweep = dir / "sweep";
  REQUIRE(run_tpusim("sweep configs/sweeps/pipeline-bubbles-v5e.yaml -j 2 --out " + sweep).status == 0);
  auto r = run_script("scripts/plot_bubbles " + sweep + " -o " + (dir / "bubbles.png"));
  INFO(r.output);
  REQUIRE(r.status == 0);
  check_png(dir / "bubbles.png", 600, 400, 20000);
  CHECK(r.output.find("gpipe, p = 4 stages, V = 1:") != std::string::npos);
  // One line per point: m, the report's bubble, the formula's; the stages
  // wait on the activations sent between them as well, so the measured
  // bubble lies above the formula (by under 5 points on this pipeline).
  const int ms[] = {1, 2, 4, 8, 16, 32};
  for (int i = 0; i < 6; ++i) {
    const std::string id = "p00" + std::to_string(i);
    const double bubble =
        nlohmann::json::parse(slurp(sweep + "/points/" + id + "/report.json"))["result"]["pipeline"]["bubble_fraction"];
    const double ideal = 3.0 / (ms[i] + 3.0);
    char line[128];
    std::snprintf(line, sizeof line, "  %-6d %10.4f %10.4f %+10.4f  (%s)", ms[i], bubble, ideal, bubble - ideal,
                  id.c_str());
    CHECK(r.output.find(line) != std::string::npos);
    CHECK(bubble > ideal);
    CHECK(bubble < ideal + 0.05);
  }
  // Not a sweep folder: exit 2.
  CHECK(run_script("scripts/plot_bubbles " + std::string(dir / "nothing-here")).status == 2);
}

TEST_CASE("plot_ici_heatmap draws every link of a torus collective", "[app][charts]") {
  TempDir dir("charts-ici");
  const std::string torus = dir / "torus", ring = dir / "ring";
  REQUIRE(run_tpusim("run configs/experiments/allreduce-v4-4x4x4.yaml --out " + torus).status == 0);
  // The ring algorithm on the same cube uses only the links of its ring.
  REQUIRE(run_tpusim("run configs/experiments/allreduce-v4-4x4x4.yaml --set workload.algorithm=ring --out " + ring)
              .status == 0);
  auto r = run_script("scripts/plot_ici_heatmap " + torus + "/report.json -o " + (dir / "torus.png"));
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("384 link directions, 384 busy") != std::string::npos);  // 64 chips x 6
  check_png(dir / "torus.png", 1000, 500, 50000);
  auto g = run_script("scripts/plot_ici_heatmap " + ring + "/report.json -o " + (dir / "ring.svg"));
  INFO(g.output);
  REQUIRE(g.status == 0);
  CHECK(g.output.find("384 link directions, 64 busy") != std::string::npos);  // one ring through 64 chips
  check_svg(dir / "ring.svg", 50000);

  // A matmul report has no links.
  REQUIRE(run_tpusim("run configs/experiments/matmul-teach.yaml --out " + (dir / "mm")).status == 0);
  auto bad = run_script("scripts/plot_ici_heatmap " + (dir / "mm/report.json") + " -o " + (dir / "x.png"));
  CHECK(bad.status == 2);
  CHECK(bad.output.find("no `links` array") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "x.png"));
}

}  // namespace test_charts
