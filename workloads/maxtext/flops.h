#pragma once
// MaxText's own count of a training step's FLOPs per device: what its log
// divides by the step time to print "TFLOP/s/device" (maxtext_utils.py
// calculate_tflops_training_per_device, read at 9f1820b, f4db8e4, 3eb77db and
// 50bafeb). tpusim's step time with this count gives the figure a published
// recipe's log line prints (docs/reference/maxtext-recipes.md), whatever
// tpusim itself counts.
//
// Matmuls 2 m k n; learnable weights x 3 (forward and backward): the QKV and
// output projections (MLA's through its low ranks), the MLPs (a mixture of
// experts: the router and the top-k experts, plus the shared experts of the
// deepseek and llama4 blocks, dense layers as MaxTextModel::layers() says),
// the output embedding. Attention per layer 4 B S^2 H D (MLA: 2 B S^2 H
// (qk + v)) x 3. Not counted: the vision encoder, DPO's reference model, the
// norms and elementwise work.
#include "workloads/maxtext/spec.h"

namespace workloads {

// The two versions of the count behind the published recipes: before
// 3eb77db every layer attends over the whole sequence with no causal mask
// (noncausal); from it the attention is halved for the causal mask and local
// and chunked layers attend over min(window, S) keys or their chunks (causal).
enum class MaxTextFlopCount { noncausal, causal };

// TFLOPs per device for one step of cfg (x gradient_accumulation_steps).
double maxtext_step_tflops(const MaxTextConfig& cfg, MaxTextFlopCount version);

}  // namespace workloads
