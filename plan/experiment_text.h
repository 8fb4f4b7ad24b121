#pragma once
// A candidate as an experiment file anyone can run with `tpusim run`: a
// tpusim model as kind: train (mesh axes named after the parallelisms,
// Megatron sequence parallelism with tensor), a MaxText model as kind:
// maxtext (ici_<axis>_parallelism, per_device_batch_size and
// gradient_accumulation_steps for the batch and microbatches, remat_policy).
#include <string>

#include "plan/candidates.h"
#include "plan/slice.h"
#include "plan/spec.h"

namespace plan {

// `chip`: how the file names the chip (a name its folder finds, or a path).
std::string experiment_text(const PlanSpec& spec, const Slice& slice, const std::string& chip, const Family& family,
                            const Candidate& c);

}  // namespace plan
