#pragma once
// One fuzz input through the config loader and validator, exactly as the CLI
// loads files (loading only: nothing is simulated). Shared by the libFuzzer
// target (fuzz/fuzz_config.cpp) and the regression tests
// (tests/app/test_bad_input_fuzz.cpp), so that every crash the fuzzer finds
// is replayed by ctest.
//
// An input is YAML text. Two kinds of comment line steer it (both are
// comments to the YAML parser, so every input is also a plain YAML file):
//   #kind: experiment | chip | pod | sweep | auto    (first line; default auto)
//   #set KEY.PATH=VALUE                              (any line; a --set override)
// experiment: load_experiment_text with the #set overrides (the `tpusim run` path)
// chip:       hw::load_chip on the text (an inline chip, a chips/ file)
// pod:        the text as pods/fuzz.yaml, named by an experiment (`pod: fuzz`)
// sweep:      the text as sweeps/fuzz.yaml: load_sweep_spec, and every point's
//             experiment when there are at most kMaxSweepPoints of them
// auto:       validate_text, the `tpusim validate` detection
//
// The only acceptable outcomes are success, sim::ConfigError with a location
// (file and line, or the --set it came from) and sim::SimFailure. Anything
// else (another exception, a message without a location) is a violation,
// which the fuzz target turns into a crash.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "hw/chip_config.h"
#include "sim/error.h"
#include "sim/yaml_node.h"
#include "sweep/points.h"
#include "sweep/spec.h"
#include "workloads/experiment.h"

namespace fuzzing {

namespace fs = std::filesystem;

constexpr std::size_t kMaxSweepPoints = 32;

// known_open: a violation already reported and waiting for its fix (see
// known_open_issue); the fuzz target lets it pass so that CI keeps fuzzing
// everything else, and test_bad_input_fuzz.cpp fails once it is fixed.
enum class Outcome { ok, config_error, sim_failure, violation, known_open };

inline const char* to_string(Outcome o) {
  switch (o) {
    case Outcome::ok: return "ok";
    case Outcome::config_error: return "config error";
    case Outcome::sim_failure: return "simulation failure";
    case Outcome::violation: return "VIOLATION";
    case Outcome::known_open: return "known open issue";
  }
  return "?";
}

struct Result {
  Outcome outcome = Outcome::ok;
  std::string kind;     // the kind it was loaded as
  std::string message;  // the error's what(), or what was violated
};

// A scratch tree the inputs are written into: DIR/experiments (copies of
// configs/experiments), DIR/sweeps (copies of configs/sweeps, so a sweep's
// relative `experiment:` resolves), DIR/pods, DIR/chips. Removed on
// destruction.
class Scratch {
 public:
  explicit Scratch(const std::string& source_dir) {
    std::string templ = (fs::temp_directory_path() / "tpusim-fuzz-XXXXXX").string();
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) throw std::runtime_error("cannot create a scratch directory");
    dir_ = buf.data();
    for (const char* sub : {"experiments", "sweeps", "pods", "chips", "hlo"}) {
      fs::create_directories(fs::path(dir_) / sub);
      std::error_code ec;
      const fs::path from = fs::path(source_dir) / "configs" / sub;
      const std::string s(sub);
      // The files shipped experiments name beside them: sweep bases, HLO modules.
      if (s == "experiments" || s == "sweeps" || s == "hlo")
        for (const auto& e : fs::directory_iterator(from, ec))
          if (e.path().extension() == ".yaml" || s == "hlo")
            fs::copy_file(e.path(), fs::path(dir_) / sub / e.path().filename(), ec);
    }
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  const std::string& dir() const { return dir_; }
  std::string path(const char* sub, const char* name) const { return (fs::path(dir_) / sub / name).string(); }

 private:
  std::string dir_;
};

struct ParsedInput {
  std::string kind = "auto";
  std::vector<std::string> sets;
};

inline ParsedInput parse_input(const std::string& text) {
  ParsedInput p;
  std::istringstream in(text);
  std::string line;
  bool first = true;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (first && line.rfind("#kind:", 0) == 0) {
      std::string k = line.substr(6);
      k.erase(0, k.find_first_not_of(' '));
      if (k == "experiment" || k == "chip" || k == "pod" || k == "sweep") p.kind = k;
    } else if (line.rfind("#set ", 0) == 0) {
      std::string set = line.substr(5);
      set.erase(std::min(set.size(), set.find('\0')));  // as it would arrive in argv
      p.sets.push_back(set);
    }
    first = false;
  }
  return p;
}

// The input as a file for as long as it is loaded; removed afterwards, so
// that no input sees an earlier one (every run replays alone).
class TempInput {
 public:
  TempInput(std::string path, const std::string& text) : path_(std::move(path)) {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + path_);
  }
  ~TempInput() {
    std::error_code ec;
    fs::remove(path_, ec);
  }
  TempInput(const TempInput&) = delete;
  TempInput& operator=(const TempInput&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// What is wrong with a ConfigError's location, or "" when it is fine.
inline std::string location_problem(const sim::ConfigError& e) {
  const sim::SourceLocation& w = e.where();
  const std::string what = e.what();
  if (what.empty() || e.detail().empty()) return "empty message";
  if (w.file.empty()) return "no file in the location";
  if (what.rfind(w.str(), 0) != 0) return "the message does not start with its location";
  if (w.file.rfind("--set ", 0) == 0) return "";  // names the override
  if (w.line <= 0 && e.detail() != "cannot open file" && e.detail().rfind("not a regular file", 0) != 0)
    return "no line number";
  return "";
}

inline void load_as(const std::string& kind, const std::string& text, const ParsedInput& in, const Scratch& s) {
  if (kind == "experiment") {
    workloads::load_experiment_text(text, s.path("experiments", "fuzz.yaml"), in.sets);
  } else if (kind == "chip") {
    hw::load_chip(sim::YamlNode::load_string(text, s.path("chips", "fuzz.yaml")));
  } else if (kind == "pod") {
    const TempInput pod(s.path("pods", "fuzz.yaml"), text);
    workloads::load_experiment_text(
        "chip: tpu-v4\npod: fuzz\nworkload: {kind: collective, op: all_reduce, bytes: 4096}\n",
        s.path("experiments", "fuzz-pod.yaml"));
  } else if (kind == "sweep") {
    const TempInput sweep(s.path("sweeps", "fuzz.yaml"), text);
    const sweep::SweepSpec spec = sweep::load_sweep_spec(sweep.path());
    if (spec.point_count() <= kMaxSweepPoints) sweep::expand_sweep(spec);
  } else {
    workloads::validate_text(text, s.path("experiments", "fuzz.yaml"));
  }
}

// Violations found and reported but not yet fixed, each with its
// regression input in tests/data/bad/fuzz-open/: return the input's name
// for the exception it throws (match it narrowly: kind, exception type,
// error code, path), "" for everything else. Keep this list short and
// precise; empty it as the fixes land. Empty now: the last one
// (fuzz/sweep-long-experiment-path.yaml) is fixed.
inline std::string known_open_issue(const std::string& /*kind*/, const std::exception& /*e*/) { return ""; }

inline Result check_input(const std::string& text, const Scratch& scratch) {
  const ParsedInput in = parse_input(text);
  Result r;
  r.kind = in.kind;
  try {
    load_as(in.kind, text, in, scratch);
  } catch (const sim::ConfigError& e) {
    r.message = e.what();
    const std::string problem = location_problem(e);
    r.outcome = problem.empty() ? Outcome::config_error : Outcome::violation;
    if (!problem.empty()) r.message = "ConfigError with " + problem + ": '" + r.message + "'";
  } catch (const sim::SimFailure& e) {
    r.message = e.what();
    r.outcome = r.message.empty() ? Outcome::violation : Outcome::sim_failure;
  } catch (const std::exception& e) {
    const std::string open = known_open_issue(in.kind, e);
    r.outcome = open.empty() ? Outcome::violation : Outcome::known_open;
    r.message = std::string("uncaught exception (exit 1, 'internal error'): ") + e.what();
    if (!open.empty()) r.message = "known open issue " + open + ": " + r.message;
  } catch (...) {
    r.outcome = Outcome::violation;
    r.message = "uncaught exception of unknown type";
  }
  return r;
}

}  // namespace fuzzing
