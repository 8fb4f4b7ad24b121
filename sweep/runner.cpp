#include "sweep/runner.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "sim/host.h"
#include "sweep/process.h"

namespace sweep {

namespace fs = std::filesystem;

namespace {

volatile std::sig_atomic_t g_interrupted = 0;

extern "C" void on_interrupt(int) { g_interrupted = 1; }

struct Running {
  const SweepPoint* point;
  sim::WallTimer timer;
};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// What a failed `tpusim run` said: from its first error line on (messages
// such as a deadlock's continue on indented lines), else its last lines.
std::string failure_message(const std::string& log) {
  std::size_t start = std::string::npos;
  for (const char* lead : {"error: ", "simulation failed: ", "internal error: ", "tpusim: "}) {
    const std::string needle = std::string("\n") + lead;
    const std::size_t at = log.rfind(lead, 0) == 0 ? 0 : log.find(needle);
    if (at != std::string::npos) start = std::min(start, at == 0 ? 0 : at + 1);
  }
  std::string msg;
  if (start != std::string::npos) {
    msg = log.substr(start);
  } else {
    std::size_t cut = log.size();
    for (int lines = 0; lines < 7 && cut != std::string::npos && cut > 0; ++lines) cut = log.rfind('\n', cut - 1);
    msg = cut == std::string::npos ? log : log.substr(cut);
  }
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
  while (!msg.empty() && (msg.front() == '\n' || msg.front() == ' ')) msg.erase(msg.begin());
  if (msg.size() > 4000) msg = msg.substr(0, 4000) + " ...";
  return msg;
}

PointRecord record_of(const SweepPoint& p, const RunnerOptions& opts, ChildExit ex, double wall) {
  const fs::path dir = point_dir(opts.out_dir, p.id);
  PointRecord r;
  r.id = p.id;
  r.overrides = p.overrides;
  r.experiment_digest = p.digest;
  r.wall_time_s = wall;
  r.exit_code = ex.exit_code;
  r.signal = ex.signal;
  if (ex.exit_code == 0) {
    try {
      r.report = nlohmann::json::parse(read_file(dir / "report.json"));
      r.ok = true;
    } catch (const nlohmann::json::exception&) {
      r.exit_code = 1;
      r.error = "the point's run ended without a readable report.json";
    }
    return r;
  }
  if (ex.signal != 0) {
    r.error = "the worker was killed by signal " + std::to_string(ex.signal) + " (" + strsignal(ex.signal) + ")";
    return r;
  }
  r.error = failure_message(read_file(dir / "log.txt"));
  if (ex.exit_code == 127 && r.error.empty()) r.error = "could not start " + opts.executable;
  return r;
}

}  // namespace

void install_interrupt_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: waitpid returns EINTR and the loop sees the flag
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool interrupted() { return g_interrupted != 0; }

std::vector<const SweepPoint*> run_order(const std::vector<const SweepPoint*>& points) {
  std::vector<const SweepPoint*> order = points;
  std::stable_sort(order.begin(), order.end(), [](const SweepPoint* a, const SweepPoint* b) {
    return a->chips != b->chips ? a->chips > b->chips : a->index < b->index;
  });
  return order;
}

RunEnd run_points(const std::vector<const SweepPoint*>& todo, const RunnerOptions& opts) {
  std::map<pid_t, Running> running;
  std::size_t next = 0;
  bool stopping = false;
  const int jobs = std::max(1, opts.jobs);
  for (;;) {
    if (interrupted() && !stopping) {
      stopping = true;
      for (const auto& [pid, run] : running) ::kill(pid, SIGTERM);
    }
    while (!stopping && next < todo.size() && static_cast<int>(running.size()) < jobs) {
      const SweepPoint& p = *todo[next++];
      if (opts.still_wanted && !opts.still_wanted(p)) continue;
      const fs::path dir = point_dir(opts.out_dir, p.id);
      fs::create_directories(dir);
      // A stale result must never pass for this run's.
      fs::remove(dir / "point.json");
      fs::remove(dir / "report.json");
      std::vector<std::string> argv = {
          opts.executable, "run", p.experiment.empty() ? opts.experiment_path : p.experiment, "--out", dir.string()};
      for (const auto& o : p.overrides) {
        argv.push_back("--set");
        argv.push_back(o);
      }
      const pid_t pid = spawn_process(argv, (dir / "log.txt").string());
      running.emplace(pid, Running{&p, sim::WallTimer()});
      if (opts.on_started) opts.on_started(p);
    }
    if (running.empty()) break;

    int status = 0;
    pid_t pid;
    if (opts.poll) {
      pid = ::waitpid(-1, &status, WNOHANG);
      if (pid == 0) {
        opts.poll();
        const timespec pause{0, 20 * 1000 * 1000};
        ::nanosleep(&pause, nullptr);
        continue;
      }
    } else {
      pid = ::waitpid(-1, &status, 0);
    }
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;  // ECHILD: nothing left to wait for
    }
    if (interrupted() && !stopping) {
      stopping = true;
      for (const auto& [other, run] : running)
        if (other != pid) ::kill(other, SIGTERM);
    }
    auto it = running.find(pid);
    if (it == running.end()) continue;
    const SweepPoint& p = *it->second.point;
    const double wall = it->second.timer.seconds();
    running.erase(it);
    const ChildExit ex = decode_wait_status(status);
    // Stopped by us (or by the same Ctrl-C): unfinished, not failed.
    if (stopping && ex.exit_code != 0) continue;
    const PointRecord r = record_of(p, opts, ex, wall);
    write_point_record(opts.out_dir, r, false);
    if (opts.on_finished) opts.on_finished(p, r);
  }
  return stopping ? RunEnd::interrupted : RunEnd::completed;
}

}  // namespace sweep
