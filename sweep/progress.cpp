#include "sweep/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

namespace sweep {

std::string clock_text(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

SweepProgress::SweepProgress(std::size_t total, std::size_t already_done, int jobs, std::string what)
    : total_(total),
      done_(already_done),
      jobs_(std::max(1, jobs)),
      what_(std::move(what)),
      tty_(::isatty(STDERR_FILENO) != 0) {}

void SweepProgress::skipped() {
  if (total_ > 0) --total_;
  if (tty_) print("");
}

void SweepProgress::started(const std::string&) {
  ++running_;
  if (tty_) print("");
}

void SweepProgress::finished(const std::string& id, bool ok, double wall_time_s, bool here) {
  if (here && running_ > 0) --running_;
  ++done_;
  if (!ok) ++failed_;
  ++timed_;
  work_s_ += wall_time_s;
  print(id + (ok ? " ok" : " FAILED") + " in " + clock_text(wall_time_s));
}

void SweepProgress::print(const std::string& event) {
  const std::size_t left = total_ - std::min(total_, done_);
  std::string eta = "?";
  // Points left x mean point time / workers: rough, as points differ in size.
  if (timed_ > 0) eta = clock_text(double(left) * work_s_ / double(timed_) / double(jobs_));
  if (left == 0) eta = "0:00";
  std::string line = what_ + ": " + std::to_string(done_) + "/" + std::to_string(total_) + " done";
  if (failed_) line += " (" + std::to_string(failed_) + " failed)";
  line += ", " + std::to_string(running_) + " running, elapsed " + clock_text(elapsed_.seconds()) + ", ETA " + eta;
  if (tty_) {
    std::cerr << "\r" << line << "\x1b[K" << std::flush;
  } else if (!event.empty()) {
    std::cerr << line << "  [" << event << "]\n" << std::flush;
  }
}

void SweepProgress::close() {
  if (tty_) std::cerr << "\n" << std::flush;
}

}  // namespace sweep
