#pragma once
// The sweep's progress line on stderr: points done (and failed), running,
// elapsed time and an ETA from the mean wall time of the points finished so
// far. On a terminal it redraws one line; otherwise it prints a line per
// finished point (logs, CI).
#include <cstddef>
#include <string>
#include <utility>

#include "sim/host.h"

namespace sweep {

class SweepProgress {
 public:
  // `already_done`: points finished by an earlier run (--resume).
  // `what` starts the line ("sweep", "plan").
  SweepProgress(std::size_t total, std::size_t already_done, int jobs, std::string what = "sweep");
  void started(const std::string& id);
  // `here`: run by this process's workers (not another MPI rank's).
  void finished(const std::string& id, bool ok, double wall_time_s, bool here);
  // A point that will not run after all (tpusim plan's pruned candidates):
  // it leaves the total.
  void skipped();
  void close();  // ends a redrawn line

 private:
  void print(const std::string& event);
  std::size_t total_, done_, failed_ = 0, running_ = 0, timed_ = 0;
  double work_s_ = 0;  // wall time of the points finished in this run
  int jobs_;
  std::string what_;
  bool tty_;
  sim::WallTimer elapsed_;
};

// 75 -> "1:15", 3725 -> "1:02:05".
std::string clock_text(double seconds);

}  // namespace sweep
