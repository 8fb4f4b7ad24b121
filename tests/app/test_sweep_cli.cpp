// `tpusim sweep` end to end, as a user runs it. Each test compares against
// something independent of the sweep machinery: the serial fraction the
// synthetic workload is built with, an uninterrupted run's sweep.csv, the
// single-process outputs for -j 2 and for MPI, and file identities (inodes)
// for "no point simulated twice".
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace test_sweep_cli {

namespace fs = std::filesystem;
using testing_cli::run_tpusim;

namespace {

const std::string kBase = std::string(TPUSIM_SOURCE_DIR) + "/configs/sweeps/amdahl-synthetic.base.yaml";

// This process's scratch folder (ctest runs each test case in its own
// process), removed when the process ends.
fs::path scratch() {
  static const struct Scratch {
    fs::path dir = fs::temp_directory_path() / ("tpusim-test-sweep-cli-" + std::to_string(::getpid()));
    ~Scratch() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } s;
  fs::create_directories(s.dir);
  return s.dir;
}

// A synthetic Amdahl sweep: `units` units, 10% serial, on a line of chips.
std::string amdahl_sweep(const std::string& name, int units, const std::string& chips) {
  const fs::path p = scratch() / (name + ".yaml");
  std::ofstream(p) << "name: " << name << "\nexperiment: " << kBase << "\nscaling: strong\n"
                   << "set: {workload.units: " << units << ", workload.serial_fraction: 0.1}\n"
                   << "sweep:\n  pod.shape: " << chips << "\n";
  return p.string();
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

nlohmann::json summary_without_execution(const fs::path& dir) {
  nlohmann::json s = nlohmann::json::parse(read(dir / "summary.json"));
  s.erase("execution");
  return s;
}

int finished_points(const fs::path& dir) {
  int n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir / "points", ec))
    if (fs::exists(e.path() / "point.json")) ++n;
  return n;
}

// Identity of a file (inode and modification time): a rewrite changes it.
std::pair<ino_t, long> identity(const fs::path& p) {
  struct stat st {};
  ::stat(p.c_str(), &st);
  return {st.st_ino, st.st_mtim.tv_nsec + 1000000000L * st.st_mtim.tv_sec};
}

std::map<std::string, std::pair<ino_t, long>> report_identities(const fs::path& dir) {
  std::map<std::string, std::pair<ino_t, long>> ids;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir / "points", ec))
    if (fs::exists(e.path() / "point.json")) ids[e.path().filename().string()] = identity(e.path() / "report.json");
  return ids;
}

// Starts `tpusim sweep ARGS` in the background; returns its pid.
pid_t start_sweep(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {TPUSIM_BINARY, "sweep"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> c;
  for (auto& a : argv) c.push_back(a.data());
  c.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(TPUSIM_SOURCE_DIR) != 0) ::_exit(126);
    std::FILE* null = std::freopen("/dev/null", "w", stderr);
    (void)null;
    null = std::freopen("/dev/null", "w", stdout);
    ::execv(TPUSIM_BINARY, c.data());
    ::_exit(127);
  }
  return pid;
}

// Polls (not a timing assertion) until `ready` holds or the process ends.
template <class F>
bool wait_until(pid_t pid, F ready) {
  for (int i = 0; i < 6000; ++i) {
    if (ready()) return true;
    int st = 0;
    if (::waitpid(pid, &st, WNOHANG) == pid) return ready();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// A child of `parent` with `word` among its arguments; 0 if none.
pid_t child_running(pid_t parent, const std::string& word) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::istringstream stat(read(e.path() / "stat"));
    std::string pid, comm, state;
    long ppid = 0;
    stat >> pid >> comm >> state >> ppid;
    if (ppid != parent) continue;
    std::string cmd = read(e.path() / "cmdline");
    // Arguments are NUL-separated: match a whole one.
    if (cmd.find(std::string(1, '\0') + word + std::string(1, '\0')) != std::string::npos)
      return static_cast<pid_t>(std::stol(name));
  }
  return 0;
}

}  // namespace

TEST_CASE("sweep recovers a known serial fraction: Amdahl fit, R^2, plot", "[app][sweep]") {
  const fs::path out = scratch() / "amdahl";
  auto r = run_tpusim("sweep " + amdahl_sweep("amdahl", 100, "[[1], [2], [3], [5], [9], [10], [15], [30]]") +
                      " --out " + out.string() + " -j 2");
  INFO(r.output);
  REQUIRE(r.status == 0);
  const auto s = nlohmann::json::parse(read(out / "summary.json"));
  // Built with 10% serial work: p = 0.9 within 0.02, with R^2 reported.
  CHECK(s["amdahl"]["p"].get<double>() == Approx(0.9).margin(0.02));
  CHECK(s["amdahl"]["r2"].get<double>() > 0.99);
  CHECK(s["amdahl"]["r2"].get<double>() <= 1.0);
  CHECK(s["amdahl"]["max_speedup"].get<double>() == Approx(10).margin(0.5));
  CHECK(s["points"]["ok"] == 8);
  for (int i = 0; i < 8; ++i) CHECK(fs::exists(out / "points" / ("p00" + std::to_string(i)) / "report.json"));
  CHECK(r.output.find("Amdahl fit p") != std::string::npos);
  // speedup.png from scripts/plot_speedup (python3-matplotlib, installed by scripts/setup).
  const std::string png = read(out / "speedup.png");
  CHECK(png.substr(0, 8) == std::string("\x89PNG\r\n\x1a\n", 8));
}

TEST_CASE("a sweep with published figures compares them and draws published.png", "[app][sweep]") {
  // Published: the one-chip step of a first run (the same simulation: error 0) and
  // Amdahl's law for 4 chips at 10% serial work, 0.1 + 0.9 / 4 = 0.325 of it.
  const fs::path base = scratch() / "published-base", out = scratch() / "published";
  REQUIRE(run_tpusim("sweep " + amdahl_sweep("published-base", 100, "[[1]]") + " --no-plot --out " + base.string())
              .status == 0);
  const double t1 = nlohmann::json::parse(read(base / "summary.json"))["rows"][0]["step_time_s"];
  const fs::path file = scratch() / "published.yaml";
  std::ofstream(file) << std::setprecision(17) << "name: published\nexperiment: " << kBase
                      << "\nscaling: strong\nset: {workload.units: 100, workload.serial_fraction: 0.1}\n"
                      << "sweep:\n  pod.shape: [[1], [4]]\n"
                      << "published: {metric: step_time_s, source: Amdahl's law, points: {'[1]': " << t1
                      << ", '[4]': " << 0.325 * t1 << "}}\n";
  auto r = run_tpusim("sweep " + file.string() + " --out " + out.string() + " -j 2");
  INFO(r.output);
  REQUIRE(r.status == 0);
  const auto s = nlohmann::json::parse(read(out / "summary.json"));
  const auto& p = s["published"];
  REQUIRE(p["compared"] == 2);
  CHECK(p["points"][0]["error"].get<double>() == Approx(0).margin(1e-12));
  const double t4 = s["rows"][1]["step_time_s"];
  CHECK(p["points"][1]["id"] == "p001");
  CHECK(p["points"][1]["error"].get<double>() == Approx(t4 / (0.325 * t1) - 1).margin(1e-12));
  CHECK(r.output.find("published step_time_s (Amdahl's law)") != std::string::npos);
  const std::string png = read(out / "published.png");
  CHECK(png.substr(0, 8) == std::string("\x89PNG\r\n\x1a\n", 8));
}

TEST_CASE("a batch sweep of decode steps draws serving.png, not speedup.png", "[app][sweep][inference]") {
  // The tutorial's decode step (chapter 11) at three batches on one v5e.
  const fs::path p = scratch() / "decode.yaml", out = scratch() / "decode";
  std::ofstream(p) << "name: decode\nexperiment: " << TPUSIM_SOURCE_DIR
                   << "/configs/tutorial/ch11-decode.yaml\nscaling: none\nsweep:\n  workload.batch: [1, 64, 512]\n";
  const auto r = run_tpusim("sweep " + p.string() + " -j 2 --out " + out.string());
  REQUIRE(r.status == 0);
  CHECK(r.output.find("serving.png") != std::string::npos);
  CHECK(!fs::exists(out / "speedup.png"));
  // scripts/plot_serving (python3-matplotlib, installed by scripts/setup).
  CHECK(read(out / "serving.png").substr(0, 8) == std::string("\x89PNG\r\n\x1a\n", 8));
}

TEST_CASE("sweep -j 2 writes what -j 1 writes", "[app][sweep]") {
  const std::string sweep = amdahl_sweep("jobs", 40, "[[1], [2], [4], [5]]");
  const fs::path one = scratch() / "j1", two = scratch() / "j2";
  REQUIRE(run_tpusim("sweep " + sweep + " --no-plot -j 1 --out " + one.string()).status == 0);
  REQUIRE(run_tpusim("sweep " + sweep + " --no-plot -j 2 --out " + two.string()).status == 0);
  CHECK(read(one / "sweep.csv") == read(two / "sweep.csv"));
  CHECK(summary_without_execution(one) == summary_without_execution(two));
}

TEST_CASE("a killed sweep resumes to the uninterrupted result, simulating no point twice", "[app][sweep]") {
  const std::string sweep = amdahl_sweep("resume", 30000, "[[1], [2], [3], [5], [6], [10]]");
  const fs::path full = scratch() / "full", cut = scratch() / "cut";
  REQUIRE(run_tpusim("sweep " + sweep + " --no-plot -j 1 --out " + full.string()).status == 0);

  const pid_t pid = start_sweep({sweep, "--no-plot", "-j", "1", "--out", cut.string()});
  // 30,000 units make a point ~0.1 s, ten polls: the kill lands midway.
  REQUIRE(wait_until(pid, [&] { return finished_points(cut) >= 2; }));
  ::kill(pid, SIGSTOP);  // no new point starts; the running one dies with it
  if (const pid_t worker = child_running(pid, "run")) ::kill(worker, SIGKILL);
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  const int before = finished_points(cut);
  REQUIRE(before < 6);  // killed midway
  const auto kept = report_identities(cut);

  auto r = run_tpusim("sweep " + sweep + " --no-plot -j 1 --resume --out " + cut.string());
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(read(cut / "sweep.csv") == read(full / "sweep.csv"));
  CHECK(summary_without_execution(cut) == summary_without_execution(full));
  // The points finished before the kill were not simulated again.
  for (const auto& [id, ident] : kept) CHECK(identity(cut / "points" / id / "report.json") == ident);
  const auto s = nlohmann::json::parse(read(cut / "summary.json"));
  CHECK(s["execution"]["points_reused"] == before);
  CHECK(s["execution"]["points_run"] == 6 - before);
}

TEST_CASE("a killed worker fails its point only, and --resume reruns just that one", "[app][sweep]") {
  const std::string sweep = amdahl_sweep("worker", 30000, "[[1], [2], [3], [5]]");
  const fs::path full = scratch() / "wfull", dir = scratch() / "wkill";
  REQUIRE(run_tpusim("sweep " + sweep + " --no-plot -j 1 --out " + full.string()).status == 0);

  const pid_t pid = start_sweep({sweep, "--no-plot", "-j", "1", "--out", dir.string()});
  pid_t worker = 0;
  REQUIRE(wait_until(pid, [&] { return finished_points(dir) >= 1 && (worker = child_running(pid, "run")) != 0; }));
  ::kill(worker, SIGKILL);
  int st = 0;
  ::waitpid(pid, &st, 0);
  CHECK(WEXITSTATUS(st) == 1);  // a point crashed
  const auto s = nlohmann::json::parse(read(dir / "summary.json"));
  CHECK(s["points"]["ok"] == 3);
  REQUIRE(s["failures"].size() == 1);
  CHECK(s["failures"][0]["signal"] == 9);
  CHECK(s["failures"][0]["error"].get<std::string>().find("killed by signal 9") != std::string::npos);
  CHECK(read(dir / "sweep.csv").find("killed by signal 9") != std::string::npos);

  const auto kept = report_identities(dir);
  REQUIRE(run_tpusim("sweep " + sweep + " --no-plot -j 1 --resume --out " + dir.string()).status == 0);
  CHECK(read(dir / "sweep.csv") == read(full / "sweep.csv"));
  for (const auto& [id, ident] : kept)
    if (id != s["failures"][0]["id"]) CHECK(identity(dir / "points" / id / "report.json") == ident);
}

TEST_CASE("a point that does not fit is recorded and speedups move to the smallest that fits", "[app][sweep]") {
  // 48 GiB of state: more than one v4 chip's 32 GiB of HBM, fine on two.
  const fs::path p = scratch() / "nofit.yaml";
  std::ofstream(p) << "name: nofit\nexperiment: " << kBase << "\n"
                   << "set: {workload.units: 20, workload.state_bytes: 51539607552}\n"
                   << "sweep:\n  pod.shape: [[1], [2], [4]]\n";
  const fs::path out = scratch() / "nofit";
  auto r = run_tpusim("sweep " + p.string() + " --no-plot -j 2 --out " + out.string());
  INFO(r.output);
  CHECK(r.status == 0);
  const std::string csv = read(out / "sweep.csv");
  CHECK(csv.find("p000,[1],1,failed,") != std::string::npos);
  CHECK(csv.find(",3,simulation failed: does not fit") != std::string::npos);
  const auto s = nlohmann::json::parse(read(out / "summary.json"));
  CHECK(s["baseline"]["chips"] == 2);
  CHECK(s["baseline"]["note"].get<std::string>().find("1 chip (p000) failed: exit 3") != std::string::npos);
  CHECK(s["rows"][1]["speedup"] == 1.0);
  CHECK(r.output.find("speedups are against 2 chips") != std::string::npos);
}

TEST_CASE("bad sweep input: exit 2, located, nothing written", "[app][sweep][bad-input]") {
  const fs::path p = scratch() / "bad.yaml";
  std::ofstream(p) << "experiment: " << kBase << "\ncombine: zip\nsweep:\n  pod.shape: [[1], [2]]\n"
                   << "  workload.units: [10, 20, 30]\n";
  const fs::path out = scratch() / "bad-out";
  auto r = run_tpusim("sweep " + p.string() + " --out " + out.string());
  CHECK(r.status == 2);
  CHECK(r.output.find(p.string() + ":5:3: sweep.workload.units: combine: zip needs lists of equal length") !=
        std::string::npos);
  CHECK(r.output.find("terminate") == std::string::npos);
  CHECK_FALSE(fs::exists(out));

  CHECK(run_tpusim("sweep").status == 2);
  CHECK(run_tpusim("sweep " + p.string() + " -j 0").status == 2);
  CHECK(run_tpusim("sweep no/such/sweep.yaml").status == 2);
}

TEST_CASE("sweep --dry-run checks and lists every point", "[app][sweep]") {
  auto r = run_tpusim("sweep configs/sweeps/dp-v4-strong.yaml --dry-run");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("13 points") != std::string::npos);
  CHECK(r.output.find("p012  4096 chips") != std::string::npos);
  CHECK(r.output.find("--set mesh.data=4096") != std::string::npos);
  // Issue 15's sweep: MaxText 16B on 1 to 32 v5e-256 slices, 6 sequences
  // per chip (weak scaling), every point a valid experiment.
  auto slices = run_tpusim("sweep configs/sweeps/maxtext-16b-v5e-slices.yaml --dry-run");
  INFO(slices.output);
  CHECK(slices.status == 0);
  CHECK(slices.output.find("6 points") != std::string::npos);
  CHECK(slices.output.find("all valid") != std::string::npos);
  CHECK(slices.output.find("p000  256 chips  --set pod.slices=1 --set workload.global_batch=1536") !=
        std::string::npos);
  CHECK(slices.output.find("p005  8192 chips  --set pod.slices=32 --set workload.global_batch=49152") !=
        std::string::npos);
}

TEST_CASE("sweep under mpirun -np 2 writes what one process writes", "[app][sweep][mpi]") {
  if (std::system("command -v mpirun >/dev/null 2>&1") != 0)
    FAIL("mpirun not found: scripts/setup installs openmpi-bin");
  const std::string sweep = amdahl_sweep("mpi", 40, "[[1], [2], [3], [4], [5]]");
  const fs::path one = scratch() / "single", many = scratch() / "mpi";
  REQUIRE(run_tpusim("sweep " + sweep + " --no-plot -j 1 --out " + one.string()).status == 0);
  const std::string cmd = std::string("cd ") + TPUSIM_SOURCE_DIR + " && mpirun --oversubscribe " +
                          (::geteuid() == 0 ? "--allow-run-as-root " : "") + "-np 2 " + TPUSIM_BINARY + " sweep " +
                          sweep + " --no-plot -j 1 --out " + many.string() + " < /dev/null > " +
                          (scratch() / "mpi.log").string() + " 2>&1";
  const int status = std::system(cmd.c_str());
  INFO(read(scratch() / "mpi.log"));
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  CHECK(read(many / "sweep.csv") == read(one / "sweep.csv"));
  CHECK(summary_without_execution(many) == summary_without_execution(one));
  const auto s = nlohmann::json::parse(read(many / "summary.json"));
  CHECK(s["execution"]["mpi_ranks"] == 2);
}

TEST_CASE("sweep --resume reruns a point whose report.json is not a report", "[app][sweep]") {
  // A `{}` report.json beside an ok point.json was reused as the point's result.
  const std::string sweep = amdahl_sweep("resume-empty", 40, "[[1], [2], [4]]");
  const fs::path dir = scratch() / "empty-report";
  REQUIRE(run_tpusim("sweep " + sweep + " --no-plot -j 1 --out " + dir.string()).status == 0);
  const std::string csv = read(dir / "sweep.csv");
  std::ofstream(dir / "points" / "p001" / "report.json") << "{}\n";
  auto r = run_tpusim("sweep " + sweep + " --no-plot -j 1 --resume --out " + dir.string());
  INFO(r.output);
  REQUIRE(r.status == 0);
  const auto s = nlohmann::json::parse(read(dir / "summary.json"));
  CHECK(s["execution"]["points_reused"] == 2);
  CHECK(s["execution"]["points_run"] == 1);
  CHECK(read(dir / "sweep.csv") == csv);
  CHECK(nlohmann::json::parse(read(dir / "points" / "p001" / "report.json"))["schema"] == "tpusim.report/1");
}

TEST_CASE("a second sweep into a folder one is writing stops with exit 2", "[app][sweep]") {
  // Two sweeps into one --out corrupted each other's points (7 of 8 tries).
  const std::string sweep = amdahl_sweep("lock", 300, "[[1], [2], [3], [5]]");
  const fs::path dir = scratch() / "locked";
  const pid_t first = start_sweep({sweep, "--no-plot", "-j", "1", "--out", dir.string()});
  REQUIRE(wait_until(first, [&] { return fs::exists(dir / ".tpusim-lock") && child_running(first, "run") != 0; }));
  // Held still while the second one tries: on a fast machine the first
  // finished its four points before the second started (CI, 2026-12-01).
  REQUIRE(::kill(first, SIGSTOP) == 0);
  auto second = run_tpusim("sweep " + sweep + " --no-plot -j 1 --out " + dir.string());
  REQUIRE(::kill(first, SIGCONT) == 0);
  INFO(second.output);
  CHECK(second.status == 2);
  CHECK(second.output.find("error: --out " + dir.string() + ": another sweep is writing into this folder") !=
        std::string::npos);
  int st = 0;
  ::waitpid(first, &st, 0);
  CHECK(WEXITSTATUS(st) == 0);  // the first one finished undisturbed
  const auto s = nlohmann::json::parse(read(dir / "summary.json"));
  CHECK(s["points"]["ok"] == 4);
  // The lock ends with the sweep: a third one runs.
  CHECK(run_tpusim("sweep " + sweep + " --no-plot -j 1 --resume --out " + dir.string()).status == 0);
}

TEST_CASE("sweep --resume reruns the points whose chip file changed", "[app][sweep]") {
  // The record's digest covered the base experiment's text only: an edited
  // chip file the experiment names left every point reused, stale.
  const fs::path dir = scratch() / "digest";
  fs::create_directories(dir);
  std::ofstream(dir / "my-chip.yaml") << read(fs::path(TPUSIM_SOURCE_DIR) / "configs/chips/tpu-v4.yaml");
  std::string base = read(kBase);
  const std::size_t at = base.find("\nchip: ");
  REQUIRE(at != std::string::npos);
  base.replace(at, base.find('\n', at + 1) - at, "\nchip: my-chip");
  std::ofstream(dir / "base.yaml") << base;
  std::ofstream(dir / "sweep.yaml") << "name: digest\nexperiment: base.yaml\nscaling: strong\n"
                                    << "set: {workload.units: 40, workload.serial_fraction: 0.1}\n"
                                    << "sweep:\n  pod.shape: [[1], [2]]\n";
  const std::string out = (dir / "out").string();
  const std::string cmd = "sweep " + (dir / "sweep.yaml").string() + " --no-plot -j 1 --out " + out;
  REQUIRE(run_tpusim(cmd).status == 0);
  auto again = run_tpusim(cmd + " --resume");
  REQUIRE(again.status == 0);
  CHECK(nlohmann::json::parse(read(dir / "out" / "summary.json"))["execution"]["points_reused"] == 2);
  // The chip's clock halves: every point must run again.
  std::string chip = read(dir / "my-chip.yaml");
  const std::size_t clock = chip.find("\nclock: ");
  REQUIRE(clock != std::string::npos);
  chip.replace(clock, chip.find('\n', clock + 1) - clock, "\nclock: 0.525e9");
  std::ofstream(dir / "my-chip.yaml") << chip;
  auto changed = run_tpusim(cmd + " --resume");
  INFO(changed.output);
  REQUIRE(changed.status == 0);
  const auto s = nlohmann::json::parse(read(dir / "out" / "summary.json"));
  CHECK(s["execution"]["points_reused"] == 0);
  CHECK(s["execution"]["points_run"] == 2);
  // The report names what it read and the overrides it ran with.
  const auto rep = nlohmann::json::parse(read(dir / "out" / "points" / "p001" / "report.json"));
  CHECK(rep["experiment"]["inputs"].size() == 2);
  CHECK(rep["experiment"]["inputs"][1].get<std::string>().find("my-chip.yaml") != std::string::npos);
  CHECK(rep["experiment"]["overrides"] ==
        nlohmann::json::array({"workload.units=40", "workload.serial_fraction=0.1", "pod.shape=[2]"}));
}

}  // namespace test_sweep_cli
