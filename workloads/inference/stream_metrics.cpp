#include "workloads/inference/stream_metrics.h"

#include <algorithm>
#include <stdexcept>

namespace workloads {

namespace {

RequestStreamSection::Latency latency(const std::vector<double>& v) {
  RequestStreamSection::Latency l;
  for (double x : v) l.mean += x / double(v.size());
  l.p50 = percentile(v, 50);
  l.p99 = percentile(v, 99);
  return l;
}

}  // namespace

void fill_stream_metrics(const std::vector<RequestOutcome>& measured, RequestStreamSection& out) {
  if (measured.empty()) throw std::invalid_argument("fill_stream_metrics: no measured requests");
  std::vector<double> ttft, tpot, itl;
  double first = measured.front().arrival_s, last = first, tokens = 0, prompts = 0;
  for (const RequestOutcome& o : measured) {
    ttft.push_back(o.ttft_s());
    tpot.push_back(o.tpot_s());
    double previous = o.first_token_s;
    for (double t : o.token_s) {
      itl.push_back(t - previous);
      previous = t;
    }
    first = std::min(first, o.arrival_s);
    last = std::max(last, o.finish_s);
    tokens += double(o.decode_len);
    prompts += double(o.prompt_len);
  }
  out.ttft_s = latency(ttft);
  out.tpot_s = latency(tpot);
  out.itl_s = latency(itl);
  out.makespan_s = last - first;
  out.requests_per_s = double(measured.size()) / out.makespan_s;
  out.tokens_per_s = tokens / out.makespan_s;
  out.total_tokens_per_s = (tokens + prompts) / out.makespan_s;
}

}  // namespace workloads
