#include "tests/hw/hbm_packet_reference.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace hw {

namespace {

// The bursts one request has waiting on one channel, in address order.
struct Part {
  std::size_t request;
  std::deque<std::uint64_t> bursts;
};

struct Channel {
  std::deque<Part> turns;  // round-robin order; front is served next
  bool busy = false;
  double free_at = 0.0;  // end of the burst in service
  Part in_service{0, {}};
};

constexpr double kNever = std::numeric_limits<double>::infinity();

}  // namespace

std::vector<double> hbm_packet_completions(const HbmConfig& config, std::uint64_t burst_bytes,
                                           const std::vector<HbmRequest>& requests) {
  validate(config);
  if (burst_bytes == 0) throw std::invalid_argument("hbm_packet_completions: burst_bytes must be > 0");
  const std::uint64_t g = config.interleave_bytes;
  const double channel_bw = config.bandwidth_bytes_per_s / config.channels;

  std::vector<Channel> channels(config.channels);
  std::vector<std::uint32_t> parts_left(requests.size(), 0);
  std::vector<double> done(requests.size(), kNever);

  auto start_next_burst = [&](Channel& ch, double now) {
    if (ch.turns.empty()) {
      ch.busy = false;
      return;
    }
    ch.in_service = std::move(ch.turns.front());
    ch.turns.pop_front();
    const std::uint64_t b = ch.in_service.bursts.front();
    ch.in_service.bursts.pop_front();
    ch.busy = true;
    ch.free_at = now + static_cast<double>(b) / channel_bw;
  };

  auto arrive = [&](std::size_t r, double now) {
    const HbmRequest& req = requests[r];
    if (req.bytes == 0) {
      done[r] = now + config.latency_s;
      return;
    }
    std::vector<Part> parts(config.channels);
    for (std::uint64_t pos = req.address, end = req.address + req.bytes; pos < end;) {
      const std::uint64_t block_end = (pos / g + 1) * g;
      const std::uint64_t burst_end = (pos / burst_bytes + 1) * burst_bytes;
      const std::uint64_t next = std::min({end, block_end, burst_end});
      parts[(pos / g) % config.channels].bursts.push_back(next - pos);
      pos = next;
    }
    for (std::uint32_t c = 0; c < config.channels; ++c) {
      if (parts[c].bursts.empty()) continue;
      parts[c].request = r;
      ++parts_left[r];
      channels[c].turns.push_back(std::move(parts[c]));
      if (!channels[c].busy) start_next_burst(channels[c], now);
    }
  };

  auto burst_done = [&](Channel& ch) {
    const double now = ch.free_at;
    if (!ch.in_service.bursts.empty()) {
      ch.turns.push_back(std::move(ch.in_service));
    } else if (--parts_left[ch.in_service.request] == 0) {
      done[ch.in_service.request] = now + config.latency_s;
    }
    start_next_burst(ch, now);
  };

  std::vector<std::size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return requests[a].start_s < requests[b].start_s; });

  std::size_t next_arrival = 0;
  for (;;) {
    Channel* first = nullptr;
    for (Channel& ch : channels)
      if (ch.busy && (first == nullptr || ch.free_at < first->free_at)) first = &ch;
    const double t_burst = first ? first->free_at : kNever;
    const double t_arrival = next_arrival < order.size() ? requests[order[next_arrival]].start_s : kNever;
    if (t_burst == kNever && t_arrival == kNever) break;
    // A burst ending at the same instant as an arrival is accounted first, so
    // the newcomer queues behind the flow that was just served.
    if (t_burst <= t_arrival) {
      burst_done(*first);
    } else {
      arrive(order[next_arrival], t_arrival);
      ++next_arrival;
    }
  }
  return done;
}

}  // namespace hw
