// `tpusim explain mxu --walk`: the cycle-by-cycle walk-through. Its final
// matrix is checked against a GEMM computed here, from the operands the
// walk-through prints (CLI) or returns (library); the frames against the
// cycle count and the skew; bad flags against exit status 2.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "app/explain/mxu_walkthrough.h"
#include "cli_runner.h"
#include "hw/mxu_timing.h"

namespace test_explain_walkthrough {

using testing_cli::run_tpusim;

namespace {

using Matrix = std::vector<std::vector<double>>;

// The `rows` rows of the matrix printed under the line that starts with
// `title` (a header line of column labels, then one labelled row each).
Matrix printed_matrix(const std::string& out, const std::string& title, std::size_t rows, std::size_t from = 0) {
  const std::size_t at = out.find("\n" + title, from);
  REQUIRE(at != std::string::npos);
  std::istringstream in(out.substr(at + 1));
  std::string line;
  std::getline(in, line);  // title
  std::getline(in, line);  // column labels
  Matrix m;
  for (std::size_t i = 0; i < rows; ++i) {
    REQUIRE(std::getline(in, line));
    std::istringstream cells(line);
    std::string label, cell;
    cells >> label;
    std::vector<double> row;
    while (cells >> cell) row.push_back(cell == "." ? -1e300 : std::stod(cell));
    m.push_back(row);
  }
  return m;
}

Matrix multiply(const Matrix& a, const Matrix& b) {
  Matrix y(a.size(), std::vector<double>(b.at(0).size(), 0.0));
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = 0; j < b[0].size(); ++j)
      for (std::size_t p = 0; p < b.size(); ++p) y[i][j] += a[i][p] * b[p][j];
  return y;
}

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("explain walk-through: the final matrix equals a host GEMM, every shape", "[app][explain]") {
  struct Case {
    hw::MxuConfig config;
    hw::MxuShape shape;
  };
  // One tile; ragged k and n with both banks; one bank; the largest array.
  const Case cases[] = {
      {{4, 4, true}, {6, 4, 4}}, {{3, 5, true}, {7, 11, 9}}, {{3, 5, false}, {2, 7, 6}}, {{16, 16, true}, {5, 20, 17}}};
  for (const Case& c : cases) {
    const explain::MxuWalkthrough w = explain::mxu_walkthrough(c.config, c.shape, 3);
    const std::uint64_t m = c.shape.m, k = c.shape.k, n = c.shape.n;
    INFO(c.config.rows << "x" << c.config.cols << " m " << m << " k " << k << " n " << n);
    REQUIRE(w.a.size() == m * k);
    REQUIRE(w.b.size() == k * n);
    REQUIRE(w.y.size() == m * n);
    bool small = true;
    for (const auto& x : w.a) small = small && std::abs(x.to_float()) <= 3;
    CHECK(small);
    for (std::uint64_t i = 0; i < m; ++i) {
      for (std::uint64_t j = 0; j < n; ++j) {
        double want = 0;
        for (std::uint64_t p = 0; p < k; ++p) want += double(w.a[i * k + p].to_float()) * w.b[p * n + j].to_float();
        CHECK(double(w.y[i * n + j]) == want);
        CHECK(double(w.collected[i * n + j]) == want);  // what the frames show leaving the bottom edge
      }
    }
    CHECK(w.matches_reference);
    CHECK(w.cycles == hw::mxu_tile_cycles(c.config, c.shape));
    CHECK(w.frames.size() == w.cycles);
    CHECK(w.summary.find("check: Y equals the host reference") != std::string::npos);

    // The skew: vector 0 of tile 0 enters row r at cycle s_0 + r, so the
    // frame one cycle earlier shows A[0][r] next in line for row r.
    const std::uint64_t s0 = w.schedule.at(0).feed_start;
    for (std::uint32_t r = 0; r < std::min<std::uint64_t>(c.config.rows, k); ++r) {
      const std::string& frame = w.frames.at(s0 + r - 1);
      const std::string want = "A[0][" + std::to_string(r) + "]=" + std::to_string(int(w.a[r].to_float()));
      const std::size_t line = frame.find("\n r" + std::to_string(r) + " ", frame.find("left edge"));
      REQUIRE(line != std::string::npos);
      const std::string row = frame.substr(line + 1, frame.find('\n', line + 1) - line - 1);
      CHECK(row.size() >= want.size());
      CHECK(row.compare(row.size() - want.size(), want.size(), want) == 0);  // the "+1" column is last
    }
  }
  // Ragged tiles are visible as such.
  const explain::MxuWalkthrough ragged = explain::mxu_walkthrough({3, 5, true}, {7, 11, 9}, 3);
  std::string all;
  for (const auto& f : ragged.frames) all += f;
  CHECK(all.find("0 (pad)") != std::string::npos);
  CHECK(all.find("padding (dropped)") != std::string::npos);
}

TEST_CASE("explain walk-through on the command line: frames, printed operands and result agree", "[app][explain]") {
  const std::string shape = "--rows 4 --cols 4 --m 6 --k 4 --n 4";
  auto r = run_tpusim("explain mxu --walk --no-pager " + shape);
  INFO(r.output.substr(0, 2000));
  REQUIRE(r.status == 0);
  auto j = run_tpusim("explain mxu --fidelity pe --json " + shape);
  REQUIRE(j.status == 0);
  const std::uint64_t cycles = nlohmann::json::parse(j.output)["cycles"].get<std::uint64_t>();
  CHECK(count(r.output, "===== cycle ") == cycles);
  CHECK(r.output.find("===== cycle " + std::to_string(cycles - 1) + " (of 0.." + std::to_string(cycles - 1) + ")") !=
        std::string::npos);
  CHECK(count(r.output, "feeder: tile 0 vector 0 |") == 1);

  // The walk-through prints A, B and Y: Y must be A x B, computed here.
  const Matrix a = printed_matrix(r.output, "A (6x4", 6), b = printed_matrix(r.output, "B (4x4", 4);
  const Matrix y = printed_matrix(r.output, "Y = A x B", 6);
  CHECK(a[0].size() == 4);
  CHECK(y == multiply(a, b));
  // ... and so must the collector's view in the last frame.
  const std::size_t last = r.output.rfind("===== cycle ");
  CHECK(printed_matrix(r.output, "Y so far", 6, last) == y);
  CHECK(r.output.find("check: Y equals the host reference") != std::string::npos);

  // stdin that is not a terminal: the same, without waiting; --play 0 also
  // never waits and, to a pipe, draws no escape codes.
  auto piped = run_tpusim("explain mxu --walk " + shape + " < /dev/null");
  CHECK(piped.status == 0);
  CHECK(piped.output == r.output);
  auto played = run_tpusim("explain mxu --play 0 " + shape + " < /dev/null");
  CHECK(played.status == 0);
  CHECK(count(played.output, "===== cycle ") == cycles);
  CHECK(played.output.find('\033') == std::string::npos);

  // Another seed, other operands, still right.
  auto other = run_tpusim("explain mxu --no-pager --seed 9 --rows 3 --cols 2 --m 4 --k 5 --n 3 --no-double-buffer");
  REQUIRE(other.status == 0);
  CHECK(printed_matrix(other.output, "Y = A x B", 4) ==
        multiply(printed_matrix(other.output, "A (4x5", 4), printed_matrix(other.output, "B (5x3", 5)));
}

TEST_CASE("explain mxu: bad walk-through flags exit 2 with a message", "[app][explain][bad-input]") {
  struct Bad {
    const char* args;
    const char* says;
  };
  const Bad cases[] = {
      {"--walk --rows 17 --cols 4 --m 4 --k 4 --n 4", "arrays up to 16x16"},
      {"--walk --rows 4 --cols 4 --m 33 --k 4 --n 4", "--m up to 32"},
      {"--walk --json --rows 4 --cols 4 --m 4 --k 4 --n 4", "choose one"},
      {"--play 0.1 --no-pager --rows 4 --cols 4 --m 4 --k 4 --n 4", "choose one"},
      {"--play -1 --rows 4 --cols 4 --m 4 --k 4 --n 4", "--play"},
      {"--play soon --rows 4 --cols 4 --m 4 --k 4 --n 4", "play"},
      {"--walk --fidelity tile --rows 4 --cols 4 --m 4 --k 4 --n 4", "needs --fidelity pe"},
      {"--walk --rows 4 --cols 4 --m 0 --k 4 --n 4", "mxu.m"},
      {"--walk --frames small --rows 4 --cols 4 --m 4 --k 4 --n 4", "expected compact or full"},
      {"--walk --frames compact --rows 16 --cols 4 --m 4 --k 4 --n 4", "use --frames full"},
      {"--walk --rows 4 --cols 4 --a '1,2;3' --b '1;2'", "row 1 has 1 values, row 0 has 2"},
      {"--walk --rows 4 --cols 4 --a '1,2;3,4' --b '1,2,3'", "A's columns must equal B's rows"},
      {"--walk --rows 4 --cols 4 --a '1,x' --b '1;2'", "'x' is not an integer from -99 to 99"},
      {"--walk --rows 4 --cols 4 --a '1,100' --b '1;2'", "'100' is not an integer"},
      {"--walk --rows 4 --cols 4 --a '1,2;;3,4' --b '1;2'", "row 1 is empty"},
      {"--walk --rows 4 --cols 4 --a '1,2'", "give both A and B"},
      {"--rows 4 --cols 4 --a '1,2' --b '1;2'", "for --walk or --html"},
      {"--walk --rows 4 --cols 4 --m 3 --a '1,2' --b '1;2'", "--m 3 disagrees"},
      {"--html /tmp/tpusim-test-never-written.html --rows 17 --cols 4 --m 4 --k 4 --n 4", "arrays up to 16x16"},
      {"--html /tmp/tpusim-test-never-written.html --rows 4 --cols 4 --m 40 --k 4 --n 4", "--m up to 32"},
      {"--html /tmp/tpusim-test-never-written.html --rows 4 --cols 4 --m 4 --k 4 --n 4 --dataflow os", "is not drawn"},
      {"--html /no/such/dir/page.html --rows 4 --cols 4 --m 4 --k 4 --n 4", "cannot write"},
  };
  for (const Bad& c : cases) {
    auto r = run_tpusim(std::string("explain mxu ") + c.args + " < /dev/null");
    INFO(c.args << " said: " << r.output);
    CHECK(r.status == 2);
    CHECK(r.output.find(c.says) != std::string::npos);
    CHECK(r.output.find("terminate") == std::string::npos);
    CHECK(r.output.find("===== cycle") == std::string::npos);
  }
}

TEST_CASE("explain mxu --a --b: the student's own operands, walked and paged", "[app][explain]") {
  // A 3x2 and B 2x3 by hand: Y = A x B worked out below.
  const std::string own = "--rows 2 --cols 2 --a '1,2;3,-4;0,5' --b '2,0,-1;1,3,2'";
  const std::vector<std::vector<double>> y = {{4, 6, 3}, {2, -12, -11}, {5, 15, 10}};
  auto r = run_tpusim("explain mxu --walk --no-pager " + own);
  REQUIRE(r.status == 0);
  CHECK(printed_matrix(r.output, "Y = A x B", 3) == y);
  CHECK(r.output.find("check: Y equals the host reference") != std::string::npos);

  // The page embeds the same run: its last frame's Y is the same Y, it has a
  // frame per cycle, and it shows the command that makes it.
  testing_cli::TempDir dir("explain-html");
  const std::string page = dir / "mxu.html";
  auto html = run_tpusim("explain mxu --html " + page + " " + own);
  REQUIRE(html.status == 0);
  std::ifstream in(page);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string open = "<script id=\"tpusim-data\" type=\"application/json\">";
  const std::size_t from = text.find(open) + open.size();
  const auto j = nlohmann::json::parse(text.substr(from, text.find("</script>", from) - from));
  CHECK(j["frames"].size() == j["cycles"].get<std::size_t>());
  const auto& last = j["frames"].back()["y"];
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t c = 0; c < 3; ++c) CHECK(last[i * 3 + c].get<double>() == y[i][c]);
  CHECK(j["command"].get<std::string>().find("--a '1,2;3,-4;0,5' --b '2,0,-1;1,3,2'") != std::string::npos);
  CHECK(text.find("http") == std::string::npos);  // nothing from the network
}

TEST_CASE("explain walk-through: compact frames on the command line, no colour into a pipe", "[app][explain]") {
  auto r = run_tpusim("explain mxu --walk --no-pager --frames compact --rows 8 --cols 8 --m 16 --k 8 --n 8");
  REQUIRE(r.status == 0);
  CHECK(r.output.find('\033') == std::string::npos);
  CHECK(r.output.find("===== cycle") == std::string::npos);
  // Every frame starts "cycle t/37" (38 cycles = 2*8 + 16 + 8 - 2, docs/mxu.md).
  std::size_t frames = 0;
  for (std::size_t at = r.output.find("\ncycle "); at != std::string::npos; at = r.output.find("\ncycle ", at + 1)) {
    CHECK(r.output.compare(at + 1, 10 + std::to_string(frames).size(), "cycle " + std::to_string(frames) + "/37 ") ==
          0);
    ++frames;
  }
  CHECK(frames == 38);
  CHECK(r.output.find("check: Y equals the host reference") != std::string::npos);
}

TEST_CASE("explain mxu: the table and JSON outputs are unchanged by the walk-through", "[app][explain]") {
  auto table = run_tpusim("explain mxu --rows 8 --cols 8 --m 16 --k 8 --n 8 --fidelity pe");
  CHECK(table.status == 0);
  CHECK(table.output.find("match host reference") != std::string::npos);
  CHECK(table.output.find("===== cycle") == std::string::npos);
  auto json = run_tpusim("explain mxu --json");
  REQUIRE(json.status == 0);
  const auto j = nlohmann::json::parse(json.output);
  CHECK(j["cycles"].get<std::uint64_t>() == hw::mxu_tile_cycles({128, 128, true}, {128, 128, 128}));
  CHECK(j["fidelity"] == "tile");
}

}  // namespace test_explain_walkthrough
