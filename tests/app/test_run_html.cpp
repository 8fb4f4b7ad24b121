// `tpusim run EXP --html FILE`: the page embeds exactly the run's report.json
// and every slice of its trace.json (the browser test, tests/browser/
// run_page.mjs, checks what the page draws from them); misuse exits 2
// before the run.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "app/run_page.h"
#include "cli_runner.h"

namespace test_run_html {

using testing_cli::run_tpusim;
using testing_cli::TempDir;

namespace {

// The JSON of the page's <script type="application/json"> element, with
// the "<\/" the page writes for "</" turned back.
nlohmann::json embedded(const std::string& page_path) {
  std::ifstream in(page_path);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string page = ss.str();
  const std::string open = "<script id=\"tpusim-data\" type=\"application/json\">";
  const auto from = page.find(open);
  REQUIRE(from != std::string::npos);
  const auto to = page.find("</script>", from);
  std::string json = page.substr(from + open.size(), to - from - open.size());
  for (auto at = json.find("<\\/"); at != std::string::npos; at = json.find("<\\/", at)) json.erase(at + 1, 1);
  return nlohmann::json::parse(json);
}

}  // namespace

TEST_CASE("run --html: the page carries the report and every trace slice", "[app][html]") {
  TempDir tmp("run-html");
  const std::string page = tmp / "run.html";
  const auto r = run_tpusim("run configs/experiments/train-pp-v5e.yaml --html " + page + " --out " + tmp / "run");
  INFO(r.output);
  REQUIRE(r.status == 0);
  const nlohmann::json data = embedded(page), report = testing_cli::read_report(tmp / "run");
  CHECK(data["report"] == report);
  std::ifstream trace_file(tmp / "run/trace.json");
  const nlohmann::json trace = nlohmann::json::parse(trace_file);
  std::size_t slices = 0, embedded_slices = 0;
  for (const auto& e : trace["traceEvents"]) slices += e["ph"] == "X";
  for (const auto& t : data["trace"]["tracks"]) embedded_slices += t["slices"].size();
  CHECK(slices > 0);
  CHECK(embedded_slices == slices);
  CHECK(data["trace"]["aggregated_bin_us"] == 0);
}

TEST_CASE("run --html: past its bound the page aggregates each engine track, every stage still drawn", "[app][html]") {
  TempDir tmp("run-html-aggregated");
  REQUIRE(run_tpusim("run configs/experiments/train-pp-v5e.yaml --trace --out " + tmp / "run").status == 0);
  std::ifstream trace_file(tmp / "run/trace.json");
  std::stringstream text;
  text << trace_file.rdbuf();
  const nlohmann::json trace = nlohmann::json::parse(text.str());
  // The trace's slices per (chip, track name), counted here from trace.json.
  std::map<long, std::string> track_names;
  std::map<std::pair<long, std::string>, std::size_t> in_trace;
  std::size_t pipeline_slices = 0;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name")
      track_names[e["pid"].get<long>() * 100000000L + e["tid"].get<long>()] = e["args"]["name"];
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X") {
      const std::string name = track_names[e["pid"].get<long>() * 100000000L + e["tid"].get<long>()];
      ++in_trace[{e["pid"].get<long>(), name}];
      pipeline_slices += name.rfind("pipeline", 0) == 0;
    }
  const std::size_t bound = pipeline_slices + 2 * in_trace.size();  // room for about two slices per engine track
  const std::string page = tmp / "run.html";
  std::ofstream(page) << app::render_run_html(testing_cli::read_report(tmp / "run"), text.str(), bound);
  const nlohmann::json data = embedded(page);
  CHECK(data["trace"]["aggregated_bin_us"].get<double>() > 0);
  std::size_t drawn = 0;
  std::map<std::pair<long, std::string>, std::size_t> ops;  // ops each drawn track's slices stand for
  for (const auto& t : data["trace"]["tracks"]) {
    drawn += t["slices"].size();
    for (const auto& sl : t["slices"]) {
      const std::string name = data["trace"]["names"][sl[2].get<std::size_t>()];
      const bool merged = name.size() > 3 && name.compare(name.size() - 3, 3, "ops") == 0;
      ops[{t["chip"].get<long>(), t["name"]}] += merged ? std::stoul(name) : 1;
    }
  }
  CHECK(drawn <= bound);
  CHECK(ops == in_trace);  // every track of every chip (stage) drawn, each op counted once
}

TEST_CASE("run --html: misuse exits 2 before the run", "[app][html]") {
  TempDir tmp("run-html-bad");
  const auto empty = run_tpusim("run configs/experiments/matmul-v5e.yaml --html '' --out " + tmp / "a");
  CHECK(empty.status == 2);
  CHECK(empty.output.find("--html: expected a file name") != std::string::npos);
  const auto nowhere =
      run_tpusim("run configs/experiments/matmul-v5e.yaml --html " + tmp / "no/such/run.html --out " + tmp / "b");
  INFO(nowhere.output);
  CHECK(nowhere.status == 2);
  CHECK(nowhere.output.find("--html: cannot write") != std::string::npos);
  CHECK(nowhere.output.find("no folder") != std::string::npos);
  CHECK_FALSE(std::ifstream(tmp / "b/report.json").good());  // refused before the run
}

}  // namespace test_run_html
