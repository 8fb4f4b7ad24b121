#include "workloads/cluster/timeline.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "sim/fluid_share.h"

namespace workloads::cluster {

namespace {

constexpr Ps kNever = std::numeric_limits<Ps>::max();
constexpr double kPsPerS = 1e12;

// Where a job is: in which step, how late that step runs against the job
// alone, and which phase comes next (or runs).
struct JobState {
  std::uint32_t step = 0;
  Ps step_start = 0;
  Ps delay = 0;
  std::size_t next = 0;  // next phase of the step
  bool in_phase = false;
  Ps phase_start = 0;
  std::size_t flows_left = 0;
  bool done = false;
};

struct FlowOwner {
  std::size_t job = 0;
  const PhaseFlow* flow = nullptr;
  Ps due = kNever;
  bool live = false;
  double bytes = 0;  // its connection's part of the flow's bytes
};

class Timeline {
 public:
  Timeline(const std::vector<FabricLink>& links, const std::vector<TimelineJob>& jobs) : jobs_(jobs) {
    for (const auto& l : links) share_.add_resource(l.bytes_per_s / kPsPerS);
    run_.jobs.resize(jobs.size());
    run_.links.resize(links.size());
    for (auto& l : run_.links) l.bytes_by_job.assign(jobs.size(), 0.0);
    state_.resize(jobs.size());
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      state_[j].step_start = jobs[j].start;
      state_[j].done = jobs[j].steps == 0;
    }
  }

  TimelineRun run() {
    for (;;) {
      const Ps now = next_event();
      if (now == kNever) break;
      finish_flows(now);
      for (std::size_t j = 0; j < jobs_.size(); ++j) advance(j, now);
      settle(now);
    }
    for (const auto& j : run_.jobs)
      if (!j.steps.empty()) run_.end = std::max(run_.end, j.steps.back().second);
    return std::move(run_);
  }

 private:
  // When job j next does something on its own (a phase starts, a step ends).
  Ps job_event(std::size_t j) const {
    const JobState& s = state_[j];
    if (s.done || s.in_phase) return kNever;
    const TimelineJob& job = jobs_[j];
    const Ps base = s.step_start + s.delay;
    return s.next < job.phases.size() ? base + job.phases[s.next].start : base + job.step;
  }

  Ps next_event() const {
    Ps t = kNever;
    for (std::size_t j = 0; j < jobs_.size(); ++j) t = std::min(t, job_event(j));
    for (const auto& f : owners_)
      if (f.live) t = std::min(t, f.due);
    return t;
  }

  void finish_flows(Ps now) {
    for (std::uint32_t id = 0; id < owners_.size(); ++id) {
      FlowOwner& f = owners_[id];
      if (!f.live || f.due != now) continue;
      share_.finish(id, now);
      changed_ = true;
      f.live = false;
      for (const std::uint32_t l : f.flow->links) run_.links[l].bytes_by_job[f.job] += f.bytes;
      JobState& s = state_[f.job];
      if (--s.flows_left > 0) continue;
      // The phase is over: what it took beyond its time alone delays the rest of the step.
      const TimelineJob& job = jobs_[f.job];
      const Phase& phase = job.phases[s.next];
      const Ps took = now - s.phase_start;
      if (job.queue) {
        const Ps next_at = s.step_start + (s.next + 1 < job.phases.size() ? job.phases[s.next + 1].start : job.step);
        s.delay = now > next_at ? now - next_at : 0;
      } else {
        s.delay += took > phase.time ? took - phase.time : 0;
      }
      run_.jobs[f.job].phases.push_back({s.step, static_cast<std::uint32_t>(s.next), s.phase_start, now});
      s.in_phase = false;
      ++s.next;
    }
  }

  void advance(std::size_t j, Ps now) {
    JobState& s = state_[j];
    const TimelineJob& job = jobs_[j];
    while (job_event(j) == now) {
      if (s.next < job.phases.size()) {
        start_phase(j, now);
        continue;
      }
      run_.jobs[j].steps.emplace_back(s.step_start, now);
      if (++s.step == job.steps) {
        s.done = true;
        return;
      }
      s.step_start = now;
      s.delay = 0;
      s.next = 0;
    }
  }

  void start_phase(std::size_t j, Ps now) {
    JobState& s = state_[j];
    const Phase& phase = jobs_[j].phases[s.next];
    s.in_phase = true;
    s.phase_start = now;
    s.flows_left = 0;
    if (phase.flows.empty()) throw std::logic_error("a DCN phase without flows");
    for (const PhaseFlow& pf : phase.flows) {
      std::vector<sim::FluidShare::Use> uses;
      for (const std::uint32_t l : pf.links) uses.push_back({l, 1.0});
      // Each connection carries an equal part; alone, it moved its part in
      // the phase's time: no faster here.
      const std::uint32_t n = std::max<std::uint32_t>(1, pf.connections);
      const double bytes = double(pf.bytes) / n, cap = bytes / double(phase.time);
      for (std::uint32_t k = 0; k < n; ++k) {
        const std::uint32_t id = share_.start(now, bytes, uses, cap);
        if (id >= owners_.size()) owners_.resize(id + 1);
        owners_[id] = {j, &pf, kNever, true, bytes};
        ++s.flows_left;
      }
      changed_ = true;
    }
  }

  // After flows started or ended (a flow over no shared link leaves the
  // solver nothing dirty but still needs its rate).
  void settle(Ps now) {
    if (!changed_) return;
    changed_ = false;
    for (const std::uint32_t id : share_.settle(now)) {
      FlowOwner& f = owners_[id];
      if (!f.live) continue;
      const double rate = share_.rate(id);
      if (rate <= 0) throw std::logic_error("a DCN flow with no rate");
      // Ticks to go, less what rounding of bytes over a rate adds (a flow
      // alone at its cap ends exactly its phase's time later).
      const double ticks = share_.remaining_at(id, now) / rate;
      f.due = now + static_cast<Ps>(std::max(0.0, std::ceil(ticks - 1e-6 - ticks * 1e-12)));
    }
    for (std::uint32_t l = 0; l < run_.links.size(); ++l) {
      double rate = 0;
      for (const std::uint32_t id : share_.flows_on(l)) rate += share_.rate(id);
      auto& series = run_.links[l].rate;
      const double bytes_per_s = rate * kPsPerS;
      if (!series.empty() && series.back().first == now) series.pop_back();
      if (series.empty() || series.back().second != bytes_per_s) series.emplace_back(now, bytes_per_s);
    }
  }

  const std::vector<TimelineJob>& jobs_;
  sim::FluidShare share_;
  std::vector<JobState> state_;
  std::vector<FlowOwner> owners_;  // by FluidShare flow id
  bool changed_ = false;
  TimelineRun run_;
};

}  // namespace

Ps to_ps(double s) { return static_cast<Ps>(std::llround(std::max(0.0, s) * kPsPerS)); }

double LinkRun::bytes() const {
  double b = 0;
  for (const double x : bytes_by_job) b += x;
  return b;
}

TimelineRun run_timeline(const std::vector<FabricLink>& links, const std::vector<TimelineJob>& jobs) {
  return Timeline(links, jobs).run();
}

}  // namespace workloads::cluster
