// The tutorial (docs/tutorial/) quotes numbers produced by the simulator;
// scripts/tutorial-check reruns every chapter's commands with this build's
// binary and compares each quoted number with what the simulator says now.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_runner.h"

namespace test_tutorial {

namespace fs = std::filesystem;

namespace {

std::string python() {
  // scripts/tutorial-check needs only the standard library of python3.
  return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

std::string read_source(const fs::path& relative) {
  std::ifstream in(fs::path(TPUSIM_SOURCE_DIR) / relative);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

testing_cli::CliResult run_check(const std::string& extra) {
  return testing_cli::run_in_source_tree(python() + " scripts/tutorial-check --binary " + TPUSIM_BINARY + " " + extra);
}

}  // namespace

TEST_CASE("tutorial numbers match the simulator", "[app][tutorial]") {
  const testing_cli::CliResult r = run_check("");
  INFO(r.output);
  CHECK(r.output.find(" 0 failed") != std::string::npos);
  CHECK(r.status == 0);
}

TEST_CASE("tutorial check catches a number that drifted", "[app][tutorial]") {
  // Copy chapter 4, change one quoted number, and check it against the simulator.
  const fs::path dir = fs::temp_directory_path() / ("tpusim-test-tutorial-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string text = read_source("docs/tutorial/04-allreduce.md");
  const std::string marker = "<!-- n: ch4-bidi-ms -->";
  const auto at = text.find(marker);
  REQUIRE(at != std::string::npos);
  const auto start = at + marker.size();
  const auto end = text.find("<!--", start);
  text.replace(start, end - start, "9.99");
  std::ofstream(dir / "04-allreduce.md") << text;

  const testing_cli::CliResult r = run_check("--only ch4 --chapters-dir " + dir.string());
  fs::remove_all(dir);
  INFO(r.output);
  CHECK(r.status == 1);
  CHECK(r.output.find("1 failed") != std::string::npos);
  CHECK(r.output.find("ch4-bidi-ms: the text says 9.99") != std::string::npos);
  CHECK(r.output.find("-<!-- n: ch4-bidi-ms -->9.99") != std::string::npos);  // the diff
}

TEST_CASE("tutorial check catches an exercise whose prediction misses the run", "[app][tutorial]") {
  // Chapter 4's exercise predicts the all-gather from (N-1)/N V/W plus hops and
  // launch. Work it with the all-reduce's 2(N-1)/N instead (a classic slip):
  // the prediction (2.6 ms) misses the run (1.3 ms) by far more than the 1%
  // the answer claims.
  const fs::path dir = fs::temp_directory_path() / ("tpusim-test-tutorial-ex-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string sidecar = read_source("configs/tutorial/ch4.numbers.json");
  const std::string formula = "\"1e3 * (7 / 8 * 67108864";
  const auto at = sidecar.find(formula);
  REQUIRE(at != std::string::npos);
  sidecar.replace(at, formula.size(), "\"1e3 * (2 * 7 / 8 * 67108864");
  std::ofstream(dir / "ch4.numbers.json") << sidecar;

  const testing_cli::CliResult r = run_check("--only ch4 --sidecars-dir " + dir.string());
  fs::remove_all(dir);
  INFO(r.output);
  CHECK(r.status == 1);
  CHECK(r.output.find("ch4-ex-pred: the prediction 2.6") != std::string::npos);
  CHECK(r.output.find("the exercise claims within 1%") != std::string::npos);
}

TEST_CASE("concept map: every command it shows is run as pasted", "[app][tutorial]") {
  // The concept map's sidecar has "every_command": a command shown in a row
  // that is no run of the sidecar (so never checked), or written without
  // build/ (not pasteable from the repository root), fails the check; a
  // check of what is shown, so nothing needs to run (--commands-only).
  const fs::path dir = fs::temp_directory_path() / ("tpusim-test-concepts-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string text = read_source("docs/tutorial/concepts.md");
  const auto table_end = text.find("\n\n## ");
  REQUIRE(table_end != std::string::npos);
  text.insert(table_end,
              "\n| unchecked | - | `build/tpusim run configs/tutorial/ch4-ring.yaml --set workload.bytes=4096` | - |"
              "\n| bare | - | `tpusim run configs/tutorial/ch4-ring.yaml` | - |");
  std::ofstream(dir / "concepts.md") << text;
  const testing_cli::CliResult r = run_check("--commands-only --only concepts --chapters-dir " + dir.string());
  fs::remove_all(dir);
  INFO(r.output);
  CHECK(r.status == 1);
  CHECK(r.output.find("2 failed") != std::string::npos);
  CHECK(r.output.find("the command `build/tpusim run configs/tutorial/ch4-ring.yaml --set workload.bytes=4096` is "
                      "shown but is no run") != std::string::npos);
  CHECK(r.output.find("`tpusim run configs/tutorial/ch4-ring.yaml` is not as the README writes it") !=
        std::string::npos);
}

TEST_CASE("glossary: every metaphor points at a row of the concept map", "[app][tutorial]") {
  // docs/tutorial/glossary.md's last column names concept-map rows by the
  // start of their first cell ("..." ends a shortened name; "; " separates).
  const std::string glossary = read_source("docs/tutorial/glossary.md");
  const std::string concepts = read_source("docs/tutorial/concepts.md");
  std::istringstream lines(glossary);
  int metaphors = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("| ", 0) != 0 || line.rfind("| metaphor", 0) == 0) continue;
    const auto last = line.rfind(" | ");
    REQUIRE(last != std::string::npos);
    std::string rows = line.substr(last + 3, line.size() - last - 5);  // without the closing " |"
    ++metaphors;
    for (std::size_t start = 0; start <= rows.size();) {
      auto end = rows.find("; ", start);
      if (end == std::string::npos) end = rows.size();
      std::string row = rows.substr(start, end - start);
      if (row.size() > 4 && row.compare(row.size() - 4, 4, " ...") == 0) row.resize(row.size() - 4);
      INFO(line << "\nnames the row '" << row << "'");
      CHECK(concepts.find("\n| " + row) != std::string::npos);
      start = end + 2;
    }
  }
  CHECK(metaphors >= 40);  // both articles' metaphors, the kitchen's and the river's
}

}  // namespace test_tutorial
