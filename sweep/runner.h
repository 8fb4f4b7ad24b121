#pragma once
// Runs sweep points as worker processes (`tpusim run BASE --out
// DIR/points/<id> --set ...`, the same binary), at most `jobs` at a time.
// A point is finished when its process has ended and its record
// (point.json) is written; only then does the caller hear of it. A point
// whose worker was stopped because the sweep was interrupted gets no
// record, so --resume runs it again; a worker that failed on its own
// (exit 1/2/3, or killed) is recorded as failed and the others go on.
#include <functional>
#include <string>
#include <vector>

#include "sweep/points.h"
#include "sweep/record.h"

namespace sweep {

struct RunnerOptions {
  std::string out_dir;
  std::string experiment_path;
  std::string executable;  // the tpusim binary
  int jobs = 1;
  std::function<void(const SweepPoint&)> on_started;
  std::function<void(const SweepPoint&, const PointRecord&)> on_finished;  // after the record is written
  // Called about every 20 ms while workers run (MPI rank 0 receives the
  // other ranks' points there); empty: the runner just sleeps in waitpid.
  std::function<void()> poll;
  // Asked just before a point starts; false skips it (no process, no
  // record, no on_finished): tpusim plan stops simulating candidates whose
  // lower bound is above the best step found. Empty: every point runs.
  std::function<bool(const SweepPoint&)> still_wanted;
};

enum class RunEnd { completed, interrupted };

// Runs `todo` in the given order.
RunEnd run_points(const std::vector<const SweepPoint*>& todo, const RunnerOptions& opts);

// SIGINT and SIGTERM then mark the sweep interrupted instead of killing it:
// it stops starting points, stops its workers, and keeps what finished.
void install_interrupt_handlers();
bool interrupted();

// The order points run in: most chips first (they take longest, so the last
// workers to finish are short ones), then by index.
std::vector<const SweepPoint*> run_order(const std::vector<const SweepPoint*>& points);

}  // namespace sweep
