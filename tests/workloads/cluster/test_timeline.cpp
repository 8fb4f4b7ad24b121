// The shared fabric's timeline (workloads/cluster/timeline.h) on hand-made
// steps, against max-min fair shares worked by hand: one link of 1 byte per
// picosecond (1e12 B/s), flows with the caps their phases had alone.
#include <catch2/catch.hpp>

#include <vector>

#include "workloads/cluster/timeline.h"

namespace test_timeline {

using namespace workloads::cluster;

namespace {

const std::vector<FabricLink> kOneLink = {{"l", 1e12}};

// A step of `step` ps with one DCN phase at `start` of `time` ps moving
// `bytes` over link 0.
TimelineJob one_phase(Ps step, Ps start, Ps time, std::uint64_t bytes, std::uint32_t steps = 1, Ps at = 0) {
  TimelineJob j;
  j.start = at;
  j.steps = steps;
  j.step = step;
  j.phases.push_back({start, time, {{bytes, {0}}}});
  return j;
}

}  // namespace

TEST_CASE("cluster timeline: a job alone with its cap under the link runs exactly as its step", "[cluster]") {
  // 1000 B in 4000 ps is 0.25 B/ps, under the link's 1 B/ps.
  const TimelineRun r = run_timeline(kOneLink, {one_phase(10000, 2000, 4000, 1000, 3, 500)});
  REQUIRE(r.jobs[0].steps.size() == 3);
  for (std::size_t k = 0; k < 3; ++k) {
    CHECK(r.jobs[0].steps[k].first == 500 + 10000 * k);
    CHECK(r.jobs[0].steps[k].second == 500 + 10000 * (k + 1));
  }
  CHECK(r.end == 30500);
  CHECK(r.links[0].bytes() == 3000);
}

TEST_CASE("cluster timeline: two equal flows on one link get half of it each", "[cluster]") {
  // Alone each moves 4000 B in 2000 ps (2 B/ps, capped by the link at 1):
  // alone on the link 4000 ps; together 0.5 B/ps each, 8000 ps.
  const TimelineRun alone = run_timeline(kOneLink, {one_phase(3000, 1000, 2000, 4000)});
  CHECK(alone.jobs[0].phases.at(0).end - alone.jobs[0].phases[0].start == 4000);
  CHECK(alone.jobs[0].steps[0].second == 3000 + 2000);  // the step, 2000 ps later
  const TimelineRun both =
      run_timeline(kOneLink, {one_phase(3000, 1000, 2000, 4000), one_phase(3000, 1000, 2000, 4000)});
  for (const JobRun& j : both.jobs) {
    CHECK(j.phases.at(0).start == 1000);
    CHECK(j.phases[0].end == 9000);
    CHECK(j.steps[0].second == 3000 + 6000);
  }
  CHECK(both.links[0].bytes_by_job == std::vector<double>{4000, 4000});
  // The link's rate: 1 B/ps from 1000 ps (two flows of 0.5) to 9000, then nothing.
  REQUIRE(both.links[0].rate.size() == 2);
  CHECK(both.links[0].rate[0] == std::pair<Ps, double>{1000, 1e12});
  CHECK(both.links[0].rate[1] == std::pair<Ps, double>{9000, 0.0});
}

TEST_CASE("cluster timeline: a flow capped under its fair share leaves the rest to the other", "[cluster]") {
  // A: 1000 B in 4000 ps (0.25 B/ps), under half the link; B: 3000 B in
  // 1000 ps (3 B/ps). Max-min: A keeps 0.25, B takes 0.75: 4000 ps for
  // both; B's step is 3000 ps later than alone.
  const TimelineRun r = run_timeline(kOneLink, {one_phase(5000, 0, 4000, 1000), one_phase(2000, 0, 1000, 3000)});
  CHECK(r.jobs[0].phases.at(0).end == 4000);
  CHECK(r.jobs[0].steps[0].second == 5000);
  CHECK(r.jobs[1].phases.at(0).end == 4000);
  // Alone on the link B takes 3000 ps (1 B/ps); together 4000: 1000 ps
  // more than alone on the link, 3000 more than its step's 1000.
  CHECK(r.jobs[1].steps[0].second == 2000 + 3000);
}

TEST_CASE("cluster timeline: a late start shares only the overlap", "[cluster]") {
  // Both: 4000 B, alone at the link's 1 B/ps. B starts 2000 ps later. A
  // alone until 2000 (2000 B moved), then 0.5 each: A's last 2000 B end at
  // 6000; B has moved 2000 by then, its last 2000 at 1 B/ps end at 8000.
  const TimelineRun r =
      run_timeline(kOneLink, {one_phase(4000, 0, 1000, 4000), one_phase(4000, 0, 1000, 4000, 1, 2000)});
  CHECK(r.jobs[0].phases.at(0).end == 6000);
  CHECK(r.jobs[1].phases.at(0).start == 2000);
  CHECK(r.jobs[1].phases[0].end == 8000);
  CHECK(r.end == 8000 + 3000);  // B's step: 1000 ps of phase alone, 6000 in company
}

TEST_CASE("cluster timeline: a stretched phase delays the rest of its step and the next step", "[cluster]") {
  // A: steps of 10000 ps, phases at 1000 (1000 ps, 1000 B) and 5000 (1000
  // ps, 1000 B). B: one phase at 0 of 2000 B in 1000 ps. Both at 1 B/ps
  // alone. Together from 1000: 0.5 each; B has 1000 B left at 1000, A
  // needs 1000: both end at 3000 (A's phase 2000 ps, 1000 late). A's second
  // phase starts at 6000, ends 7000; its step ends at 11000, the next at
  // 21000.
  TimelineJob a = one_phase(10000, 1000, 1000, 1000, 2);
  a.phases.push_back({5000, 1000, {{1000, {0}}}});
  const TimelineRun r = run_timeline(kOneLink, {a, one_phase(2000, 0, 1000, 2000)});
  REQUIRE(r.jobs[0].phases.size() == 4);
  CHECK(r.jobs[0].phases[0].end == 3000);
  CHECK(r.jobs[0].phases[1].start == 6000);
  CHECK(r.jobs[0].steps[0].second == 11000);
  CHECK(r.jobs[0].steps[1].first == 11000);
  CHECK(r.jobs[0].steps[1].second == 21000);
  CHECK(r.jobs[1].phases.at(0).end == 3000);
}

TEST_CASE("cluster timeline: flows over no shared link run as alone", "[cluster]") {
  TimelineJob a = one_phase(3000, 1000, 2000, 4000), b = a;
  a.phases[0].flows[0].links.clear();
  b.phases[0].flows[0].links.clear();
  const TimelineRun r = run_timeline(kOneLink, {a, b});
  for (const JobRun& j : r.jobs) CHECK(j.steps.at(0).second == 3000);
  CHECK(r.links[0].bytes() == 0);
}

TEST_CASE("cluster timeline: a queue's late transfer delays the next only past the gap between them", "[cluster]") {
  // A: transfers at 0 and 1500 ps, each 1000 B in 1000 ps (1 B/ps, the
  // link). B: 1000 B at 0 in 1000 ps. Together 0.5 B/ps each: A's first
  // and B end at 2000. As a queue, A's second starts at max(1500, 2000) =
  // 2000 and ends 3000; as a step, it would start 1000 ps late, at 2500.
  TimelineJob a = one_phase(2500, 0, 1000, 1000);
  a.phases.push_back({1500, 1000, {{1000, {0}}}});
  a.queue = true;
  const TimelineJob b = one_phase(1000, 0, 1000, 1000);
  TimelineRun r = run_timeline(kOneLink, {a, b});
  REQUIRE(r.jobs[0].phases.size() == 2);
  CHECK(r.jobs[0].phases[0].end == 2000);
  CHECK(r.jobs[0].phases[1].start == 2000);
  CHECK(r.jobs[0].phases[1].end == 3000);
  CHECK(r.jobs[0].steps[0].second == 3000);  // its last transfer's end: the queue's end alone (2500) + 500
  a.queue = false;
  r = run_timeline(kOneLink, {a, b});
  CHECK(r.jobs[0].phases.at(1).start == 2500);
  // A queue whose transfers are not slowed runs as alone.
  a.queue = true;
  r = run_timeline(kOneLink, {a});
  CHECK(r.jobs[0].phases.at(1).start == 1500);
  CHECK(r.jobs[0].steps[0].second == 2500);
}

TEST_CASE("cluster timeline: the link is shared per connection, not per flow", "[cluster]") {
  // A: 1200 B over 3 connections (400 B each, each capped at 400 B / 1000
  // ps); B: 1200 B over one (capped at 1.2 B/ps). Four connections on the
  // 1 B/ps link: 0.25 each, A 0.75 in all, B 0.25. A's parts end at 1600
  // ps; B has 800 B left then, at the link's 1 B/ps: ends at 2400. With one
  // connection each, 0.5 each: both end at 2400.
  TimelineJob a = one_phase(1000, 0, 1000, 1200), b = a;
  a.phases[0].flows[0].connections = 3;
  TimelineRun r = run_timeline(kOneLink, {a, b});
  CHECK(r.jobs[0].phases.at(0).end == 1600);
  CHECK(r.jobs[1].phases.at(0).end == 2400);
  CHECK(r.links[0].bytes_by_job == std::vector<double>{1200, 1200});
  a.phases[0].flows[0].connections = 1;
  r = run_timeline(kOneLink, {a, b});
  CHECK(r.jobs[0].phases.at(0).end == 2400);
  CHECK(r.jobs[1].phases.at(0).end == 2400);
}

}  // namespace test_timeline
