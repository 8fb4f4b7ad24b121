// Replays the fuzz target's harness (fuzz/config_harness.h) in ctest:
// every input the fuzzer ever crashed on (tests/data/bad/fuzz/) is now a
// located error, every shipped config loads as its kind (they seed the
// fuzzer), and no bad-input file gets past the loader with an unlocated or
// foreign exception.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz/config_harness.h"
#include "sim/text.h"

namespace test_bad_input_fuzz {

namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<fs::path> yaml_files(const std::string& sub) {
  std::vector<fs::path> out;
  const fs::path dir = fs::path(TPUSIM_SOURCE_DIR) / sub;
  if (sub == "tests/data/bad/fuzz-open" && !fs::is_directory(dir)) return out;  // may be absent: nothing open
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".yaml") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

using sim::ends_with;

}  // namespace

TEST_CASE("fuzz regressions: every input the fuzzer crashed on is a located error", "[app][bad-input][fuzz]") {
  const fuzzing::Scratch scratch(TPUSIM_SOURCE_DIR);
  const auto files = yaml_files("tests/data/bad/fuzz");
  REQUIRE(files.size() >= 10);
  for (const auto& f : files) {
    const fuzzing::Result r = fuzzing::check_input(slurp(f), scratch);
    INFO(f.filename().string() << " (as " << r.kind << "): " << fuzzing::to_string(r.outcome) << ": " << r.message);
    CHECK(r.outcome == fuzzing::Outcome::config_error);
    // Names the file it was loaded from, or the override.
    CHECK((r.message.find("fuzz.yaml:") != std::string::npos || r.message.rfind("--set ", 0) == 0));
  }
}

TEST_CASE("fuzz open issues: still open (once fixed, move the input to fuzz/ and drop it from the harness)",
          "[app][bad-input][fuzz]") {
  // Each input in tests/data/bad/fuzz-open/ is a violation the harness
  // lets pass while its fix is pending (fuzzing::known_open_issue). When
  // this fails, the fix has landed: move the file to tests/data/bad/fuzz/
  // and delete its entry in fuzz/config_harness.h. Passes trivially when
  // nothing is open (the folder is empty or absent).
  const fuzzing::Scratch scratch(TPUSIM_SOURCE_DIR);
  for (const auto& f : yaml_files("tests/data/bad/fuzz-open")) {
    const fuzzing::Result r = fuzzing::check_input(slurp(f), scratch);
    INFO(f.filename().string() << ": " << fuzzing::to_string(r.outcome) << ": " << r.message);
    CHECK(r.outcome == fuzzing::Outcome::known_open);
  }
}

TEST_CASE("fuzz seeds: every shipped config loads as its kind", "[app][fuzz]") {
  const fuzzing::Scratch scratch(TPUSIM_SOURCE_DIR);
  int loaded = 0;
  auto expect_ok = [&](const fs::path& f, const std::string& kind) {
    const fuzzing::Result r = fuzzing::check_input("#kind: " + kind + "\n" + slurp(f), scratch);
    INFO(f.string() << " as " << kind << ": " << fuzzing::to_string(r.outcome) << ": " << r.message);
    CHECK(r.outcome == fuzzing::Outcome::ok);
    ++loaded;
  };
  for (const auto& f : yaml_files("configs/chips")) expect_ok(f, "chip");
  for (const auto& f : yaml_files("configs/pods")) expect_ok(f, "pod");
  for (const auto& f : yaml_files("configs/experiments")) expect_ok(f, "experiment");
  for (const auto& f : yaml_files("configs/sweeps"))
    expect_ok(f, ends_with(f.string(), ".base.yaml") ? "experiment" : "sweep");
  for (const auto& f : yaml_files("configs/tutorial")) {
    const std::string text = slurp(f);
    if (text.find("\nsweep:") != std::string::npos) {
      INFO(f.string());
      CHECK(workloads::validate_file(f.string()) == "sweep");
      CHECK_NOTHROW(sweep::expand_sweep(sweep::load_sweep_spec(f.string())));  // its base sits beside it
      continue;
    }
    expect_ok(f, "experiment");
  }
  CHECK(loaded >= 40);
}

TEST_CASE("fuzz oracle: the bad-input files are located errors under the harness too", "[app][bad-input][fuzz]") {
  const fuzzing::Scratch scratch(TPUSIM_SOURCE_DIR);
  for (const auto& f : yaml_files("tests/data/bad")) {
    const std::string name = f.filename().string();
    const std::string kind = name.rfind("sweep", 0) == 0 ? "sweep" : "experiment";
    for (const std::string& k : {kind, std::string("auto")}) {
      const fuzzing::Result r = fuzzing::check_input("#kind: " + k + "\n" + slurp(f), scratch);
      INFO(name << " as " << k << ": " << fuzzing::to_string(r.outcome) << ": " << r.message);
      CHECK(r.outcome != fuzzing::Outcome::violation);
      // Only the files whose simulated system fails (exit 3 at run time: it
      // does not fit, failed links cut the pod, or it runs away) load.
      const bool fails_at_run_time = name.find("oom") != std::string::npos || name.find("link_cut") == 0 ||
                                     name.find("runaway") != std::string::npos;
      if (!fails_at_run_time) CHECK(r.outcome != fuzzing::Outcome::ok);
    }
  }
}

TEST_CASE("fuzz oracle: an error without a location is a violation", "[app][fuzz]") {
  CHECK(fuzzing::location_problem(sim::ConfigError({"f.yaml", 3, 4}, "a.b", "bad")).empty());
  CHECK(fuzzing::location_problem(sim::ConfigError({"--set a.b=1", 0, 0}, "a.b", "bad")).empty());
  CHECK(fuzzing::location_problem(sim::ConfigError({"f.yaml", 0, 0}, "a.b", "bad")) == "no line number");
  CHECK(fuzzing::location_problem(sim::ConfigError({"", 0, 0}, "a.b", "bad")) == "no file in the location");
  CHECK(fuzzing::location_problem(sim::ConfigError({"f.yaml", 1, 1}, "", "")) == "empty message");
  const fuzzing::ParsedInput in = fuzzing::parse_input("#kind: sweep\na: 1\n#set x.y=2\n#set z=[1\n");
  CHECK(in.kind == "sweep");
  CHECK(in.sets == std::vector<std::string>{"x.y=2", "z=[1"});
  CHECK(fuzzing::parse_input("a: 1\n#kind: chip\n").kind == "auto");  // only the first line steers
}

}  // namespace test_bad_input_fuzz
