#pragma once
// What a chip holds during a training step, layer by layer: the parameters
// a stage keeps (its own and a tied copy), their elements on one
// tensor-parallel rank, what a sharded collective assembles, and which
// layers keep their stash, recompute their forward or send it to the host.
// The builder (program_builder.h) turns these into ops; memory.cpp and
// report.cpp count them. Nothing here builds a program.
#include <cstdint>
#include <optional>
#include <vector>

#include "models/model_spec.h"
#include "workloads/train/layout.h"
#include "workloads/train/spec.h"
#include "workloads/train/stages.h"

namespace workloads {

// Parameters a stage's layer keeps and updates: its own, plus (with tied
// embeddings on a later stage than the embedding) a copy of the table its
// matmuls read, as Megatron-LM keeps one on the last stage.
std::vector<const models::ParamSpec*> held_params(const models::ModelSpec& model, const StageLayers& stage,
                                                  std::size_t layer);
// Their elements on one tensor-parallel rank of `tp`.
std::uint64_t held_elements(const models::ModelSpec& model, const StageLayers& stage, std::size_t layer,
                            std::uint32_t tp);
// What an all-gather over `ranks` assembles from `elements` split into
// equal shards (and what a reduce-scatter splits): the elements padded to a
// multiple of the ranks, as XLA pads a sharded dimension.
std::uint64_t gathered_elements(std::uint64_t elements, std::uint32_t ranks);

// A parameter two pipeline stages hold: with tied embeddings the table,
// owned by the embedding on the first stage, and the copy the last stage's
// logits read (held_params). Empty without a pipeline or tied embeddings.
struct TiedParam {
  const models::ParamSpec* param = nullptr;
  std::uint32_t owner_stage = 0, copy_stage = 0;
  std::size_t owner_layer = 0, copy_layer = 0;
};
std::optional<TiedParam> tied_param(const models::ModelSpec& model, const TrainLayout& layout);

// Whether the step recomputes (part of) layer `l`'s forward inside its
// backward: remat full or minimal and a repeated layer (stages.h) that
// another layer feeds (the first MLP layer's input is the batch, which it
// keeps).
bool rematerialized(const TrainSpec& spec, const models::ModelSpec& model, std::size_t l);
// Whether layer `l`'s stash goes to host memory and back (remat: offload,
// the same layers as rematerialized's).
bool offloaded(const TrainSpec& spec, const models::ModelSpec& model, std::size_t l);
// The part of a rematerialized layer's forward its backward runs again:
// full, all of it; minimal, all but its linear (weight) matmuls, whose
// outputs it keeps, so the ops that read them wait for nothing else.
models::LayerSpec recomputed_forward(const TrainSpec& spec, const models::LayerSpec& layer);

}  // namespace workloads
