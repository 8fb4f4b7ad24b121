// `tpusim scalesim` against SCALE-Sim v2. The references, none of them the
// code under test:
//  - SCALE-Sim v2's own regression output (scalesim-project/scale-sim-v2,
//    MIT, test/golden_trace/*.csv, made by test/scripts/function_test.sh:
//    configs/scale.cfg switched to ws, topology alexnet_part.csv, one layer
//    Conv1 224 x 224 x 3, 11 x 11 filters, 96 of them, stride 4), quoted as
//    numbers;
//  - the stall-free counts, computed here: ws folds x (2R + C + M - 2) - 1
//    (Samajdar et al., ISPASS 2020, section III), os ceil(M/R) ceil(N/C) x
//    (R + C + K - 2) - 1, is ceil(K/R) ceil(M/C) x (2R + C + N - 2) - 1
//    (docs/mxu.md, "Dataflows");
//  - SCALE-Sim's fold loops (its systolic_compute_ws/os/is demand matrices),
//    re-enacted here fold by fold to count SRAM accesses, mapping efficiency
//    and compute utilisation;
//  - DRAM counts of tpusim's capacity model worked by hand;
//  - layer arithmetic Ho Wo Fh Fw C N worked by hand.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "app/cli_runner.h"
#include "sim/error.h"
#include "workloads/scalesim.h"

namespace test_scalesim {

using testing_cli::run_tpusim;

namespace {

std::string config_text(int rows, int cols, const std::string& dataflow = "ws") {
  return "[general]\nrun_name = test_run\n\n[architecture_presets]\nArrayHeight: " + std::to_string(rows) +
         "\nArrayWidth: " + std::to_string(cols) +
         "\nIfmapSramSzkB: 64\nFilterSramSzkB: 64\nOfmapSramSzkB: 64\nDataflow : " + dataflow +
         "\n\n[run_presets]\nInterfaceBandwidth: CALC\n";
}

std::vector<workloads::ScaleSimLayerRecord> run(const std::string& cfg, const std::string& topo,
                                                hw::Fidelity fidelity = hw::Fidelity::tile) {
  return workloads::run_scalesim(workloads::parse_scalesim_config(cfg, "test.cfg"),
                                 workloads::parse_scalesim_topology(topo, "test.csv"), fidelity);
}

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

// SCALE-Sim v2's stall-free Total Cycles of each dataflow (docs/mxu.md).
std::uint64_t scalesim_cycles(const std::string& dataflow, std::uint64_t R, std::uint64_t C, std::uint64_t M,
                              std::uint64_t K, std::uint64_t N) {
  if (dataflow == "os") return ceil_div(M, R) * ceil_div(N, C) * (R + C + K - 2) - 1;
  if (dataflow == "is") return ceil_div(K, R) * ceil_div(M, C) * (2 * R + C + N - 2) - 1;
  return ceil_div(K, R) * ceil_div(N, C) * (2 * R + C + M - 2) - 1;
}

// SCALE-Sim's fold loop of one dataflow, re-enacted: the operand matrix
// laid on the rows (extent Sr) and columns (Sc) of the array and the extent
// T streamed through it; column folds outer, row folds inner; each fold's
// reads and writes as its demand matrices hold them, and its window (the
// rows plus columns minus one of the demand matrix it times the fold by).
struct FoldLoop {
  std::uint64_t folds = 0, ifmap = 0, filter = 0, ofmap = 0;
  // Means over folds, in %, summed in long double so that the rounding of
  // up to 10^5 terms stays far below the 1e-12 the checks ask.
  long double mapping = 0, compute = 0;
};
FoldLoop fold_loop(const std::string& dataflow, std::uint64_t R, std::uint64_t C, std::uint64_t M, std::uint64_t K,
                   std::uint64_t N) {
  const bool os = dataflow == "os", is = dataflow == "is";
  const std::uint64_t Sr = os ? M : K, Sc = is ? M : N, T = os ? K : is ? N : M;
  FoldLoop f;
  for (std::uint64_t c0 = 0; c0 < Sc; c0 += C)
    for (std::uint64_t r0 = 0; r0 < Sr; r0 += R) {
      const std::uint64_t rows = std::min(R, Sr - r0), cols = std::min(C, Sc - c0);
      std::uint64_t window = 0;
      if (os) {
        // IFMAP: T x its rows; filter: T x its columns; OFMAP: its outputs,
        // plus the padded R x C tile's height and width (SCALE-Sim's count).
        // Window: the OFMAP demand, T - 1 empty rows then R, by C.
        f.ifmap += T * rows;
        f.filter += T * cols;
        f.ofmap += rows * cols + R + C;
        window = (T - 1 + R) + C - 1;
      } else if (is) {
        // IFMAP: its stationary tile; filter: T x its rows; OFMAP: T x its
        // columns. Window: the IFMAP demand, R then R + C + T - 2 empty
        // rows, by C.
        f.ifmap += rows * cols;
        f.filter += T * rows;
        f.ofmap += T * cols;
        window = (R + R + C + T - 2) + C - 1;
      } else {
        // IFMAP: T x its rows; filter: its weights; OFMAP: T x its columns.
        f.ifmap += T * rows;
        f.filter += rows * cols;
        f.ofmap += T * cols;
        window = 2 * R + 2 * C + T - 3;
      }
      f.mapping += 100.0L * (long double)(rows * cols) / (long double)(R * C);
      f.compute += 100.0L * (long double)(rows * cols * T) / (long double)(R * C * window);
      ++f.folds;
    }
  f.mapping /= (long double)f.folds;
  f.compute /= (long double)f.folds;
  return f;
}

// SCALE-Sim v2's golden run: scale.cfg as its function_test.sh runs it
// (32 x 32, 64 kB SRAMs, ws, CALC) on AlexNet's first convolution layer.
const std::string kGoldenCfg =
    "[general]\nrun_name = scale_example_run_32x32_ws\n\n[architecture_presets]\nArrayHeight:    32\n"
    "ArrayWidth:     32\nIfmapSramSzkB:   64 \nFilterSramSzkB:  64 \nOfmapSramSzkB:   64 \nIfmapOffset:    0\n"
    "FilterOffset:   10000000\nOfmapOffset:    20000000\nBandwidth : 10\nDataflow : ws\nMemoryBanks:   1\n\n"
    "[run_presets]\nInterfaceBandwidth: CALC \n";
const std::string kGoldenTopology =
    "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,\n"
    "Conv1,  224, 224,    11, 11,    3,      96,     4,\n";

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("scalesim: SCALE-Sim v2's golden ws run (AlexNet Conv1 on 32x32) is reproduced", "[workloads][scalesim]") {
  const std::string& cfg = kGoldenCfg;
  const std::string& topo = kGoldenTopology;
  for (hw::Fidelity f : {hw::Fidelity::tile, hw::Fidelity::pe}) {
    const auto layers = run(cfg, topo, f);
    REQUIRE(layers.size() == 1);
    const auto& l = layers[0];
    // Ho = ceil((224 - 11) / 4) + 1 = 55: T = 3025, K = 363, N = 96.
    CHECK(l.m == 3025);
    CHECK(l.k == 363);
    CHECK(l.n == 96);
    // golden COMPUTE_REPORT.csv: 0, 112283, 0, 91.68309650614964, 94.53125, 90.78000992063492,
    CHECK(l.scalesim_cycles == 112283);
    CHECK(l.stall_cycles == 0);
    CHECK(l.overall_util_pct == Approx(91.68309650614964).epsilon(1e-12));
    CHECK(l.mapping_efficiency_pct == Approx(94.53125).epsilon(1e-12));
    CHECK(l.compute_util_pct == Approx(90.78000992063492).epsilon(1e-12));
    // golden DETAILED_ACCESS_REPORT.csv: SRAM reads 3294225, 34848, writes 3484800.
    CHECK(l.sram_ifmap_reads == 3294225);
    CHECK(l.sram_filter_reads == 34848);
    CHECK(l.sram_ofmap_writes == 3484800);
    // DRAM (tpusim's capacity model, docs/scalesim.md#traffic): filters as
    // SCALE-Sim's 34848; OFMAP 3484800 against SCALE-Sim's 3484831 (its
    // drain writes 31 padded words more); IFMAP is not compared (SCALE-Sim
    // streams the im2col matrix, pixels repeated, through its buffer:
    // 1805023 words; tpusim reads the 150528-word input once per column
    // fold when it does not fit: 451584).
    CHECK(l.dram_filter_reads == 34848);
    CHECK(l.dram_ofmap_writes == 3484800);
    CHECK(l.dram_ifmap_reads == 150528 * 3);
  }
  // The report's header lines are SCALE-Sim's, character for character.
  const auto layers = run(cfg, topo);
  CHECK(
      workloads::scalesim_compute_report(layers).rfind(
          "LayerID, Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %, Compute Util %,\n0, 112283, 0, ",
          0) == 0);
  CHECK(workloads::scalesim_bandwidth_report(layers).rfind(
            "LayerID, Avg IFMAP SRAM BW, Avg FILTER SRAM BW, Avg OFMAP SRAM BW, Avg IFMAP DRAM BW, Avg FILTER DRAM "
            "BW, Avg OFMAP DRAM BW,\n0, 29.3386, 0.3104, 31.0359, ",
            0) == 0);
}

namespace {

// The columns of a SCALE-Sim run that tpusim reproduces exactly: Total
// Cycles, the three utilisations and the SRAM counts.
struct ScaleSimColumns {
  std::uint64_t cycles;
  double overall, mapping, compute;
  std::uint64_t sram_ifmap, sram_filter, sram_ofmap;
};

void check_columns(const workloads::ScaleSimLayerRecord& l, const ScaleSimColumns& g) {
  CHECK(l.scalesim_cycles == g.cycles);
  CHECK(l.stall_cycles == 0);
  CHECK(l.overall_util_pct == Approx(g.overall).epsilon(1e-12));
  CHECK(l.mapping_efficiency_pct == Approx(g.mapping).epsilon(1e-12));
  CHECK(l.compute_util_pct == Approx(g.compute).epsilon(1e-12));
  CHECK(l.sram_ifmap_reads == g.sram_ifmap);
  CHECK(l.sram_filter_reads == g.sram_filter);
  CHECK(l.sram_ofmap_writes == g.sram_ofmap);
}

}  // namespace

TEST_CASE("scalesim: SCALE-Sim v2 run on the golden layer in os and is is reproduced", "[workloads][scalesim]") {
  // SCALE-Sim's repository has no os or is output (its CI switches
  // scale.cfg from os to ws). These numbers are SCALE-Sim v2 (commit
  // 22f88b1) itself, run on the golden layer and config with Dataflow os and
  // is: its single_layer_sim's compute report items and access counts.
  const std::string& topo = kGoldenTopology;
  struct Golden {
    const char* dataflow;
    ScaleSimColumns columns;
    // tpusim's DRAM model (docs/scalesim.md#traffic), SCALE-Sim's buffer
    // replay in the comments.
    std::uint64_t dram_ifmap, dram_filter, dram_ofmap;
  };
  const Golden golden[] = {
      // os: 95 x 3 folds of 32 + 32 + 363 - 2 cycles. SCALE-Sim's DRAM:
      // 519810 (the im2col matrix through its buffer), 44366, 290431.
      {"os",
       {121124, 84.99102675770285, 99.50657894736842, 84.99032507739905, 3294225, 3310560, 308640},
       451584,
       34848,
       290400},
      // is: 12 x 95 folds of 64 + 32 + 96 - 2 cycles. SCALE-Sim's DRAM:
      // 173542, 3310560 (the 34848-word filters re-read every column fold),
      // 3484831 (every partial sum written out, 31 padded words more).
      {"is",
       {216599, 47.527703844431414, 94.06481291118422, 40.86073321028807, 1098075, 3310560, 3484800},
       150528,
       34848,
       290400},
  };
  for (const Golden& g : golden) {
    for (hw::Fidelity f : {hw::Fidelity::tile, hw::Fidelity::pe}) {
      INFO(g.dataflow << " " << hw::to_string(f));
      const auto layers = run(config_text(32, 32, g.dataflow), topo, f);
      REQUIRE(layers.size() == 1);
      check_columns(layers[0], g.columns);
      CHECK(layers[0].dram_ifmap_reads == g.dram_ifmap);
      CHECK(layers[0].dram_filter_reads == g.dram_filter);
      CHECK(layers[0].dram_ofmap_writes == g.dram_ofmap);
    }
  }
  SECTION("two convolutions on 8x8, os and is") {
    // SCALE-Sim v2 run the same way on configs/scale.cfg at 8x8: layers a
    // (30 x 30 x 3, 5x5, 16 filters) and c (9 x 9 x 64, 1x1, 200 filters).
    const std::string convs =
        "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,\n"
        "a, 30, 30, 5, 5, 3, 16, 1,\nc, 9, 9, 1, 1, 64, 200, 1,\n";
    const std::pair<const char*, ScaleSimColumns> rows[][2] = {
        {{"os", {15129, 83.77949633154869, 99.41176470588235, 83.77395902181087, 101400, 102000, 13536}},
         {"os", {21449, 75.52799664320015, 92.04545454545455, 75.52447552447535, 129600, 140800, 20600}}},
        {{"is", {32299, 39.242701012415246, 93.19852941176471, 33.13725490196069, 50700, 102000, 108160}},
         {"is", {19535, 82.92807780906067, 92.04545454545455, 80.38904327113936, 5184, 140800, 129600}}}};
    for (const auto& pair : rows) {
      const auto layers = run(config_text(8, 8, pair[0].first), convs);
      REQUIRE(layers.size() == 2);
      for (std::size_t i = 0; i < 2; ++i) {
        INFO(pair[i].first << " layer " << i);
        check_columns(layers[i], pair[i].second);
      }
    }
  }
}

TEST_CASE("scalesim: fold-serial cycles and SRAM counts per layer equal SCALE-Sim's, ws os is",
          "[workloads][scalesim]") {
  struct Gemm {
    std::uint64_t m, n, k;
  };
  // Square, skinny, ragged, single row and column, transformer and
  // convolution-sized GEMMs (M, N, K as SCALE-Sim's GEMM files order them).
  const Gemm gemms[] = {{1024, 1024, 1024}, {1, 1, 1},        {1, 4096, 4096}, {4096, 1, 7},
                        {33, 129, 65},      {100, 100, 100},  {7, 31, 300},    {2048, 2304, 768},
                        {2048, 768, 3072},  {12544, 64, 147}, {3136, 64, 576}, {784, 128, 1152},
                        {255, 129, 257},    {5, 3, 1000},     {8, 4096, 4096}, {17, 17, 17}};
  std::string topo = "Layer, M, N, K,\n";
  for (const Gemm& g : gemms)
    topo += "g" + std::to_string(&g - gemms) + ", " + std::to_string(g.m) + ", " + std::to_string(g.n) + ", " +
            std::to_string(g.k) + ",\n";
  // Convolution rows, their GEMMs by hand (Ho = ceil((H - F) / S) + 1):
  //   a: 30 x 30 x 3, 5x5, 16 filters, s1: Ho = 26;  M = 676, K = 75,  N = 16
  //   b: 17 x 13 x 8, 3x2, 40 filters, s2 x 3: 8 x 5; M = 40,  K = 48,  N = 40
  //   c: 9 x 9 x 64, 1x1, 200 filters, s1:  Ho = 9;   M = 81,  K = 64,  N = 200
  const std::string conv =
      "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Stride Height, "
      "Stride Width,\na, 30, 30, 5, 5, 3, 16, 1, 1,\nb, 17, 13, 3, 2, 8, 40, 2, 3,\nc, 9, 9, 1, 1, 64, 200, 1, 1,\n";
  const Gemm conv_gemms[] = {{676, 16, 75}, {40, 40, 48}, {81, 200, 64}};
  for (const char* df : {"ws", "os", "is"}) {
    for (const auto& array : {std::pair{8, 8}, {32, 32}, {128, 128}, {8, 16}, {24, 5}}) {
      const int R = array.first, C = array.second;
      DYNAMIC_SECTION(df << " " << R << "x" << C) {
        auto check = [&](const std::string& topology, const Gemm* expect, std::size_t count) {
          const auto layers = run(config_text(R, C, df), topology);
          REQUIRE(layers.size() == count);
          for (std::size_t i = 0; i < count; ++i) {
            const Gemm& g = expect[i];
            const auto& l = layers[i];
            INFO("GEMM " << g.m << " x " << g.k << " x " << g.n);
            CHECK(l.m == g.m);
            CHECK(l.k == g.k);
            CHECK(l.n == g.n);
            CHECK(l.scalesim_cycles == scalesim_cycles(df, R, C, g.m, g.k, g.n));
            CHECK(l.cycles == l.scalesim_cycles + 1);  // tpusim counts the last fold's last cycle
            const FoldLoop f = fold_loop(df, R, C, g.m, g.k, g.n);
            CHECK(l.row_folds * l.col_folds == f.folds);
            CHECK(l.sram_ifmap_reads == f.ifmap);
            CHECK(l.sram_filter_reads == f.filter);
            CHECK(l.sram_ofmap_writes == f.ofmap);
            CHECK(l.mapping_efficiency_pct == Approx(double(f.mapping)).epsilon(1e-12));
            CHECK(l.compute_util_pct == Approx(double(f.compute)).epsilon(1e-12));
            CHECK(l.macs == g.m * g.k * g.n);
            CHECK(l.overall_util_pct ==
                  Approx(100.0 * double(g.m * g.k * g.n) / (double(l.scalesim_cycles) * R * C)).epsilon(1e-12));
          }
        };
        check(topo, gemms, std::size(gemms));
        check(conv, conv_gemms, std::size(conv_gemms));
      }
    }
    DYNAMIC_SECTION(df << ": the PE engine takes the same cycles on an 8x8 array") {
      const std::string small = "Layer, M, N, K,\na, 5, 3, 20,\nb, 40, 17, 9,\nc, 1, 64, 64,\nd, 64, 1, 1,\n";
      const auto tile = run(config_text(8, 8, df), small);
      const auto pe = run(config_text(8, 8, df), small, hw::Fidelity::pe);
      REQUIRE(pe.size() == 4);
      const std::uint64_t mnk[4][3] = {{5, 20, 3}, {40, 9, 17}, {1, 64, 64}, {64, 1, 1}};
      for (std::size_t i = 0; i < 4; ++i) {
        CHECK(pe[i].scalesim_cycles == scalesim_cycles(df, 8, 8, mnk[i][0], mnk[i][1], mnk[i][2]));
        CHECK(pe[i].cycles == tile[i].cycles);
      }
    }
  }
}

TEST_CASE("scalesim: a ResNet topology runs end to end and its MACs equal the layer arithmetic",
          "[workloads][scalesim]") {
  const std::string df = GENERATE("ws", "os", "is");
  INFO(df);
  testing_cli::TempDir tmp("scalesim-resnet-" + df);
  const auto r = run_tpusim("scalesim configs/scalesim/array-32x32-" + df +
                            ".cfg configs/scalesim/resnet18-head.csv --out " + tmp.path.string());
  INFO(r.output);
  REQUIRE(r.status == 0);
  std::ifstream in(tmp / "report.json");
  const nlohmann::json rep = nlohmann::json::parse(in);
  const nlohmann::json& layers = rep["result"]["scalesim"]["layers"];
  // By hand, no padding, Ho = ceil((H - F) / S) + 1 (every division here is exact):
  //   Conv1      229, 7x7, s2: Ho = 222/2 + 1 = 112; M = 12544, K = 7*7*3 = 147,   N = 64
  //   Conv2_x    58, 3x3, s1:  Ho = 55 + 1 = 56;     M = 3136,  K = 3*3*64 = 576,  N = 64
  //   Conv3_1a   57, 3x3, s2:  Ho = 54/2 + 1 = 28;   M = 784,   K = 576,           N = 128
  //   Conv3_1b   30, 3x3, s1:  Ho = 28;              M = 784,   K = 3*3*128 = 1152, N = 128
  //   Conv3_down 55, 1x1, s2:  Ho = 54/2 + 1 = 28;   M = 784,   K = 64,            N = 128
  // MACs = Ho Wo Fh Fw C N: 112*112*7*7*3*64 = 118,013,952; 56*56*9*64*64 =
  // 115,605,504; 28*28*9*64*128 = 57,802,752; 28*28*9*128*128 = 115,605,504;
  // 28*28*64*128 = 6,422,528.
  struct Expect {
    const char* name;
    std::uint64_t m, k, n, macs;
  };
  const Expect expect[] = {{"Conv1", 12544, 147, 64, 118013952},    {"Conv2_1a", 3136, 576, 64, 115605504},
                           {"Conv2_1b", 3136, 576, 64, 115605504},  {"Conv2_2a", 3136, 576, 64, 115605504},
                           {"Conv2_2b", 3136, 576, 64, 115605504},  {"Conv3_1a", 784, 576, 128, 57802752},
                           {"Conv3_1b", 784, 1152, 128, 115605504}, {"Conv3_down", 784, 64, 128, 6422528}};
  REQUIRE(layers.size() == std::size(expect));
  std::uint64_t total = 0;
  std::istringstream compute(read_file(tmp / "COMPUTE_REPORT.csv"));
  std::string line;
  std::getline(compute, line);  // header
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const Expect& e = expect[i];
    INFO(e.name);
    CHECK(layers[i]["name"] == e.name);
    CHECK(layers[i]["m"] == e.m);
    CHECK(layers[i]["k"] == e.k);
    CHECK(layers[i]["n"] == e.n);
    CHECK(layers[i]["macs"] == e.macs);
    total += e.macs;
    REQUIRE(std::getline(compute, line));
    CHECK(line.rfind(std::to_string(i) + ", " + std::to_string(scalesim_cycles(df, 32, 32, e.m, e.k, e.n)) + ", 0, ",
                     0) == 0);
  }
  CHECK(total == 760266752);
  CHECK(rep["result"]["scalesim"]["total"]["macs"] == total);
  CHECK(rep["result"]["flops"] == 2.0 * double(total));
  CHECK(read_file(tmp / "ACCESS_REPORT.csv").rfind("LayerID, SRAM IFMAP Reads, SRAM Filter Reads", 0) == 0);
}

TEST_CASE("scalesim: config and topology formats as SCALE-Sim writes them", "[workloads][scalesim]") {
  SECTION("keys in any case, either separator, comments, CRLF") {
    const auto c = workloads::parse_scalesim_config(
        "; a comment\r\n[general]\r\nrun_name: x\r\n[architecture_presets]\r\narrayheight = 16\r\nARRAYWIDTH:8\r\n"
        "ifmapsramszkb=1\r\nfiltersramszkb=2\r\nofmapsramszkb=3\r\n# another\r\ndataflow = ws\r\nbandwidth = 20, 30\r\n"
        "[run_presets]\r\ninterfacebandwidth = USER\r\n",
        "c.cfg");
    CHECK(c.arch.array_height == 16);
    CHECK(c.arch.array_width == 8);
    CHECK(c.arch.ofmap_kb == 3);
    CHECK(c.run.interface_bandwidth == "USER");
    CHECK(c.arch.bandwidth == std::vector<std::uint64_t>{20, 30});
  }
  SECTION("rows with and without the trailing comma; two strides; depthwise DP layers") {
    const auto t = workloads::parse_scalesim_topology(
        "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Stride Height, "
        "Stride Width\nA, 10, 12, 3, 3, 4, 8, 1, 2\n\nDP1, 8, 8, 3, 3, 3, 1, 1,\n",
        "t.csv");
    REQUIRE(t.layers.size() == 4);  // A, then DP1 as one layer per channel
    CHECK(t.layers[0].layer.stride_w == 2);
    CHECK(t.layers[0].layer.ofmap_w() == 6);  // ceil((12 - 3) / 2) + 1
    CHECK(t.layers[1].layer.name == "DP1Channel_0");
    CHECK(t.layers[3].layer.name == "DP1Channel_2");
    CHECK(t.layers[3].layer.channels == 1);
    CHECK(t.layers[3].line == 4);
  }
  SECTION("USER bandwidth: a layer whose DRAM stream outlasts its compute stalls") {
    // 64 x 64 x 64 on 32x32: 4 folds of 2*32 + 32 + 64 - 2 = 158 cycles,
    // 632 in all. The SRAMs hold 1 kB = 1024 words, so the input (64 x 64 =
    // 4096 words) is read once per column fold (8192 words), the weights
    // once (4096), and a column fold's partial sums (64 x 32 = 2048 words)
    // do not fit, so outputs are written once per row fold (8192). At 2
    // words per cycle the busiest stream takes 4096 cycles: 4096 - 632
    // stall cycles.
    const std::string cfg =
        "[general]\nrun_name = x\n[architecture_presets]\nArrayHeight: 32\nArrayWidth: 32\nIfmapSramSzkB: 1\n"
        "FilterSramSzkB: 1\nOfmapSramSzkB: 1\nDataflow: ws\nBandwidth: 2\n[run_presets]\nInterfaceBandwidth: USER\n";
    const auto l = run(cfg, "Layer, M, N, K,\ng, 64, 64, 64,\n");
    REQUIRE(l.size() == 1);
    CHECK(l[0].cycles == 632);
    CHECK(l[0].dram_ifmap_reads == 8192);
    CHECK(l[0].dram_filter_reads == 4096);
    CHECK(l[0].dram_ofmap_writes == 8192);
    CHECK(l[0].stall_cycles == 4096 - 632);
    CHECK(l[0].scalesim_cycles == 4096 - 1);
  }
  SECTION("DRAM counts of os and is, by hand") {
    auto config = [](const std::string& dataflow, int kb) {
      const std::string sram = std::to_string(kb);
      return "[general]\nrun_name = x\n[architecture_presets]\nArrayHeight: 32\nArrayWidth: 32\nIfmapSramSzkB: " +
             sram + "\nFilterSramSzkB: " + sram + "\nOfmapSramSzkB: " + sram + "\nDataflow: " + dataflow +
             "\nBandwidth: 2\n[run_presets]\nInterfaceBandwidth: USER\n";
    };
    // 64 x 64 x 64 on 32x32 with 1 kB (1024-word) SRAMs, 2 words per cycle.
    // os: 4 folds of 32 + 32 + 64 - 2 = 126 cycles, 504. The input (4096
    // words) does not fit: once per column fold, 8192; a column fold's
    // filters (64 x 32 = 2048) do not fit: once per row fold, 8192; outputs
    // leave finished, 4096. Busiest stream 8192 / 2 = 4096 cycles.
    const std::string gemm = "Layer, M, N, K,\ng, 64, 64, 64,\n";
    auto l = run(config("os", 1), gemm);
    CHECK(l[0].cycles == 504);
    CHECK(l[0].dram_ifmap_reads == 8192);
    CHECK(l[0].dram_filter_reads == 8192);
    CHECK(l[0].dram_ofmap_writes == 4096);
    CHECK(l[0].stall_cycles == 4096 - 504);
    // is: 4 folds of 64 + 32 + 64 - 2 = 158 cycles, 632. Each fold's input
    // tile is fetched once: 4096; the filters (4096) do not fit: once per
    // column fold, 8192; a column fold's partial sums (32 x 64 = 2048) do
    // not fit: once per row fold, 8192.
    l = run(config("is", 1), gemm);
    CHECK(l[0].cycles == 632);
    CHECK(l[0].dram_ifmap_reads == 4096);
    CHECK(l[0].dram_filter_reads == 8192);
    CHECK(l[0].dram_ofmap_writes == 8192);
    CHECK(l[0].stall_cycles == 4096 - 632);
    // With 16 kB everything fits and is read or written once: 4096 each,
    // 2048 cycles of DRAM.
    for (const char* df : {"os", "is"}) {
      l = run(config(df, 16), gemm);
      CHECK(l[0].dram_ifmap_reads == 4096);
      CHECK(l[0].dram_filter_reads == 4096);
      CHECK(l[0].dram_ofmap_writes == 4096);
      CHECK(l[0].stall_cycles == 2048 - l[0].cycles);
    }
    // A convolution under is: 40 x 40 x 8, 3x3, 8 filters: 38 x 38 outputs,
    // M = 1444, K = 72. A column fold's 32 output pixels lie under at most 2
    // output rows, so it reads a band of 2 - 1 + 3 = 4 input rows, 4 x 40 x 8
    // = 1280 words. In 2 kB the band fits and the 12800-word input is read
    // once; in 1 kB it does not, and each fold fetches its im2col tile:
    // M K = 103968 words.
    const std::string conv =
        "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,\n"
        "a, 40, 40, 3, 3, 8, 8, 1,\n";
    CHECK(run(config("is", 2), conv)[0].dram_ifmap_reads == 12800);
    CHECK(run(config("is", 1), conv)[0].dram_ifmap_reads == 103968);
  }
}

TEST_CASE("scalesim: a mistake in a config or topology names file, line and column", "[workloads][scalesim]") {
  // The message `parse` gives for `text` read as `file`, or "no error".
  auto error_of = [](auto parse, const std::string& text, const char* file) {
    try {
      parse(text, file);
    } catch (const sim::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  auto config_error = [&](const std::string& text) {
    return error_of(workloads::parse_scalesim_config, text, "c.cfg");
  };
  auto topology_error = [&](const std::string& text) {
    return error_of(workloads::parse_scalesim_topology, text, "t.csv");
  };
  const std::string good = config_text(8, 8);
  // The value's column, not the YAML's the reader makes of it.
  std::string bad = good;
  bad.replace(bad.find("ArrayWidth: 8"), 13, "ArrayWidth:   -8");
  CHECK_THAT(config_error(bad), Catch::StartsWith("c.cfg:6:15: architecture_presets.ArrayWidth: "));
  bad = good;
  bad.replace(bad.find("Dataflow : ws"), 13, "Dataflow : xs");
  CHECK_THAT(config_error(bad), Catch::StartsWith("c.cfg:10:12: architecture_presets.Dataflow: "));
  bad = good;
  bad.replace(bad.find("ArrayHeight"), 11, "arrayhight");
  CHECK_THAT(config_error(bad),
             Catch::Contains("c.cfg:5:1: architecture_presets.arrayhight: ") && Catch::Contains("ArrayHeight"));
  CHECK_THAT(config_error("run_name = x\n"), Catch::StartsWith("c.cfg:1:1: key 'run_name' comes before any"));
  CHECK_THAT(topology_error("Layer, M, N, K,\ng, 4, 4,\n"), Catch::StartsWith("t.csv:2:9: g: 3 columns"));
  CHECK_THAT(topology_error("Layer, M, N, K,\ng, 4, 4, 4, 5,\n"), Catch::StartsWith("t.csv:2:13: g: 5 columns"));
  CHECK_THAT(topology_error("Layer, M, N, K,\ng, 4,  x, 4,\n"),
             Catch::StartsWith("t.csv:2:8: g.N: expected a positive"));
}

TEST_CASE("scalesim: every config key moves a reported figure or is declared informational",
          "[workloads][scalesim][key-walk]") {
  // The key walk of tests/app/test_key_walk.cpp, for the SCALE-Sim config:
  // a base config whose SRAMs are small enough and whose DRAM slow enough
  // that the traffic model and the stalls are in play, then each key changed
  // in turn. Figures compared: every column of every layer.
  std::map<std::string, std::string> base = {{"general.run_name", "walk"},
                                             {"architecture_presets.ArrayHeight", "8"},
                                             {"architecture_presets.ArrayWidth", "8"},
                                             {"architecture_presets.IfmapSramSzkB", "1"},
                                             {"architecture_presets.FilterSramSzkB", "1"},
                                             {"architecture_presets.OfmapSramSzkB", "1"},
                                             {"architecture_presets.IfmapOffset", "0"},
                                             {"architecture_presets.FilterOffset", "10000000"},
                                             {"architecture_presets.OfmapOffset", "20000000"},
                                             {"architecture_presets.Dataflow", "ws"},
                                             {"architecture_presets.Bandwidth", "1"},
                                             {"architecture_presets.MemoryBanks", "1"},
                                             {"run_presets.InterfaceBandwidth", "USER"},
                                             {"network_presets.TopologyCsvLoc", "t.csv"}};
  auto render = [](const std::map<std::string, std::string>& keys) {
    std::map<std::string, std::string> sections;
    for (const auto& [path, value] : keys) {
      const std::size_t dot = path.find('.');
      sections[path.substr(0, dot)] += path.substr(dot + 1) + " = " + value + "\n";
    }
    std::string text;
    for (const auto& [name, body] : sections) text += "[" + name + "]\n" + body;
    return text;
  };
  // c's filters (300 x 8 columns under os, 300 x 16 under is) overflow the
  // 1 kB filter SRAM of the base.
  const std::string topo = "Layer, M, N, K,\na, 200, 40, 30,\nb, 9, 300, 100,\nc, 16, 16, 300,\n";
  auto figures = [&](const std::map<std::string, std::string>& keys) {
    std::ostringstream s;
    for (const auto& l : run(render(keys), topo))
      s << l.cycles << " " << l.scalesim_cycles << " " << l.stall_cycles << " " << l.overall_util_pct << " "
        << l.mapping_efficiency_pct << " " << l.compute_util_pct << " " << l.sram_ifmap_reads << " "
        << l.sram_filter_reads << " " << l.sram_ofmap_writes << " " << l.dram_ifmap_reads << " " << l.dram_filter_reads
        << " " << l.dram_ofmap_writes << "\n";
    return s.str();
  };
  int walked = 0;
  const nlohmann::json table = workloads::scalesim_config_params().describe();
  for (const auto& section : table["params"]) {
    for (const auto& key : section["params"]) {
      const std::string path = section["name"].get<std::string>() + "." + key["name"].get<std::string>();
      INFO(path);
      REQUIRE(base.count(path) == 1);  // the base config sets every key
      if (key.contains("informational")) continue;
      ++walked;
      // A key acts if changing it moves a figure under some dataflow (the
      // filter SRAM's size moves none under ws, whose weights serve one fold).
      bool acted = false;
      for (const char* dataflow : {"ws", "os", "is"}) {
        auto from = base;
        from["architecture_presets.Dataflow"] = dataflow;
        const std::string unchanged = figures(from);
        for (const char* value : {"2", "64", "1024", "CALC", "4,8", "ws", "os", "is"}) {
          auto changed = from;
          if (changed[path] == value) continue;
          changed[path] = value;
          try {
            acted = acted || figures(changed) != unchanged;
          } catch (const sim::ConfigError&) {
            // not a value of this key
          }
        }
      }
      CHECK(acted);
    }
  }
  CHECK(walked == 8);
}

TEST_CASE("scalesim: layer energy from --chip's figures, absent without", "[workloads][scalesim][energy]") {
  // The golden AlexNet Conv1 layer on 32x32 ws (above): 3025 x 363 x 96 =
  // 105,415,200 MACs; SRAM words 3,294,225 + 34,848 + 3,484,800 =
  // 6,813,873; DRAM words 451,584 + 34,848 + 3,484,800 = 3,971,232; at the
  // shipped chips' 2.0 pJ per MAC, 1.25 pJ per SRAM byte and 31.76 pJ per
  // DRAM byte (1-byte words): 210,830,400 + 8,517,341.25 + 126,126,328.32 pJ.
  const std::string& cfg = kGoldenCfg;
  const std::string& topo = kGoldenTopology;
  auto layers = run(cfg, topo);
  REQUIRE(layers.size() == 1);
  CHECK_FALSE(layers[0].energy_j.has_value());
  workloads::add_scalesim_energy(layers, hw::EnergyParams{2.0, 1.25, 31.76});
  REQUIRE(layers[0].energy_j.has_value());
  CHECK(*layers[0].energy_j == Approx(345474069.57e-12).epsilon(1e-12));

  // On the command line: null without --chip, the sum of the layers with it.
  testing_cli::TempDir dir("scalesim-energy");
  const std::string args = "scalesim configs/scalesim/array-32x32-ws.cfg configs/scalesim/resnet18-head.csv --out ";
  REQUIRE(run_tpusim(args + dir / "none").status == 0);
  const auto none = nlohmann::json::parse(read_file(dir / "none/report.json"))["result"]["scalesim"];
  CHECK(none["total"]["energy_j"].is_null());
  for (const auto& l : none["layers"]) CHECK(l["energy_j"].is_null());
  const auto r = run_tpusim(args + dir / "v4" + " --chip tpu-v4");
  REQUIRE(r.status == 0);
  CHECK(r.output.find("energy: ") != std::string::npos);
  const auto with = nlohmann::json::parse(read_file(dir / "v4/report.json"))["result"]["scalesim"];
  double sum = 0;
  for (const auto& l : with["layers"]) {
    const double sram = l["sram"]["ifmap_reads"].get<double>() + l["sram"]["filter_reads"].get<double>() +
                        l["sram"]["ofmap_writes"].get<double>();
    const double dram = l["dram"]["ifmap_reads"].get<double>() + l["dram"]["filter_reads"].get<double>() +
                        l["dram"]["ofmap_writes"].get<double>();
    CHECK(l["energy_j"].get<double>() ==
          Approx((l["macs"].get<double>() * 2.0 + sram * 1.25 + dram * 31.76) * 1e-12).epsilon(1e-12));
    sum += l["energy_j"].get<double>();
  }
  CHECK(with["total"]["energy_j"].get<double>() == Approx(sum).epsilon(1e-12));
}

}  // namespace test_scalesim
