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

// Where stash entry `s` of layer `l` lives between its forward and its
// backward under the step's remat policy (remat_policy.h). Only repeated
// layers (stages.h) that another layer feeds are rematerialized or
// offloaded (the first MLP layer's input is the batch, which it keeps);
// every other layer keeps its stash on the device. full and minimal keep
// the layer's input and recompute the rest (minimal's kept matmul outputs
// are memory.cpp's to count); offload sends it all to the host.
TensorPlace stash_place(const TrainSpec& spec, const models::ModelSpec& model, std::size_t l,
                        const models::StashSpec& s);
// The chip's bytes of layer `l`'s stash at `place`: its tensor-parallel
// share, split along the sequence with sequence parallelism.
std::uint64_t stash_bytes(const TrainSpec& spec, const models::ModelSpec& model, std::size_t l, TensorPlace place);

// Whether the step recomputes (part of) layer `l`'s forward inside its
// backward: remat full or minimal, or a per-tensor policy that recomputes
// one of its stash entries, on a repeated layer.
bool rematerialized(const TrainSpec& spec, const models::ModelSpec& model, std::size_t l);
// Whether (part of) layer `l`'s stash goes to host memory and back
// (remat: offload, or a per-tensor policy that offloads a tensor).
bool offloaded(const TrainSpec& spec, const models::ModelSpec& model, std::size_t l);
// The part of a rematerialized layer's forward its backward runs again:
// full, all of it; minimal, all but its linear (weight) matmuls, whose
// outputs it keeps, so the ops that read them wait for nothing else; a
// per-tensor policy, the ops that write the stash entries it recomputes
// and, recursively, the ops they read from, back to the entries kept or
// fetched from the host and the layer's input (JAX's remat recomputes
// exactly what the backward reads and the policy did not save).
models::LayerSpec recomputed_forward(const TrainSpec& spec, const models::LayerSpec& layer);

}  // namespace workloads
