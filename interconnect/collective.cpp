#include "interconnect/collective.h"

#include <algorithm>
#include <stdexcept>

namespace interconnect {

namespace {
// Cookie layout: pass run 30 bits | kind 2 | index 32.
// Tag layout: collective 24 bits | stream 8 | phase 8 | pass 4 | local 20.
// A training step of a large model is tens of thousands of collectives (a
// GPT-3 step with sequence parallelism and remat about 74,000); a pass's
// local tags count its transfers (at most one per peer).
constexpr int kMaxStreams = 256, kMaxPhases = 256, kMaxPasses = 16;
constexpr std::uint64_t kMaxLocal = std::uint64_t{1} << 20;
}  // namespace

Collective::Collective(Network& network, ReductionModel& reduction, CollectivePlan plan, bool functional, int id)
    : Collective(network, reduction, std::make_shared<const CollectivePlan>(std::move(plan)), functional, id) {}

Collective::Collective(Network& network, ReductionModel& reduction, std::shared_ptr<const CollectivePlan> plan,
                       bool functional, int id)
    : net_(network), reduction_(reduction), plan_(std::move(plan)), functional_(functional), id_(id) {
  if (id < 0 || id >= kMaxCollectives)
    throw std::invalid_argument("Collective id must be in [0, " + std::to_string(kMaxCollectives) + ")");
  if (functional_ && !plan_->functional) {
    throw std::invalid_argument("a functional Collective needs a plan made from a spec with functional = true");
  }
  slot_.assign(plan_->chips.size(), kNotJoined);
  if (functional_) work_.assign(plan_->chips.size(), std::vector<double>(plan_->elements, 0.0));
}

// The chip's stream and pass slots, at its join.
void Collective::make_runs(int c) {
  const auto& streams = plan_->chips[c].streams;
  if (streams.size() >= kMaxStreams) throw std::invalid_argument("too many streams for one chip");
  run_of(c).first_stream = static_cast<int>(stream_runs_.size());
  run_of(c).streams_left = static_cast<int>(streams.size());
  for (const Stream& s : streams) {
    if (s.phases.size() >= kMaxPhases) throw std::invalid_argument("too many phases in a stream");
    std::size_t widest = 0;
    for (const Phase& ph : s.phases) widest = std::max(widest, ph.passes.size());
    if (widest >= kMaxPasses) throw std::invalid_argument("too many passes in a phase");
    StreamRun run;
    run.first_pass = static_cast<int>(pass_runs_.size());
    stream_runs_.push_back(run);
    for (std::size_t p = 0; p < widest; ++p) {
      PassRun pr;
      pr.chip = c;
      pr.stream = static_cast<int>(&s - streams.data());
      pr.index = static_cast<int>(p);
      pass_runs_.push_back(std::move(pr));
    }
  }
  if (pass_runs_.size() >= (std::size_t{1} << 30)) throw std::invalid_argument("too many passes for one collective");
}

std::uint64_t Collective::cookie(int run, int kind, std::uint32_t index) {
  return static_cast<std::uint64_t>(run) | static_cast<std::uint64_t>(kind) << 30 |
         static_cast<std::uint64_t>(index) << 32;
}

Collective::Op Collective::decode(std::uint64_t c) {
  return {static_cast<int>(c & 0x3fffffff), static_cast<int>((c >> 30) & 0x3), static_cast<std::uint32_t>(c >> 32)};
}

std::uint64_t Collective::tag(int stream, int phase, int pass, std::uint32_t local) const {
  if (local >= kMaxLocal) throw std::logic_error("collective tag out of range");
  return static_cast<std::uint64_t>(id_) << 40 | static_cast<std::uint64_t>(stream) << 32 |
         static_cast<std::uint64_t>(phase) << 24 | static_cast<std::uint64_t>(pass) << 20 | local;
}

void Collective::join(int chip, std::function<void()> on_done) {
  if (joined(chip)) throw std::logic_error(name() + ": chip " + std::to_string(chip) + " joined twice");
  slot_[chip] = static_cast<std::uint32_t>(runs_.size());
  ChipRun& c = runs_.emplace_back();
  c.chip = chip;
  c.on_done = std::move(on_done);
  make_runs(chip);
  if (c.streams_left == 0) {
    finish_chip(chip);
    return;
  }
  const int streams = static_cast<int>(plan_->chips[chip].streams.size());
  for (int s = 0; s < streams; ++s) start_phase(chip, s);
}

void Collective::start_phase(int chip, int s) {
  StreamRun& run = stream_run(chip, s);
  const Stream& stream = plan_->chips[chip].streams[s];
  if (run.phase >= static_cast<int>(stream.phases.size())) {
    if (--run_of(chip).streams_left == 0) finish_chip(chip);
    return;
  }
  const auto& passes_of_phase = stream.phases[run.phase].passes;
  const int passes = static_cast<int>(passes_of_phase.size());
  for (int p = 0; p < passes; ++p) {
    PassRun& pr = pass_runs_[run.first_pass + p];
    pr.pass = passes_of_phase[p].get();
    pr.steps = pr.pass->steps();
    pr.step = -1;
    pr.outstanding = 0;
  }
  run.passes_left = passes;
  if (passes == 0) {
    ++run.phase;
    start_phase(chip, s);
    return;
  }
  // Only the last pass to finish starts the next phase, so the loop never
  // sees a phase change under it.
  for (int p = 0; p < passes; ++p) advance(run.first_pass + p);
}

void Collective::advance(int ri) {
  for (;;) {
    PassRun& run = pass_runs_[ri];
    const int chip = run.chip, s = run.stream, p = run.index;
    if (++run.step >= run.steps) {
      pass_finished(chip, s);
      return;
    }
    const Pass& pass = *run.pass;
    run.current.clear();
    pass.step(run.step, run.current);
    const std::size_t sends = run.current.sends.size(), recvs = run.current.recvs.size();
    run.done_mask = 0;
    if (sends + recvs > 64) {
      run.done.assign(sends + recvs, 0);
    } else {
      run.done.clear();  // done_mask holds a narrow step's
    }
    run.posted = net_.now();
    run.outstanding = 0;
    const int phase = stream_run(chip, s).phase;
    const std::uint64_t element_bytes = static_cast<std::uint64_t>(plan_->element_bytes);
    // A chunk holding no element is not sent: the receiver sees the same
    // empty transfer in its own step (the plan is symmetric) and does not
    // wait for it. Both count it done from the start. With translations a
    // chip receives its orbit chip's images, which may hold an element
    // where its own chunk holds none: every transfer is sent.
    const bool skip_empty = net_.translations().none();
    for (std::size_t i = 0; i < sends; ++i) {
      const Transfer& t = run.current.sends[i];
      if (t.count == 0 && skip_empty) {
        mark_done(run, i);
        continue;
      }
      ++run.outstanding;
      Message m;
      m.src = chip;
      m.dst = t.peer;
      m.tag = tag(s, phase, p, t.tag);
      m.bytes = t.count * element_bytes;
      if (functional_) {
        m.payload.reserve(t.count);
        const std::vector<double>& w = work_[chip];
        plan_->chips[chip].streams[s].layout.for_each_run(t.offset, t.count, [&](std::uint64_t at, std::uint64_t len) {
          m.payload.insert(m.payload.end(), w.begin() + static_cast<std::ptrdiff_t>(at),
                           w.begin() + static_cast<std::ptrdiff_t>(at + len));
        });
      }
      net_.send(std::move(m), this, cookie(ri, kSend, static_cast<std::uint32_t>(i)));
    }
    for (std::size_t j = 0; j < recvs; ++j) {
      const Transfer& t = run.current.recvs[j];
      if (t.count == 0 && skip_empty) {
        mark_done(run, sends + j);
        continue;
      }
      ++run.outstanding;
      const std::uint64_t c = cookie(ri, kRecv, static_cast<std::uint32_t>(j));
      if (run.current.reduce && t.count > 0)
        reduction_.expect(chip, t.count * element_bytes, net_.route_bytes_per_s(t.peer, chip), *this, c);
      net_.receive(chip, t.peer, tag(s, phase, p, t.tag), this, c);
    }
    if (run.outstanding > 0) return;
  }
}

void Collective::pass_finished(int chip, int s) {
  StreamRun& run = stream_run(chip, s);
  if (--run.passes_left > 0) return;
  ++run.phase;
  start_phase(chip, s);
}

void Collective::op_done(const Op& op) {
  PassRun& run = pass_runs_[op.run];
  mark_done(run, op.kind == kSend ? op.index : run.current.sends.size() + op.index);
  if (--run.outstanding == 0) advance(op.run);
}

void Collective::mark_done(PassRun& run, std::size_t slot) {
  if (run.done.empty()) {
    run.done_mask |= std::uint64_t{1} << slot;
  } else {
    run.done[slot] = 1;
  }
}

bool Collective::is_done(const PassRun& run, std::size_t slot) const {
  return run.done.empty() ? (run.done_mask >> slot) & 1 : run.done[slot] != 0;
}

void Collective::finish_chip(int chip) {
  ChipRun& c = run_of(chip);
  c.finished = true;
  c.finish = net_.now();
  if (c.on_done) {
    auto done = std::move(c.on_done);
    c.on_done = nullptr;
    done();
  }
}

void Collective::on_sent(std::uint64_t c) { op_done(decode(c)); }

void Collective::on_received(std::uint64_t c, Arrival& arrival) {
  const Op op = decode(c);
  PassRun& run = pass_runs_[op.run];
  const Transfer& t = run.current.recvs[op.index];
  const std::uint64_t bytes = t.count * static_cast<std::uint64_t>(plan_->element_bytes);
  // With translations the message is its orbit chip's image, a few bytes
  // off where chunks are uneven (Invariance::uneven_bytes).
  if (arrival.message.bytes != bytes && net_.translations().none()) {
    throw std::logic_error(name() + ": received " + std::to_string(arrival.message.bytes) + " bytes, expected " +
                           std::to_string(bytes));
  }
  if (functional_) receive_payload(op, t, run.current.reduce, arrival.message.payload);
  if (run.current.reduce && bytes > 0) {
    reduction_.reduce(run.chip, bytes, std::max(arrival.first_byte, run.posted), net_.now(), *this,
                      cookie(op.run, kRecv, op.index));
    return;
  }
  op_done(op);
}

void Collective::reduced(std::uint64_t c) { op_done(decode(c)); }

void Collective::receive_payload(const Op& op, const Transfer& t, bool reduce, std::vector<double>& payload) {
  const PassRun& run = pass_runs_[op.run];
  std::vector<double>& w = work_[run.chip];
  std::size_t i = 0;
  plan_->chips[run.chip].streams[run.stream].layout.for_each_run(t.offset, t.count,
                                                                 [&](std::uint64_t at, std::uint64_t len) {
                                                                   for (std::uint64_t e = 0; e < len; ++e, ++i) {
                                                                     if (reduce) {
                                                                       w[at + e] += payload[i];
                                                                     } else {
                                                                       w[at + e] = payload[i];
                                                                     }
                                                                   }
                                                                 });
}

bool Collective::complete() const {
  return runs_.size() == slot_.size() &&
         std::all_of(runs_.begin(), runs_.end(), [](const ChipRun& c) { return c.finished; });
}

Ps Collective::end_time() const {
  Ps end = 0;
  for (const ChipRun& c : runs_) end = std::max(end, c.finish);
  return end;
}

std::vector<std::pair<int, Ps>> Collective::finish_times() const {
  std::vector<std::pair<int, Ps>> out;
  for (const ChipRun& c : runs_)
    if (c.finished) out.emplace_back(c.chip, c.finish);
  std::sort(out.begin(), out.end());
  return out;
}

std::uint64_t Collective::input_elements() const {
  return plan_->op == CollectiveOp::all_gather ? plan_->shard_elements() : plan_->elements;
}

std::uint64_t Collective::output_elements() const {
  return plan_->op == CollectiveOp::reduce_scatter ? plan_->shard_elements() : plan_->elements;
}

void Collective::set_input(int chip, const std::vector<double>& values) {
  if (!functional_) throw std::logic_error(name() + ": set_input on a timing-only collective");
  if (values.size() != input_elements()) {
    throw std::invalid_argument(name() + ": input of " + std::to_string(values.size()) + " elements, expected " +
                                std::to_string(input_elements()));
  }
  std::vector<double>& w = work_[chip];
  if (plan_->op == CollectiveOp::all_gather) {
    std::fill(w.begin(), w.end(), 0.0);
    std::copy(values.begin(), values.end(),
              w.begin() + static_cast<std::ptrdiff_t>(plan_->rank[chip] * plan_->shard_elements()));
  } else {
    w = values;
  }
}

std::vector<double> Collective::output(int chip) const {
  if (!functional_) throw std::logic_error(name() + ": output of a timing-only collective");
  const std::vector<double>& w = work_[chip];
  if (plan_->op == CollectiveOp::reduce_scatter) {
    const auto at = static_cast<std::ptrdiff_t>(plan_->rank[chip] * plan_->shard_elements());
    return std::vector<double>(w.begin() + at, w.begin() + at + static_cast<std::ptrdiff_t>(plan_->shard_elements()));
  }
  if (plan_->op == CollectiveOp::permute && !plan_->receives[chip]) return std::vector<double>(w.size(), 0.0);
  return w;
}

std::string Collective::name_of(CollectiveOp op, int id) {
  return std::string(to_string(op)) + "#" + std::to_string(id);
}

std::string Collective::name() const { return name_of(plan_->op, id_); }

std::vector<std::string> Collective::pending(std::size_t max_lines, std::size_t* total) const {
  const Topology& topo = net_.topology();
  std::vector<std::string> out;
  // Lines past max_lines are counted, not written: describing every waiting
  // chip of a 65,536-chip pod took minutes after a runaway stop.
  std::size_t count = 0;
  const auto more = [&] { return count++ < max_lines; };
  for (int chip = 0; chip < static_cast<int>(slot_.size()); ++chip) {
    if (!joined(chip)) {
      if (!net_.translations().is_rep(chip)) continue;  // its orbit chip stands for it
      if (more()) out.push_back(name() + ": " + topo.describe(chip) + " never joined");
      continue;
    }
    const ChipRun& c = runs_[slot_[chip]];
    if (c.finished) continue;
    const int streams = static_cast<int>(plan_->chips[chip].streams.size());
    for (int s = 0; s < streams; ++s) {
      const StreamRun& sr = stream_runs_[c.first_stream + s];
      const Stream& stream = plan_->chips[chip].streams[s];
      if (sr.phase >= static_cast<int>(stream.phases.size())) continue;
      const int passes = static_cast<int>(stream.phases[sr.phase].passes.size());
      for (int p = 0; p < passes; ++p) {
        const PassRun& run = pass_runs_[sr.first_pass + p];
        if (run.outstanding == 0 || !more()) continue;
        std::string line = name() + ": " + topo.describe(chip) + " in " + run.pass->describe() + ", step " +
                           std::to_string(run.step + 1) + " of " + std::to_string(run.pass->steps()) + ":";
        const std::size_t sends = run.current.sends.size();
        const std::size_t ops = sends + run.current.recvs.size();
        for (std::size_t i = 0; i < ops; ++i) {
          if (is_done(run, i)) continue;
          const bool is_send = i < sends;
          const Transfer& t = is_send ? run.current.sends[i] : run.current.recvs[i - sends];
          line += (is_send ? " send to " : " receive from ") + topo.describe(t.peer) + " pending;";
        }
        line.pop_back();
        out.push_back(line);
      }
    }
  }
  if (total) *total += count;
  return out;
}

}  // namespace interconnect
