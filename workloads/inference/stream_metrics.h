#pragma once
// What a serving benchmark client prints of a request stream (vLLM's
// benchmark_serving, JetStream's benchmark_serving; docs/serving.md
// "Metrics"): TTFT and TPOT over requests, inter-token latency over tokens,
// request and token throughputs over the measured window.
#include <vector>

#include "workloads/inference/request_stream.h"
#include "workloads/report.h"

namespace workloads {

// Fills `out`'s ttft_s, tpot_s, itl_s (mean, p50, p99), makespan_s,
// requests_per_s, tokens_per_s (output tokens) and total_tokens_per_s
// (prompt and output tokens) from the measured requests (non-empty):
//  window: the first measured send to the last measured finish;
//  TTFT: first token - send, per request;
//  TPOT: (finish - first token) / decode_len, per request;
//  ITL: each gap between a request's consecutive tokens (first token to its
//    first decode step's, and so on), over every token.
void fill_stream_metrics(const std::vector<RequestOutcome>& measured, RequestStreamSection& out);

}  // namespace workloads
