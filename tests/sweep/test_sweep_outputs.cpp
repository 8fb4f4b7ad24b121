// sweep.csv and summary.json from hand-made point results: speedups and
// efficiencies worked out here by hand, the baseline moving when one chip
// does not fit, curves of a product, weak scaling, and the rows of points
// that failed or never ran.
#include <catch2/catch.hpp>

#include <sstream>

#include "sweep/outputs.h"

namespace test_sweep_outputs {

using namespace sweep;

namespace {

SweepSpec spec_of(std::vector<SweepAxis> axes, Scaling scaling = Scaling::strong) {
  SweepSpec s;
  s.name = "t";
  s.path = "t.yaml";
  s.experiment_path = "base.yaml";
  s.scaling = scaling;
  s.axes = std::move(axes);
  return s;
}

SweepAxis axis(const std::string& key, std::vector<std::string> values) {
  SweepAxis a{key, {}};
  for (auto& v : values) a.values.push_back({v, {}});
  return a;
}

SweepPoint point(std::size_t i, std::vector<std::string> values, std::uint32_t chips) {
  SweepPoint p;
  p.index = i;
  p.id = "p00" + std::to_string(i);
  p.values = std::move(values);
  p.chips = chips;
  return p;
}

PointRecord ok(const std::string& id, double step) {
  PointRecord r;
  r.id = id;
  r.ok = true;
  r.report = {{"result", {{"step_time_s", step}, {"mfu", 0.5}, {"roofline", {{"bound", "compute"}}}}}};
  return r;
}

PointRecord failed(const std::string& id, int exit_code, const std::string& error) {
  PointRecord r;
  r.id = id;
  r.exit_code = exit_code;
  r.error = error;
  return r;
}

std::vector<std::string> csv_lines(const std::string& csv) {
  std::vector<std::string> lines;
  std::istringstream in(csv);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

}  // namespace

TEST_CASE("strong scaling: speedup T(1)/T(N), efficiency S/N, Amdahl fit", "[workloads][sweep]") {
  // T(N) = 0.1 + 0.9 / N: p = 0.9 exactly.
  auto spec = spec_of({axis("pod.shape", {"[1]", "[2]", "[4]", "[8]"})});
  std::vector<SweepPoint> pts = {point(0, {"[1]"}, 1), point(1, {"[2]"}, 2), point(2, {"[4]"}, 4),
                                 point(3, {"[8]"}, 8)};
  std::map<std::string, PointRecord> done = {
      {"p000", ok("p000", 1.0)}, {"p001", ok("p001", 0.55)}, {"p002", ok("p002", 0.325)}, {"p003", ok("p003", 0.2125)}};
  auto out = summarize_sweep(spec, pts, done);
  const auto& s = out.summary;
  CHECK(s["schema"] == "tpusim.sweep/1");
  CHECK(s["points"]["ok"] == 4);
  CHECK(s["baseline"]["chips"] == 1);
  CHECK(s["rows"][1]["speedup"].get<double>() == Approx(1 / 0.55));
  CHECK(s["rows"][3]["speedup"].get<double>() == Approx(1 / 0.2125));
  CHECK(s["rows"][3]["efficiency"].get<double>() == Approx(1 / 0.2125 / 8));
  CHECK(s["amdahl"]["p"].get<double>() == Approx(0.9).margin(1e-6));
  CHECK(s["amdahl"]["r2"].get<double>() == Approx(1.0).margin(1e-9));
  CHECK(s["amdahl"]["max_speedup"].get<double>() == Approx(10).epsilon(1e-5));
  CHECK(s["gustafson"].is_null());
  CHECK(s["scaling_limit"]["best"]["chips"] == 8);
  // Efficiency: 1, 0.909, 0.769, 0.588: never below one half here.
  CHECK(s["scaling_limit"]["first_chips_with_efficiency_below_half"].is_null());
  CHECK(s["scaling_limit"]["last_chips_with_efficiency_at_least_half"] == 8);

  auto lines = csv_lines(out.csv);
  REQUIRE(lines.size() == 5);
  CHECK(lines[0].rfind("id,pod.shape,chips,status,step_time_s,speedup,efficiency,", 0) == 0);
  CHECK(lines[2].rfind("p001,[2],2,ok,0.55,", 0) == 0);
  CHECK(lines[4].find(",compute,") != std::string::npos);
}

TEST_CASE("one chip does not fit: speedups against the smallest count that ran", "[workloads][sweep]") {
  auto spec = spec_of({axis("pod.shape", {"[1]", "[2]", "[4]", "[8]"})});
  std::vector<SweepPoint> pts = {point(0, {"[1]"}, 1), point(1, {"[2]"}, 2), point(2, {"[4]"}, 4),
                                 point(3, {"[8]"}, 8)};
  std::map<std::string, PointRecord> done = {
      {"p000", failed("p000", 3, "simulation failed: does not fit: 48 GiB, but 32 GiB of HBM")},
      {"p001", ok("p001", 0.8)},
      {"p002", ok("p002", 0.5)}};  // p003 never ran
  auto out = summarize_sweep(spec, pts, done);
  const auto& s = out.summary;
  CHECK(s["baseline"]["chips"] == 2);
  const std::string note = s["baseline"]["note"];
  CHECK(note.find("1 chip (p000) failed: exit 3: simulation failed: does not fit") != std::string::npos);
  CHECK(note.find("speedups are against 2 chips (p001)") != std::string::npos);
  CHECK(s["rows"][2]["speedup"].get<double>() == Approx(0.8 / 0.5));
  CHECK(s["rows"][2]["efficiency"].get<double>() == Approx(0.8 / 0.5 / 2));
  CHECK(s["rows"][0]["status"] == "failed");
  CHECK(s["rows"][3]["status"] == "not_run");
  CHECK(s["points"]["failed"] == 1);
  CHECK(s["points"]["not_run"] == 1);
  REQUIRE(s["failures"].size() == 1);
  CHECK(s["failures"][0]["exit_code"] == 3);

  auto lines = csv_lines(out.csv);
  // The failure's message holds a comma: quoted.
  CHECK(lines[1] ==
        "p000,[1],1,failed,,,,,,,,,,,,,,,,,,3,\"simulation failed: does not fit: 48 GiB, but 32 GiB of HBM\"");
  CHECK(lines[4] == "p003,[8],8,not_run,,,,,,,,,,,,,,,,,,,");
}

TEST_CASE("a product of chips and another axis gives one curve per value", "[workloads][sweep]") {
  auto spec = spec_of({axis("workload.m", {"1024", "2048"}), axis("pod.shape", {"[1]", "[2]"})});
  std::vector<SweepPoint> pts = {point(0, {"1024", "[1]"}, 1), point(1, {"1024", "[2]"}, 2),
                                 point(2, {"2048", "[1]"}, 1), point(3, {"2048", "[2]"}, 2)};
  std::map<std::string, PointRecord> done = {
      {"p000", ok("p000", 1.0)}, {"p001", ok("p001", 0.8)}, {"p002", ok("p002", 4.0)}, {"p003", ok("p003", 2.0)}};
  auto s = summarize_sweep(spec, pts, done).summary;
  REQUIRE(s["groups"].size() == 2);
  CHECK(s["groups"][0]["values"] == nlohmann::json{{"workload.m", "1024"}});
  CHECK(s["groups"][1]["values"] == nlohmann::json{{"workload.m", "2048"}});
  CHECK(s["rows"][1]["speedup"].get<double>() == Approx(1.25));
  CHECK(s["rows"][3]["speedup"].get<double>() == Approx(2.0));
  CHECK(s["amdahl"].is_null());  // two curves: each has its own
  CHECK(s["groups"][1]["amdahl"]["p"].get<double>() == Approx(1.0).margin(1e-6));
}

TEST_CASE("weak scaling: scaled speedup (N/N0) T(N0)/T(N), Gustafson fit", "[workloads][sweep]") {
  auto spec = spec_of({axis("pod.shape", {"[1]", "[2]", "[4]"})}, Scaling::weak);
  std::vector<SweepPoint> pts = {point(0, {"[1]"}, 1), point(1, {"[2]"}, 2), point(2, {"[4]"}, 4)};
  // Serial share s = 0.2 of a scaled run's time: S(N) = 0.2 + 0.8 N, so T(N) = N / S(N) (T(1) = 1).
  auto t = [](double n) { return n / (0.2 + 0.8 * n); };
  std::map<std::string, PointRecord> done = {
      {"p000", ok("p000", t(1))}, {"p001", ok("p001", t(2))}, {"p002", ok("p002", t(4))}};
  auto s = summarize_sweep(spec, pts, done).summary;
  CHECK(s["rows"][2]["speedup"].get<double>() == Approx(0.2 + 0.8 * 4));
  CHECK(s["rows"][2]["efficiency"].get<double>() == Approx(1 / t(4)));
  CHECK(s["amdahl"].is_null());
  CHECK(s["gustafson"]["serial_fraction"].get<double>() == Approx(0.2).margin(1e-6));
}

TEST_CASE("scaling none and a single chip count give no speedups", "[workloads][sweep]") {
  auto spec = spec_of({axis("workload.parallelism.microbatches", {"1", "8"})}, Scaling::none);
  std::vector<SweepPoint> pts = {point(0, {"1"}, 4), point(1, {"8"}, 4)};
  std::map<std::string, PointRecord> done = {{"p000", ok("p000", 2.0)}, {"p001", ok("p001", 1.0)}};
  auto out = summarize_sweep(spec, pts, done);
  CHECK(out.summary["baseline"].is_null());
  CHECK(out.summary["rows"][1]["speedup"].is_null());
  CHECK(csv_lines(out.csv)[2].rfind("p001,8,4,ok,1.0,,,", 0) == 0);
}

TEST_CASE("published figures beside the simulated ones: error = simulated / published - 1", "[workloads][sweep]") {
  auto spec = spec_of({axis("pod.slices", {"1", "2", "4"})}, Scaling::weak);
  spec.published.metric = PublishedMetric::mfu;
  spec.published.source = "a table";
  // 2 is not published; 4 failed. ok() reports an MFU of 0.5.
  spec.published.points = {{"4", 0.45, {}}, {"1", 0.4, {}}};
  std::vector<SweepPoint> pts = {point(0, {"1"}, 256), point(1, {"2"}, 512), point(2, {"4"}, 1024)};
  std::map<std::string, PointRecord> done = {
      {"p000", ok("p000", 2.0)}, {"p001", ok("p001", 2.0)}, {"p002", failed("p002", 3, "does not fit")}};
  const auto p = summarize_sweep(spec, pts, done).summary["published"];
  CHECK(p["metric"] == "mfu");
  CHECK(p["source"] == "a table");
  CHECK(p["axis"] == "pod.slices");
  REQUIRE(p["points"].size() == 2);
  CHECK(p["points"][0]["value"] == "4");
  CHECK(p["points"][0]["id"] == "p002");
  CHECK(p["points"][0]["simulated"].is_null());
  CHECK(p["points"][0]["error"].is_null());
  CHECK(p["points"][1]["id"] == "p000");
  CHECK(p["points"][1]["published"] == 0.4);
  CHECK(p["points"][1]["simulated"] == 0.5);
  CHECK(p["points"][1]["error"].get<double>() == Approx(0.25));  // 0.5 / 0.4 - 1
  CHECK(p["compared"] == 1);
  CHECK(p["worst_abs_error"].get<double>() == Approx(0.25));
  CHECK(p["signed_mean_error"].get<double>() == Approx(0.25));

  // The step time, and a sweep without published figures.
  spec.published.metric = PublishedMetric::step_time_s;
  spec.published.points = {{"1", 2.5, {}}, {"2", 1.6, {}}};
  const auto q = summarize_sweep(spec, pts, done).summary["published"];
  CHECK(q["points"][0]["error"].get<double>() == Approx(-0.2));  // 2 / 2.5 - 1
  CHECK(q["points"][1]["error"].get<double>() == Approx(0.25));  // 2 / 1.6 - 1
  CHECK(q["worst_abs_error"].get<double>() == Approx(0.25));
  CHECK(q["signed_mean_error"].get<double>() == Approx(0.025));
  spec.published.points.clear();
  CHECK(summarize_sweep(spec, pts, done).summary["published"].is_null());
}
}  // namespace test_sweep_outputs
