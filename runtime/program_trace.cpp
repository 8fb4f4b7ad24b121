#include "runtime/program_trace.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <variant>

namespace runtime {

namespace {
// Tracks sort by engine kind, then instance.
std::uint32_t track_id(const hw::EngineRef& e) { return static_cast<std::uint32_t>(e.kind) * 1000 + e.index; }

// What an op puts on the ICI: a send's message, a collective's payload
// (interconnect::CollectiveSpec::bytes); nullopt for any other op.
std::optional<double> ici_bytes(const hw::Op& op, const std::vector<interconnect::CollectiveSpec>* collectives) {
  if (const auto* s = std::get_if<hw::SendOp>(&op.payload)) return double(s->bytes);
  if (const auto* c = std::get_if<hw::CommOp>(&op.payload); c && collectives && c->collective < collectives->size())
    return double((*collectives)[c->collective].bytes);
  return std::nullopt;
}
}  // namespace

std::vector<sim::TraceArg> op_energy_args(const hw::Op& op, const hw::EnergyParams& energy,
                                          const std::vector<interconnect::CollectiveSpec>* collectives) {
  std::vector<sim::TraceArg> args;
  // Every slice says what it moved and computed: a send's and a
  // collective's bytes are the chip's part of the message or the payload
  // (interconnect::CollectiveSpec::bytes), not HBM traffic.
  if (const std::optional<double> bytes = ici_bytes(op, collectives)) args.push_back({"bytes", *bytes});
  if (op.flops > 0) args.push_back({"flops", op.flops});
  const hw::OpWork w = hw::op_work(op);
  if (!w.any()) return args;
  args.insert(args.end(), {{"macs", w.macs},
                           {"vmem_bytes", w.vmem_bytes},
                           {"hbm_bytes", w.hbm_bytes},
                           {"energy_j", energy.total_j(w.macs, w.vmem_bytes, w.hbm_bytes)}});
  return args;
}

std::string represented_note(std::uint32_t chip, const std::vector<std::uint32_t>& representative) {
  const std::uint32_t rep = representative.at(chip);
  if (rep != chip) return "replica of chip" + std::to_string(rep);
  const auto n = std::count(representative.begin(), representative.end(), chip);
  return "represents " + std::to_string(n) + (n == 1 ? " chip" : " chips");
}

std::vector<std::size_t> trace_program(sim::TraceWriter& trace, std::uint32_t chip, const hw::Program& program,
                                       const std::vector<hw::OpTiming>& timings, const hw::EnergyParams& energy,
                                       const std::vector<std::uint32_t>& representative,
                                       const std::vector<interconnect::CollectiveSpec>* collectives,
                                       double hbm_bytes_per_s) {
  // A chip that stands for itself alone keeps its plain name.
  const bool alone =
      representative.at(chip) == chip && std::count(representative.begin(), representative.end(), chip) == 1;
  trace.name_process(
      chip, "chip" + std::to_string(chip) + (alone ? "" : " (" + represented_note(chip, representative) + ")"));
  std::set<std::uint32_t> named;
  std::vector<std::size_t> events(program.ops.size());
  for (std::size_t i = 0; i < program.ops.size(); ++i) {
    const hw::Op& op = program.ops[i];
    const std::uint32_t tid = track_id(op.engine);
    if (named.insert(tid).second)
      trace.name_track(chip, tid, std::string(hw::engine_kind_name(op.engine.kind)) + std::to_string(op.engine.index));
    events[i] = trace.op(chip, tid, op.name, timings[i].start_ps, timings[i].end_ps,
                         hw::engine_kind_name(op.engine.kind), op_energy_args(op, energy, collectives));
  }
  trace_counters(trace, chip, program, timings, collectives, hbm_bytes_per_s);
  return events;
}

void trace_counters(sim::TraceWriter& trace, std::uint32_t chip, const hw::Program& program,
                    const std::vector<hw::OpTiming>& timings,
                    const std::vector<interconnect::CollectiveSpec>* collectives, double hbm_bytes_per_s) {
  // Each op moves its bytes evenly over its duration (the chip keeps no
  // per-interval record); a counter is the sum over the ops running, one
  // sample where that sum changes: two per op, not per byte or packet.
  std::vector<std::pair<std::uint64_t, double>> hbm, ici;  // (time, rate change)
  for (std::size_t i = 0; i < program.ops.size(); ++i) {
    const hw::Op& op = program.ops[i];
    const std::uint64_t start = timings[i].start_ps, end = timings[i].end_ps;
    if (end <= start) continue;
    const double seconds = double(end - start) * 1e-12;
    const auto add = [&](std::vector<std::pair<std::uint64_t, double>>& to, double bytes) {
      if (bytes <= 0) return;
      to.emplace_back(start, bytes / seconds);
      to.emplace_back(end, -bytes / seconds);
    };
    add(hbm, hw::op_work(op).hbm_bytes);
    add(ici, ici_bytes(op, collectives).value_or(0));
  }
  const auto write = [&](std::vector<std::pair<std::uint64_t, double>>& changes, const char* name, double peak) {
    std::sort(changes.begin(), changes.end());
    double level = 0;
    for (std::size_t k = 0; k < changes.size(); ++k) {
      level += changes[k].second;
      if (k + 1 < changes.size() && changes[k + 1].first == changes[k].first) continue;
      // Sums of the same rates added and taken away: round-off, not a negative rate.
      trace.counter(chip, name, changes[k].first, std::min(peak, std::max(0.0, level)));
    }
  };
  // Spread evenly, overlapping ops can sum past the peak where the chip
  // served them one after the other: the HBM counter is clipped at it.
  write(hbm, "HBM bandwidth in use (B/s)", hbm_bytes_per_s);
  write(ici, "ICI bandwidth in use (B/s)", std::numeric_limits<double>::infinity());
}

std::uint64_t trace_bin_ps(const sim::TraceRequest& request,
                           const std::vector<const std::vector<hw::OpTiming>*>& timings,
                           const std::vector<PodRunResult::LinkRates>& links) {
  double events = 0;
  std::uint64_t span = 0;
  for (const std::vector<hw::OpTiming>* t : timings) {
    events += 3.0 * double(t->size());
    for (const hw::OpTiming& o : *t) span = std::max(span, o.end_ps);
  }
  for (const PodRunResult::LinkRates& l : links) events += double(l.rate.size());
  return sim::TraceWriter::aggregate_bin_ps(request, events, span);
}

void trace_link_rates(sim::TraceWriter& trace, const std::vector<PodRunResult::LinkRates>& links) {
  for (const PodRunResult::LinkRates& l : links)
    for (const auto& [at, bytes_per_s] : l.rate)
      trace.counter(l.chip, "ICI link " + l.name + " utilization", at, bytes_per_s / l.bytes_per_s);
}

void trace_messages(sim::TraceWriter& trace, const PodProgram& pod, const std::vector<std::uint32_t>& chips,
                    const std::vector<std::uint32_t>& representative,
                    const std::vector<std::vector<std::size_t>>& events,
                    const std::vector<const std::vector<hw::OpTiming>*>& timings) {
  // A collective ends on no chip before its last chip joins: an arrow from
  // the written chip that joined it last (its op's start) to the op on each
  // other written chip (its end).
  std::map<std::uint32_t, std::vector<std::pair<std::size_t, std::size_t>>> joined;  // collective -> (chip k, op)
  for (std::size_t k = 0; k < chips.size(); ++k) {
    const hw::Program& prog = pod.chip(representative[chips[k]]);
    for (std::size_t i = 0; i < prog.ops.size(); ++i)
      if (const auto* c = std::get_if<hw::CommOp>(&prog.ops[i].payload)) joined[c->collective].emplace_back(k, i);
  }
  for (const auto& [collective, ops] : joined) {
    const auto last = std::max_element(ops.begin(), ops.end(), [&](const auto& a, const auto& b) {
      return (*timings[a.first])[a.second].start_ps < (*timings[b.first])[b.second].start_ps;
    });
    const std::uint64_t last_start = (*timings[last->first])[last->second].start_ps;
    for (const auto& o : ops)  // a chip whose part ended first (a permute's) did not wait for it
      if (o.first != last->first && (*timings[o.first])[o.second].end_ps >= last_start)
        trace.flow(events[last->first][last->second], events[o.first][o.second]);
  }

  // A receive matches its send by (sender, tag) (hw::RecvOp); both chips
  // must be written. A written chip's ops are its representative's.
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint64_t>, std::size_t> recv;  // (to, from, tag) -> event
  for (std::size_t k = 0; k < chips.size(); ++k) {
    const std::uint32_t c = chips[k];
    if (c >= pod.peers.size() || pod.peers[c].empty()) continue;
    const hw::Program& prog = pod.chip(representative[c]);
    for (std::size_t i = 0; i < prog.ops.size(); ++i)
      if (const auto* r = std::get_if<hw::RecvOp>(&prog.ops[i].payload))
        recv[{c, pod.peer(c, r->peer), r->tag}] = events[k][i];
  }
  for (std::size_t k = 0; k < chips.size(); ++k) {
    const std::uint32_t c = chips[k];
    if (c >= pod.peers.size() || pod.peers[c].empty()) continue;
    const hw::Program& prog = pod.chip(representative[c]);
    for (std::size_t i = 0; i < prog.ops.size(); ++i)
      if (const auto* snd = std::get_if<hw::SendOp>(&prog.ops[i].payload)) {
        const auto it = recv.find({pod.peer(c, snd->peer), c, snd->tag});
        if (it != recv.end()) trace.flow(events[k][i], it->second);
      }
  }
}

}  // namespace runtime
