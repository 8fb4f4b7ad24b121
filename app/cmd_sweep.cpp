// `tpusim sweep SWEEP.yaml`: runs every point of a sweep as its own
// `tpusim run` process (-j at a time, or spread over MPI ranks), then
// writes sweep.csv, summary.json (speedups, efficiency, the Amdahl or
// Gustafson fit) and speedup.png (or, for decode steps, serving.png).
// docs/sweeps.md has the walk-through.
#include <boost/program_options.hpp>

#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <thread>
#include <vector>

#include "app/cli.h"
#include "app/command_line.h"
#include "sim/error.h"
#include "sim/host.h"
#include "sim/output.h"
#include "sweep/mpi.h"
#include "sweep/outputs.h"
#include "sweep/plot.h"
#include "sweep/points.h"
#include "sweep/process.h"
#include "sweep/progress.h"
#include "sweep/runner.h"
#include "sweep/spec.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;
using namespace sweep;

namespace app {

namespace {

struct SweepOptions {
  std::string sweep_path, out_dir;
  int jobs = 0;  // 0: every core of this node, shared by the ranks on it
  bool resume = false, dry_run = false, plot = true;
};

SweepOptions parse_options(const std::vector<std::string>& args, bool& help) {
  po::options_description opts("tpusim sweep SWEEP.yaml");
  SweepOptions o;
  opts.add_options()("help,h", "this text")("out", po::value(&o.out_dir),
                                            "output directory (default runs/<sweep-name>/)")(
      "jobs,j", po::value(&o.jobs), "points run at once (default: every core; under mpirun, per rank)")(
      "resume", po::bool_switch(&o.resume), "keep the points an earlier run of this sweep finished")(
      "dry-run", po::bool_switch(&o.dry_run), "check every point and list them; run nothing")(
      "no-plot", po::bool_switch(), "do not draw the pictures (speedup.png, serving.png, published.png)")(
      "sweep", po::value(&o.sweep_path), "sweep file");
  po::positional_options_description pos;
  pos.add("sweep", 1);
  po::variables_map vm;
  help = !parse_command_line(args, opts, pos, vm);
  if (help) return o;
  if (o.sweep_path.empty()) throw UsageError("sweep needs a sweep file");
  if (vm.count("jobs") && o.jobs < 1) throw UsageError("-j: expected a number of points >= 1");
  o.plot = !vm["no-plot"].as<bool>();
  return o;
}

void print_points(const SweepSpec& spec, const std::vector<SweepPoint>& points) {
  std::cout << "sweep " << spec.name << ": " << points.size() << " points of " << spec.experiment_path << " ("
            << to_string(spec.combine) << ", " << to_string(spec.scaling) << " scaling); all valid\n";
  for (const auto& p : points) {
    std::cout << "  " << p.id << "  " << p.chips << " chip" << (p.chips == 1 ? " " : "s") << "  ";
    for (std::size_t i = 0; i < p.overrides.size(); ++i) std::cout << (i ? " " : "") << "--set " << p.overrides[i];
    std::cout << "\n";
  }
}

// The points an earlier run of this very sweep finished (same overrides,
// same files read, same tpusim: the point's inputs_digest), which --resume keeps.
std::map<std::string, PointRecord> reusable_points(const std::vector<SweepPoint>& points, const std::string& out_dir) {
  std::map<std::string, PointRecord> done;
  for (const auto& p : points) {
    auto r = read_point_record(out_dir, p.id);
    if (r && r->settled() && r->overrides == p.overrides && r->experiment_digest == p.digest) done[p.id] = *r;
  }
  return done;
}

void forget_points(const std::vector<SweepPoint>& points, const std::string& out_dir) {
  for (const auto& p : points) {
    std::error_code ec;
    fs::remove(fs::path(point_dir(out_dir, p.id)) / "point.json", ec);
  }
}

int exit_status(const std::map<std::string, PointRecord>& finished, bool stopped) {
  if (stopped) return 130;
  int ok = 0, simulated_failure = 0, bad_input = 0, crashed = 0;
  for (const auto& [id, r] : finished) {
    if (r.ok)
      ++ok;
    else if (r.exit_code == 3)
      ++simulated_failure;
    else if (r.exit_code == 2)
      ++bad_input;
    else
      ++crashed;
  }
  if (crashed) return 1;
  if (ok) return 0;
  return bad_input ? 2 : simulated_failure ? 3 : 0;
}

std::string fixed_or_dash(const nlohmann::json& v, int decimals) {
  return v.is_number() ? sim::fixed(v.get<double>(), decimals) : "-";
}

bool has_curve(const nlohmann::json& summary) {
  for (const auto& g : summary["groups"])
    if (!g["curve"].empty()) return true;
  return false;
}

// A sweep of decode steps (kind: inference, phase decode or both) whose
// points ran: its picture is step time and tokens/s against batch.
bool decode_sweep(const std::map<std::string, PointRecord>& finished) {
  const nlohmann::json::json_pointer decode("/result/inference/decode");
  std::size_t ok = 0;
  for (const auto& [id, r] : finished) {
    if (!r.ok) continue;
    if (!r.report.contains(decode) || r.report.at(decode).is_null()) return false;
    ++ok;
  }
  return ok >= 2;
}

void print_summary(const nlohmann::json& s, const std::string& out_dir, const std::vector<PlotResult>& plots) {
  const std::string scaling = s["sweep"]["scaling"].get<std::string>();
  sim::Table t("tpusim sweep: " + s["sweep"]["name"].get<std::string>() + " (" +
               (scaling == "none" ? std::string("no scaling law") : scaling + " scaling") + ")");
  const auto& n = s["points"];
  t.row("points ok", std::to_string(n["ok"].get<int>()),
        "of " + std::to_string(n["total"].get<int>()) + " (" + std::to_string(n["failed"].get<int>()) + " failed, " +
            std::to_string(n["not_run"].get<int>()) + " not run)");
  for (const auto& f : s["failures"]) {
    const std::string e = f["error"].get<std::string>();
    t.section(f["id"].get<std::string>() + " (" + std::to_string(f["chips"].get<int>()) +
              " chips) failed: " + e.substr(0, e.find('\n')));
  }
  if (!has_curve(s))  // no speedups (scaling: none, or one chip count): the step times
    for (const auto& r : s["rows"])
      if (r["status"] == "ok") {
        std::string v;
        for (const auto& axis : s["sweep"]["axes"]) {
          const std::string key = axis["key"].get<std::string>();
          v += (v.empty() ? "" : " ") + key + "=" + r["values"][key].get<std::string>();
        }
        t.row(r["id"].get<std::string>(), sim::si(r["step_time_s"].get<double>(), "s"), v);
      }
  const std::size_t curves = s["groups"].size();
  for (std::size_t i = 0; i < curves; ++i) {
    const auto& g = s["groups"][i];
    if (curves > 1) t.section("curve " + std::to_string(i) + ": " + g["values"].dump());
    if (!g["baseline"].is_null()) t.section(g["baseline"]["note"].get<std::string>());
    for (const auto& c : g["curve"])
      t.row(std::to_string(c["chips"].get<int>()) + " chips", sim::fixed(c["speedup"].get<double>(), 2) + "x",
            "efficiency " + sim::fixed(100 * c["efficiency"].get<double>(), 1) + "%, step " +
                sim::si(c["step_time_s"].get<double>(), "s"));
    if (!g["amdahl"].is_null()) {
      const auto& a = g["amdahl"];
      t.row("Amdahl fit p", sim::fixed(a["p"].get<double>(), 4), "R^2 " + fixed_or_dash(a["r2"], 4));
      t.row("asymptotic speedup", fixed_or_dash(a["max_speedup"], 1) + "x", "1 / (1 - p)");
      t.row("efficiency 50% at", fixed_or_dash(a["half_efficiency_chips"], 0), "chips (fit)");
    }
    if (!g["gustafson"].is_null())
      t.row("Gustafson serial share", sim::fixed(g["gustafson"]["serial_fraction"].get<double>(), 4),
            "R^2 " + fixed_or_dash(g["gustafson"]["r2"], 4));
    if (!g["scaling_limit"].is_null()) {
      const auto& l = g["scaling_limit"];
      t.row("best measured", sim::fixed(l["best"]["speedup"].get<double>(), 2) + "x",
            "at " + std::to_string(l["best"]["chips"].get<int>()) + " chips");
      if (l["first_chips_with_efficiency_below_half"].is_number())
        t.row("efficiency < 50% from", fixed_or_dash(l["first_chips_with_efficiency_below_half"], 0),
              "chips (measured)");
    }
  }
  if (!s["published"].is_null()) {
    const auto& p = s["published"];
    const bool mfu = p["metric"] == "mfu";
    auto shown = [&](const nlohmann::json& v) {
      return v.is_number() ? (mfu ? sim::fixed(100 * v.get<double>(), 2) + "%" : sim::si(v.get<double>(), "s")) : "-";
    };
    t.section("published " + p["metric"].get<std::string>() + " (" + p["source"].get<std::string>() + ")");
    for (const auto& q : p["points"])
      t.row(p["axis"].get<std::string>() + "=" + q["value"].get<std::string>(), shown(q["simulated"]),
            "published " + shown(q["published"]) + ", error " +
                (q["error"].is_number() ? sim::fixed(100 * q["error"].get<double>(), 1) + "%" : std::string("-")));
  }
  t.section("table: " + (fs::path(out_dir) / "sweep.csv").string());
  t.section("summary: " + (fs::path(out_dir) / "summary.json").string());
  for (const auto& plot : plots) t.section("plot: " + (plot.drawn ? plot.path : plot.note));
  std::cout << t.str();
}

}  // namespace

int cmd_sweep(const std::vector<std::string>& args) {
  bool help = false;
  SweepOptions o = parse_options(args, help);
  if (help) return 0;
  sim::WallTimer wall;
  const SweepSpec spec = load_sweep_spec(o.sweep_path);
  std::vector<SweepPoint> points = expand_sweep(spec);
  if (o.dry_run) {
    print_points(spec, points);
    return 0;
  }
  const std::string out_dir = o.out_dir.empty() ? (fs::path("runs") / spec.name).string() : o.out_dir;
  prepare_output_dir(out_dir, {"sweep.csv", "summary.json", "speedup.png", "serving.png", "published.png"},
                     o.out_dir.empty() ? "output folder" : "--out");
  // Each point writes below OUT/points/: a link there would take every
  // point's files out of the folder (the output-path policy, sim/output.h).
  if (std::error_code ec; fs::is_symlink(fs::path(out_dir) / "points", ec))
    throw sim::ConfigError({(o.out_dir.empty() ? "output folder " : "--out ") + out_dir, 0, 0}, "",
                           "points in it is a symbolic link; a sweep writes its points only inside its folder");
  const std::string program = file_digest(self_executable());
  for (auto& p : points) p.digest = inputs_digest(p.inputs, program);

  std::unique_ptr<MpiSweep> mpi;
  if (launched_by_mpirun()) {
    if (!mpi_available())
      throw UsageError("started by mpirun, but this tpusim was built without MPI (scripts/setup, then rebuild)");
    mpi = std::make_unique<MpiSweep>();
  }
  const int rank = mpi ? mpi->rank() : 0, ranks = mpi ? mpi->size() : 1;
  const bool root = rank == 0;
  // One sweep writes into a folder at a time (its MPI ranks are one sweep).
  std::optional<OutputLock> lock;
  if (root) lock.emplace(out_dir, o.out_dir.empty() ? "output folder" : "--out");
  // What a killed sweep left (each point's `tpusim run` cleans its own folder).
  if (root) sim::remove_stale_temps(out_dir);

  // Rank 0 decides what is left to run; everyone learns it.
  std::map<std::string, PointRecord> finished;
  std::vector<char> to_run(points.size(), 1);
  if (root) {
    if (o.resume)
      finished = reusable_points(points, out_dir);
    else
      forget_points(points, out_dir);
    for (std::size_t i = 0; i < points.size(); ++i) to_run[i] = finished.count(points[i].id) ? 0 : 1;
  }
  if (mpi) to_run = mpi->broadcast(to_run);
  const std::size_t reused = finished.size();
  std::vector<const SweepPoint*> todo;
  for (std::size_t i = 0; i < points.size(); ++i)
    if (to_run[i]) todo.push_back(&points[i]);
  todo = run_order(todo);
  std::vector<const SweepPoint*> mine;
  for (std::size_t i = 0; i < todo.size(); ++i)
    if (static_cast<int>(i % static_cast<std::size_t>(ranks)) == rank) mine.push_back(todo[i]);

  const int cores = std::max(1u, std::thread::hardware_concurrency());
  const int jobs = o.jobs > 0 ? o.jobs : std::max(1, cores / (mpi ? mpi->ranks_on_this_node() : 1));
  auto execution = [&](bool stopped) {
    return nlohmann::json{{"wall_time_s", wall.seconds()},
                          {"jobs", jobs},
                          {"mpi_ranks", ranks},
                          {"points_run", finished.size() - reused},
                          {"points_reused", reused},
                          {"interrupted", stopped}};
  };

  install_interrupt_handlers();
  SweepProgress progress(points.size(), reused, jobs * ranks);
  sim::WallTimer since_write;
  auto record = [&](PointRecord r, bool remote) {
    if (remote) write_point_record(out_dir, r, true);
    progress.finished(r.id, r.ok, r.wall_time_s, !remote);
    finished[r.id] = std::move(r);
    // The combined outputs follow along (at most once a second); the
    // point files are what an interruption must not lose.
    if (since_write.seconds() >= 1.0) {
      write_sweep_outputs(out_dir, summarize_sweep(spec, points, finished), execution(false));
      since_write = sim::WallTimer();
    }
  };

  RunnerOptions ro;
  ro.out_dir = out_dir;
  ro.experiment_path = spec.experiment_path;
  ro.executable = self_executable();
  ro.jobs = jobs;
  if (root) {
    ro.on_started = [&](const SweepPoint& p) { progress.started(p.id); };
    ro.on_finished = [&](const SweepPoint&, const PointRecord& r) { record(r, false); };
    if (mpi) ro.poll = [&] { mpi->receive([&](PointRecord r) { record(std::move(r), true); }); };
  } else {
    ro.on_finished = [&](const SweepPoint&, const PointRecord& r) { mpi->send_point(r); };
  }
  const RunEnd end = run_points(mine, ro);
  bool stopped = end == RunEnd::interrupted || interrupted();
  if (!root) {
    mpi->send_done();
    return stopped ? 130 : 0;
  }
  if (mpi) {
    while (!stopped && !mpi->receive([&](PointRecord r) { record(std::move(r), true); })) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      stopped = interrupted();
    }
  }
  progress.close();

  const SweepOutputs outputs = summarize_sweep(spec, points, finished);
  write_sweep_outputs(out_dir, outputs, execution(stopped));
  const bool drawing = !stopped && o.plot && spec.plot;
  std::vector<PlotResult> plots(1);
  if (stopped)
    plots[0].note = "not drawn: the sweep was interrupted (rerun with --resume)";
  else if (!drawing)
    plots[0].note = "not drawn (--no-plot or plot: false)";
  else if (has_curve(outputs.summary))
    plots[0] = draw_plot(out_dir, "plot_speedup", "speedup.png");
  else if (decode_sweep(finished))
    plots[0] = draw_plot(out_dir, "plot_serving", "serving.png");
  else
    plots[0].note = "none: no speedup curve (scaling: none, or one chip count ran)";
  const nlohmann::json& published = outputs.summary["published"];
  if (drawing && !published.is_null() && published["compared"].get<int>() > 0)
    plots.push_back(draw_plot(out_dir, "plot_published", "published.png"));
  print_summary(outputs.summary, out_dir, plots);
  if (stopped) std::cerr << "sweep interrupted: finished points are kept; rerun with --resume to run the rest\n";
  return exit_status(finished, stopped);
}

}  // namespace app
