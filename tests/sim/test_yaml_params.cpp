#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "sim/output.h"
#include "sim/params.h"
#include "sim/stats.h"

namespace {

struct Widget {
  double speed = 0;
  std::uint32_t count = 0;
  bool fast = false;
  std::string mode;
};

sim::ParamTable<Widget> widget_table() {
  sim::ParamTable<Widget> t("widget", "a test component");
  t.real("speed", &Widget::speed, "m/s", std::nullopt, sim::positive(), "how fast")
      .integer<std::uint32_t>("count", &Widget::count, "items", 3, sim::between(1, 10), "how many")
      .flag("fast", &Widget::fast, false, "hurry")
      .choice("mode", &Widget::mode, {"ring", "torus"}, std::string("ring"), "shape");
  return t;
}

std::string error_of(const std::string& yaml) {
  try {
    Widget w;
    widget_table().load(sim::YamlNode::load_string(yaml, "w.yaml"), w);
  } catch (const sim::ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("param tables fill defaults and read typed values", "[sim][params]") {
  Widget w;
  widget_table().load(sim::YamlNode::load_string("speed: 2.5\nfast: true\n", "w.yaml"), w);
  CHECK(w.speed == 2.5);
  CHECK(w.count == 3);
  CHECK(w.fast);
  CHECK(w.mode == "ring");
}

TEST_CASE("param tables locate every kind of mistake", "[sim][params]") {
  CHECK(error_of("speed: 1\ncont: 2\n") == "w.yaml:2:1: cont: unknown key 'cont'; did you mean 'count'?");
  CHECK(error_of("count: 2\n") == "w.yaml:1:1: speed: missing required key (how fast)");
  CHECK(error_of("speed: fast\n") == "w.yaml:1:8: speed: expected a number, got 'fast'");
  CHECK(error_of("speed: 0\n") == "w.yaml:1:8: speed: value 0 is out of range: expected > 0 m/s");
  CHECK(error_of("speed: 1\ncount: 11\n") ==
        "w.yaml:2:8: count: value 11 is out of range: expected between 1 and 10 items");
  CHECK(error_of("speed: 1\ncount: 2.5\n") == "w.yaml:2:8: count: expected an integer, got '2.5'");
  CHECK(error_of("speed: 1\nfast: maybe\n") == "w.yaml:2:7: fast: expected true or false, got 'maybe'");
  CHECK(error_of("speed: 1\nmode: tous\n").find("w.yaml:2:7: mode: 'tous' is not a valid mode") == 0);
  CHECK(error_of("speed: [1, 2]\n") == "w.yaml:1:8: speed: expected a number, got a list");
  CHECK(error_of("speed: 1\n  bad: indent\n").find("w.yaml:2:") == 0);
}

TEST_CASE("did_you_mean suggests only close words", "[sim][params]") {
  CHECK(sim::did_you_mean("wrokload", {"workload", "chip"}) == "did you mean 'workload'?");
  CHECK(sim::did_you_mean("q", {"m", "k", "n"}).empty());
  CHECK(sim::did_you_mean("zebra", {"workload", "chip"}).empty());
}

TEST_CASE("command-line overrides replace values and are named in messages", "[sim][params]") {
  auto doc = sim::YamlNode::load_string("a:\n  b: 1\n  c: [1, 2]\n", "f.yaml");
  doc.apply_override("a.b=7");
  CHECK(doc["a"]["b"].as_int() == 7);
  CHECK(doc["a"]["b"].location().str() == "--set a.b=7");
  doc.apply_override("a.c=[3, 4, 5]");
  CHECK(doc["a"]["c"].size() == 3);
  CHECK_THROWS_WITH(doc.apply_override("x.b=1"), Catch::Contains("the path does not exist"));
  CHECK_THROWS_WITH(doc.apply_override("a.b.q=1"), Catch::Contains("'a.b' is not a mapping"));
  CHECK_THROWS_WITH(doc.apply_override("novalue"), Catch::Contains("expected KEY.PATH=VALUE"));
}

TEST_CASE("stats groups nest and evaluate formulas at dump time", "[sim][stats]") {
  sim::StatGroup root("chip0");
  double bytes = 100;
  root.group("hbm").scalar("bytes", bytes, "B", "moved");
  root.group("hbm").formula(
      "bandwidth", [&] { return bytes / 2.0; }, "B/s", "bytes / 2 s");
  bytes = 300;  // the formula sees the value at dump time, the scalar its snapshot
  auto j = root.to_json();
  CHECK(j["hbm"]["bytes"]["value"] == 100.0);
  CHECK(j["hbm"]["bandwidth"]["value"] == 150.0);
  CHECK(j["hbm"]["bandwidth"]["unit"] == "B/s");
  CHECK(root.value("hbm.bandwidth") == 150.0);
  CHECK_THROWS(root.value("hbm.nothing"));
}

TEST_CASE("atomic writes leave either the old or the new file", "[sim][output]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "tpusim-atomic-test";
  fs::remove_all(dir);
  sim::write_file_atomic((dir / "sub" / "r.json").string(), "first");
  sim::write_file_atomic((dir / "sub" / "r.json").string(), "second");
  std::ifstream in(dir / "sub" / "r.json");
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(s == "second");
  std::size_t files = 0;
  for (auto& e : fs::directory_iterator(dir / "sub")) (void)e, ++files;
  CHECK(files == 1);  // no temporary left behind
  fs::remove_all(dir);
}
