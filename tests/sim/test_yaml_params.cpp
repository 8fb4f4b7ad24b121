#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "sim/output.h"
#include "sim/params.h"
#include "sim/stats.h"

namespace test_yaml_params {

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
  CHECK(error_of("speed: 1\nmode: tous\n") ==
        "w.yaml:2:7: mode: unknown mode 'tous'; expected one of: ring, torus; did you mean 'torus'?");
  CHECK(error_of("speed: [1, 2]\n") == "w.yaml:1:8: speed: expected a number, got a list");
  CHECK(error_of("speed: 1\n  bad: indent\n").find("w.yaml:2:") == 0);
}

namespace {

enum class Shape { ring, torus };

const sim::EnumNames<Shape>& shape_names() {
  static const sim::EnumNames<Shape> names("shape", {{Shape::ring, "ring", "one axis"}, {Shape::torus, "torus", ""}});
  return names;
}

struct Inner {
  std::uint64_t a = 0;
};

struct Gadget {
  Shape shape = Shape::ring;
  std::vector<std::uint32_t> sizes;
  std::vector<bool> wrap;
  std::optional<double> bandwidth;
  std::uint8_t small = 0;
  int id = 0;
  Inner inner;       // `a` lives here but is a key of Gadget
  Inner block;       // given whole or not at all
  std::string note;  // set by a custom key
  std::size_t rank_checked = 0;
};

const sim::ParamTable<Inner>& inner_table() {
  static const sim::ParamTable<Inner> t = [] {
    sim::ParamTable<Inner> p("block", "a block");
    p.integer<std::uint64_t>("a", &Inner::a, "", std::nullopt, sim::at_least(1), "a");
    return p;
  }();
  return t;
}

const sim::ParamTable<Gadget>& gadget_table() {
  static const sim::ParamTable<Gadget> t = [] {
    sim::ParamTable<Gadget> p("gadget", "a test component with every kind of key");
    p.enumeration("shape", &Gadget::shape, shape_names(), Shape::ring, "its shape")
        .list("sizes", &Gadget::sizes, sim::integer_item<std::uint32_t>("chips", sim::between(1, 8)), {1, 3, false},
              nullptr, "sizes")
        .list("wrap", &Gadget::wrap, sim::flag_item(), {0, 3, true}, "no wrap", "wrap flags")
        .then([](const sim::YamlNode& n, Gadget& g) {
          g.rank_checked = g.sizes.size();
          if (g.shape == Shape::ring && g.sizes.size() != 1) n["sizes"].fail("a ring has one size");
        })
        .real("bandwidth", &Gadget::bandwidth, "B/s", "the chip's", sim::positive(), "override")
        .integer<std::uint8_t>("small", &Gadget::small, "", 0, sim::at_least(0), "fits in 8 bits")
        .integer<int>("id", &Gadget::id, "", 0, sim::at_least(0), "an int")
        .integer<std::uint64_t>(
            "a", [](Gadget& g) -> std::uint64_t& { return g.inner.a; }, "", 7, sim::at_least(0), "nested field")
        .optional_group("block", &Gadget::block, inner_table(), "none")
        .custom("note", {"word", "", "none", ""}, "a custom key",
                [](const sim::YamlNode& n, Gadget& g) { g.note = "<" + n.as_string() + ">"; });
    return p;
  }();
  return t;
}

std::string gadget_error(const std::string& yaml) {
  try {
    Gadget g;
    gadget_table().load(sim::YamlNode::load_string(yaml, "g.yaml"), g);
  } catch (const sim::ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("param tables parse enums, lists, optional values, nested fields and custom keys once", "[sim][params]") {
  Gadget g;
  gadget_table().load(
      sim::YamlNode::load_string("shape: torus\nsizes: [2, 4]\nwrap: true\nbandwidth: 5e9\nnote: hi\n", "g.yaml"), g);
  CHECK(g.shape == Shape::torus);
  CHECK(g.sizes == std::vector<std::uint32_t>{2, 4});
  CHECK(g.wrap == std::vector<bool>{true});  // one item stands for a list of one
  REQUIRE(g.bandwidth);
  CHECK(*g.bandwidth == 5e9);
  CHECK(g.inner.a == 7);  // default through an accessor
  CHECK(g.block.a == 0);  // an optional group left out is left alone
  CHECK(g.note == "<hi>");
  CHECK(g.rank_checked == 2);  // the step ran after the keys before it

  Gadget h;
  gadget_table().load(sim::YamlNode::load_string("sizes: [3]\na: 9\nblock: {a: 2}\n", "g.yaml"), h);
  CHECK(h.shape == Shape::ring);
  CHECK_FALSE(h.bandwidth);
  CHECK(h.inner.a == 9);
  CHECK(h.block.a == 2);
  CHECK(h.note.empty());
  CHECK(std::string(shape_names().name(Shape::torus)) == "torus");
}

TEST_CASE("param tables reject what does not fit a field, with the range it has", "[sim][params]") {
  CHECK(gadget_error("sizes: [1]\nsmall: 258\n") ==
        "g.yaml:2:8: small: value 258 is out of range: expected between 0 and 255");
  CHECK(gadget_error("sizes: [1]\nid: 4294967296\n") ==
        "g.yaml:2:5: id: value 4294967296 is out of range: expected between 0 and 2147483647");
  // Beyond 2^53 a double would lose the last digit; integers are read exactly.
  CHECK(gadget_error("sizes: [1]\na: 9007199254740993\n").empty());
  Gadget g;
  gadget_table().load(sim::YamlNode::load_string("sizes: [1]\na: 9007199254740993\n", "g.yaml"), g);
  CHECK(g.inner.a == 9007199254740993ull);
  CHECK(gadget_error("sizes: [1]\na: 18446744073709551616\n") ==
        "g.yaml:2:4: a: value 18446744073709551616 is out of range: expected an integer that fits in 64 bits");
  CHECK(gadget_error("sizes: [1]\na: 1e3\n").empty());  // exponents are whole numbers too
}

TEST_CASE("param tables locate mistakes in enums, lists and steps", "[sim][params]") {
  CHECK(gadget_error("shape: tours\nsizes: [1]\n") ==
        "g.yaml:1:8: shape: unknown shape 'tours'; expected one of: ring (one axis), torus; did you mean 'torus'?");
  CHECK(gadget_error("sizes: 4\n") == "g.yaml:1:8: sizes: expected a list of integer values, got '4'");
  CHECK(gadget_error("sizes: [1, 9]\n") ==
        "g.yaml:1:12: sizes[1]: value 9 is out of range: expected between 1 and 8 chips");
  CHECK(gadget_error("shape: torus\nsizes: [1, 1, 1, 1]\n") ==
        "g.yaml:2:8: sizes: expected between 1 and 3 items, got 4");
  CHECK(gadget_error("sizes: [1, 2]\n") == "g.yaml:1:8: sizes: a ring has one size");
  CHECK(gadget_error("sizes: [1]\nwrap: [true, maybe]\n") ==
        "g.yaml:2:14: wrap[1]: expected true or false, got 'maybe'");
  CHECK(gadget_error("sizes: [1]\nbandwidth: 0\n") ==
        "g.yaml:2:12: bandwidth: value 0 is out of range: expected > 0 B/s");
  CHECK(gadget_error("sizes: [1]\nblock: {}\n") == "g.yaml:2:8: block.a: missing required key (a)");
  CHECK(gadget_error("wrap: true\n") == "g.yaml:1:1: sizes: missing required key (sizes)");
}

TEST_CASE("param tables document every key, enum choices and nested keys included", "[sim][params]") {
  const nlohmann::json d = gadget_table().describe();
  std::vector<std::string> names;
  for (const auto& p : d["params"]) names.push_back(p["name"]);
  CHECK(names == std::vector<std::string>{"shape", "sizes", "wrap", "bandwidth", "small", "id", "a", "block", "note"});
  CHECK(d["params"][0]["type"] == "ring | torus");
  CHECK(d["params"][0]["default"] == "ring");
  CHECK(d["params"][1]["type"] == "list of integer");
  CHECK(d["params"][1]["default"] == "(required)");
  CHECK(d["params"][2]["type"] == "bool or list of bool");
  CHECK(d["params"][3]["default"] == "the chip's");
  CHECK(d["params"][7]["params"][0]["name"] == "a");
  CHECK(sim::above(0, 100).str() == "> 0 and <= 100");
  CHECK(sim::between(0, 1099511627776.0).str() == "between 0 and 1099511627776");
}

TEST_CASE("did_you_mean suggests only close words", "[sim][params]") {
  CHECK(sim::did_you_mean("wrokload", {"workload", "chip"}) == "did you mean 'workload'?");
  CHECK(sim::did_you_mean("q", {"m", "k", "n"}).empty());
  CHECK(sim::did_you_mean("zebra", {"workload", "chip"}).empty());
  // Two letters swapped are one edit.
  CHECK(sim::did_you_mean("tlie", {"tile", "pe"}) == "did you mean 'tile'?");
  CHECK(sim::did_you_mean("strnog", {"strong", "weak", "none"}) == "did you mean 'strong'?");
  // A tie names every candidate instead of picking one.
  CHECK(sim::did_you_mean("torus4d", {"ring", "torus2d", "torus3d"}) == "did you mean 'torus2d' or 'torus3d'?");
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

}  // namespace test_yaml_params
