// Collective simulation speed: wall time, events and peak memory of large
// all-reduces (issue #3 acceptance). Each case runs in a child process so its
// peak RSS is its own. Usage: bench_collectives [scaling|ring|torus|all]
// (default all); scripts/bench calls this. `bench_collectives formulas`
// prints simulated times next to the cost formulas (docs/interconnect.md).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "interconnect/run_collective.h"

using namespace interconnect;

extern "C" int sc_main(int, char**) { return 0; }

namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

struct Case {
  std::string name;
  PodNetworkConfig pod;
  CollectiveSpec spec;
};

struct Outcome {  // sent from the child through a pipe
  double sim_time_s;
  double wall_s;
  std::uint64_t messages;
  std::uint64_t events;
  int chips;
  int ok;
};

// Issue #3: 1 GiB ring all-reduce, 50 GB/s links, 500 ns per hop.
Case ring_case(int chips) {
  Case c;
  c.name = "ring-" + std::to_string(chips);
  c.pod.topology = TopologyKind::ring;
  c.pod.shape = {chips};
  c.pod.link.bandwidth = 50e9;
  c.pod.link.latency = 500e-9;
  c.spec.op = CollectiveOp::all_reduce;
  c.spec.algorithm = Algorithm::ring;
  c.spec.bytes = kGiB;
  return c;
}

// Issue #3: the 4096-chip v4 pod (docs/reference/tpu-specs.md#v4.pod 16x16x16) with v4
// links (v4.ici.bw_per_link_one_way 4.5e10 B/s, common.ici_hop_latency 1 us).
Case torus_case(int side) {
  Case c;
  c.name = "torus-" + std::to_string(side) + "^3";
  c.pod.topology = TopologyKind::torus3d;
  c.pod.shape = {side, side, side};
  c.pod.wraparound = {true, true, true};
  c.spec.op = CollectiveOp::all_reduce;
  c.spec.algorithm = Algorithm::torus;
  c.spec.bytes = kGiB;
  return c;
}

Outcome run_case(const Case& c) {
  Outcome o{};
  const auto t0 = std::chrono::steady_clock::now();
  const CollectiveResult r = run_collective(c.pod, c.spec);
  const auto t1 = std::chrono::steady_clock::now();
  o.sim_time_s = r.time_s;
  o.wall_s = std::chrono::duration<double>(t1 - t0).count();
  o.messages = r.messages;
  o.events = r.events + r.kernel_events;
  o.chips = r.chips;
  o.ok = 1;
  return o;
}

void run_in_child(const Case& c) {
  int fd[2];
  if (pipe(fd) != 0) {
    std::perror("pipe");
    return;
  }
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    Outcome o{};
    try {
      o = run_case(c);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s\n", c.name.c_str(), e.what());
    }
    const ssize_t w = write(fd[1], &o, sizeof o);
    _exit(w == static_cast<ssize_t>(sizeof o) ? 0 : 1);
  }
  close(fd[1]);
  Outcome o{};
  const ssize_t got = read(fd[0], &o, sizeof o);
  close(fd[0]);
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  if (got != static_cast<ssize_t>(sizeof o) || !o.ok) {
    std::printf("%-12s failed\n", c.name.c_str());
    return;
  }
  const double rss_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB
  std::printf("%-12s %6d %-10s %6.0f %10.4f %10llu %9.3f %12llu %10.2f %9.0f %9.1f\n", c.name.c_str(), o.chips,
              to_string(c.spec.algorithm), static_cast<double>(c.spec.bytes) / (1 << 20), o.sim_time_s * 1e3,
              static_cast<unsigned long long>(o.messages), o.wall_s, static_cast<unsigned long long>(o.events),
              static_cast<double>(o.events) / o.wall_s / 1e6, o.wall_s / static_cast<double>(o.messages) * 1e9,
              rss_mib);
  std::fflush(stdout);
}

// Simulated time against the formulas of docs/reference/formulas.md
// plus the latency each step pays; v4 links (4.5e10 B/s, 1 us per hop).
void print_formulas() {
  constexpr double W = 4.5e10, L = 1e-6;
  constexpr std::uint64_t MiB = 1 << 20;
  auto pod = [&](TopologyKind kind, std::vector<int> shape, std::vector<bool> wrap) {
    PodNetworkConfig p;
    p.topology = kind;
    p.shape = std::move(shape);
    p.wraparound = std::move(wrap);
    p.link.bandwidth = W;
    p.link.latency = L;
    return p;
  };
  auto spec = [](CollectiveOp op, Algorithm a, std::uint64_t bytes) {
    CollectiveSpec s;
    s.op = op;
    s.algorithm = a;
    s.bytes = bytes;
    return s;
  };
  std::printf("%-44s %12s %12s %8s\n", "case", "simulated_us", "formula_us", "error_%");
  auto row = [](const std::string& name, double sim, double formula) {
    std::printf("%-44s %12.2f %12.2f %8.3f\n", name.c_str(), sim * 1e6, formula * 1e6, (sim - formula) / formula * 100);
  };
  for (int n : {4, 8, 16, 64}) {
    const auto p = pod(TopologyKind::ring, {n}, {true});
    const double S = 64.0 * MiB;
    const std::string tag = " ring n=" + std::to_string(n) + " 64MiB";
    row("all_reduce" + tag, run_collective(p, spec(CollectiveOp::all_reduce, Algorithm::ring, 64 * MiB)).time_s,
        2.0 * (n - 1) / n * S / W + 2.0 * (n - 1) * L);
    row("all_gather" + tag, run_collective(p, spec(CollectiveOp::all_gather, Algorithm::ring, 64 * MiB)).time_s,
        (n - 1.0) / n * S / W + (n - 1) * L);
    row("reduce_scatter" + tag, run_collective(p, spec(CollectiveOp::reduce_scatter, Algorithm::ring, 64 * MiB)).time_s,
        (n - 1.0) / n * S / W + (n - 1) * L);
  }
  {
    const int n = 64;
    const double S = 64 * 1024;
    row("all_reduce ring n=64 64KiB (latency-bound)",
        run_collective(pod(TopologyKind::ring, {n}, {true}), spec(CollectiveOp::all_reduce, Algorithm::ring, 64 * 1024))
            .time_s,
        2.0 * (n - 1) / n * S / W + 2.0 * (n - 1) * L);
  }
  {
    const int n = 16;
    const double S = 64.0 * MiB;
    const auto p = pod(TopologyKind::ring, {n}, {true});
    row("all_reduce bidirectional_ring n=16 64MiB",
        run_collective(p, spec(CollectiveOp::all_reduce, Algorithm::bidirectional_ring, 64 * MiB)).time_s,
        2.0 * (n - 1) / n * S / (2 * W) + 2.0 * (n - 1) * L);
    row("all_gather torus(bidi) n=16 wrap 64MiB",
        run_collective(p, spec(CollectiveOp::all_gather, Algorithm::torus, 64 * MiB)).time_s,
        (n - 1.0) / n * S / (2 * W) + (n - 1) * L);
    row("all_gather torus(line) n=16 no wrap 64MiB",
        run_collective(pod(TopologyKind::ring, {n}, {false}),
                       spec(CollectiveOp::all_gather, Algorithm::torus, 64 * MiB))
            .time_s,
        (n - 1.0) * (S / n) / W + (n - 1) * L);
  }
  {
    const double V = 96.0 * MiB;
    double bw = 0.0, left = V / 3;
    for (int axis = 0; axis < 3; ++axis) {
      bw += left * 3.0 / 4.0 / (2 * W);
      left /= 4;
    }
    const auto p = pod(TopologyKind::torus3d, {4, 4, 4}, {true, true, true});
    row("all_reduce torus 4x4x4 96MiB",
        run_collective(p, spec(CollectiveOp::all_reduce, Algorithm::torus, 96 * MiB)).time_s, 2 * bw + 2 * 9 * L);
    row("all_reduce ring 4x4x4 96MiB (2(n-1)/n V/W)",
        run_collective(p, spec(CollectiveOp::all_reduce, Algorithm::ring, 96 * MiB)).time_s,
        2.0 * 63 / 64 * V / W + 2.0 * 63 * L);
  }
  {
    const double V = 16.0 * MiB;
    row("all_to_all direct 4x4 torus 16MiB (SB)",
        run_collective(pod(TopologyKind::torus2d, {4, 4}, {true, true}),
                       spec(CollectiveOp::all_to_all, Algorithm::direct, 16 * MiB))
            .time_s,
        16 * V * 4 / (4 * 16 * 2 * W));
    // Uniform on a k1 x k2 x k3 torus: direct at the bisection bound
    // k_max V / (8 W); dimension-ordered one ring all-to-all per axis,
    // sum_d k_d V / (8 W) (docs/interconnect.md); hops 2 + 2 + 2 either way.
    const auto p = pod(TopologyKind::torus3d, {4, 4, 4}, {true, true, true});
    row("all_to_all direct 4x4x4 16MiB (bisection)",
        run_collective(p, spec(CollectiveOp::all_to_all, Algorithm::direct, 16 * MiB)).time_s, 4 * V / (8 * W) + 6 * L);
    row("all_to_all dimension_ordered 4x4x4 16MiB",
        run_collective(p, spec(CollectiveOp::all_to_all, Algorithm::dimension_ordered, 16 * MiB)).time_s,
        3 * (4 * V / (8 * W) + 2 * L));
  }
  {
    const int n = 16, m = 64;
    const double V = 64.0 * MiB;
    CollectiveSpec s = spec(CollectiveOp::broadcast, Algorithm::ring, 64 * MiB);
    s.pipeline_chunks = m;
    row("broadcast ring chain n=16 m=64 64MiB", run_collective(pod(TopologyKind::ring, {n}, {true}), s).time_s,
        (m + n - 2.0) * V / (m * W) + (n - 1) * L);
  }

  // The fluid model against the packet-by-packet reference (1 KiB packets).
  std::printf("\n%-44s %12s %12s %8s %10s %10s\n", "case (fluid vs packet, 1 KiB packets)", "fluid_us", "packet_us",
              "diff_%", "fluid_ev", "packet_ev");
  auto compare = [&](const std::string& name, PodNetworkConfig p, const CollectiveSpec& s) {
    p.link.packet_bytes = 1024;
    p.model = NetworkModel::fluid;
    const auto f = run_collective(p, s);
    p.model = NetworkModel::packet;
    const auto q = run_collective(p, s);
    std::printf("%-44s %12.2f %12.2f %8.3f %10llu %10llu\n", name.c_str(), f.time_s * 1e6, q.time_s * 1e6,
                (f.time_s - q.time_s) / q.time_s * 100, static_cast<unsigned long long>(f.events),
                static_cast<unsigned long long>(q.events));
  };
  compare("all_reduce ring n=8 8MiB", pod(TopologyKind::ring, {8}, {true}),
          spec(CollectiveOp::all_reduce, Algorithm::ring, 8 * MiB));
  compare("all_reduce torus 3x4 (y mesh) 6MiB", pod(TopologyKind::torus2d, {3, 4}, {true, false}),
          spec(CollectiveOp::all_reduce, Algorithm::torus, 6 * MiB));
  compare("all_gather torus 4x4x4 16MiB", pod(TopologyKind::torus3d, {4, 4, 4}, {true, true, true}),
          spec(CollectiveOp::all_gather, Algorithm::torus, 16 * MiB));
  compare("all_to_all direct 4x4 torus 4MiB", pod(TopologyKind::torus2d, {4, 4}, {true, true}),
          spec(CollectiveOp::all_to_all, Algorithm::direct, 4 * MiB));
  for (Algorithm a : {Algorithm::direct, Algorithm::dimension_ordered}) {
    compare(std::string("all_to_all ") + to_string(a) + " 4x4x4 4MiB",
            pod(TopologyKind::torus3d, {4, 4, 4}, {true, true, true}), spec(CollectiveOp::all_to_all, a, 4 * MiB));
  }
  compare("broadcast bidirectional_ring n=8 8MiB", pod(TopologyKind::ring, {8}, {true}),
          spec(CollectiveOp::broadcast, Algorithm::bidirectional_ring, 8 * MiB));
}

}  // namespace

int main(int argc, char** argv) {
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1);
  const std::string which = argc > 1 ? argv[1] : "all";
  if (which == "formulas") {
    print_formulas();
    return 0;
  }
  if (which != "all" && which != "scaling" && which != "ring" && which != "torus") {
    std::fprintf(stderr, "usage: %s [scaling|ring|torus|all|formulas]\n", argv[0]);
    return 2;
  }
  std::vector<Case> cases;
  if (which == "all" || which == "scaling") {
    for (int chips : {64, 128, 256, 512}) cases.push_back(ring_case(chips));
    for (int side : {4, 8}) cases.push_back(torus_case(side));
  }
  if (which == "all" || which == "ring" || which == "scaling") cases.push_back(ring_case(1024));
  if (which == "all" || which == "torus") cases.push_back(torus_case(16));
  std::printf("%-12s %6s %-10s %6s %10s %10s %9s %12s %10s %9s %9s\n", "case", "chips", "algorithm", "MiB", "sim_ms",
              "messages", "wall_s", "events", "Mevents/s", "ns/msg", "rss_MiB");
  for (const Case& c : cases) run_in_child(c);
  return 0;
}
