#pragma once
// Rematerialisation: which activations a repeated layer (a Transformer
// block, an MLP dense layer) keeps in HBM from its forward to its backward,
// which it recomputes inside its backward, and which it sends to host
// memory and back (Chen et al. 2016, arXiv:1604.06174; Korthikanti et al.
// 2022, arXiv:2205.05198 s.5).
//
// tpusim's whole-layer policies:
//   none      keep every activation the backward reads
//   full      keep the layer's input, recompute its whole forward
//   minimal   keep the input and the weight matmuls' outputs, recompute
//             the rest of the forward
//   offload   send the whole stash to host memory and back
// MaxText's per-tensor policies (MaxText decoders.py, get_remat_policy;
// JAX's jax.checkpoint_policies with the names MaxText tags its tensors
// with, jax.ad_checkpoint.checkpoint_name): each named tensor is kept on the
// device, recomputed, or offloaded to pinned host memory; every tensor the
// backward reads that MaxText does not name (layer norms' outputs, the
// attention kernel's log-sum-exp, the activation's output) is recomputed:
//   save_dot_except_mlpwi  device: query/key/value_proj, qkv_proj, out_proj, mlpwo
//   save_dot_except_mlp    device: query/key/value_proj, qkv_proj, out_proj
//   save_qkv_proj          device: query/key/value_proj, qkv_proj
//   save_out_proj          device: out_proj
//   qkv_proj_offloaded     offload: query/key/value_proj
//   minimal_offloaded      offload: query/key/value_proj, qkv_proj, out_proj, mlpwi_0, mlpwi_1, mlpwi, mlpwo
//   custom                 each name as remat_tensors says (device | remat | offload)
// The layer's input (decoder_layer_input) is the scanned layer loop's carry:
// kept on the device unless a custom policy offloads it.
#include <map>
#include <string>
#include <vector>

#include "models/layer_spec.h"
#include "sim/params.h"

namespace workloads {

enum class Remat {
  none,
  full,
  minimal,
  offload,
  save_dot_except_mlpwi,
  save_dot_except_mlp,
  save_qkv_proj,
  save_out_proj,
  qkv_proj_offloaded,
  minimal_offloaded,
  custom
};
const sim::EnumNames<Remat>& remat_names();
const char* to_string(Remat r);
// A MaxText per-tensor policy (everything after offload above).
bool per_tensor(Remat r);

enum class TensorPlace { device, remat, offload };
const sim::EnumNames<TensorPlace>& tensor_place_names();

// The names MaxText tags a decoder layer's tensors with, which a policy
// (and remat_tensors) may place.
const std::vector<std::string>& checkpoint_names();
using TensorPlaces = std::map<std::string, TensorPlace>;  // checkpoint name -> place; absent: remat

// The places policy `r` gives the named tensors (`custom`: remat_tensors).
TensorPlaces policy_places(Remat r, const TensorPlaces& custom);

// Whether policy `r` sends anything to host memory (remat: offload, or a
// per-tensor policy that places a tensor at offload).
bool offloads_to_host(Remat r, const TensorPlaces& custom);

// The MaxText checkpoint name of stash entry `s` of Transformer block
// `layer`, by the entry's role in the block ("" when MaxText names none):
//   <block>.in -> decoder_layer_input, .attn.q -> query_proj, .attn.k and
//   .attn.kv (latent attention's keys and values) -> key_proj, .attn.v ->
//   value_proj, .attn.context -> context, .attn.residual.out (the output
//   projection added to the residual) -> out_proj, .gate.out -> mlpwi_0,
//   .up.out -> mlpwi_1, .down.out -> mlpwo.
std::string checkpoint_name(const models::LayerSpec& layer, const models::StashSpec& s);

// Where stash entry `s` of repeated layer `layer` lives under a per-tensor
// policy with `places` (policy_places).
TensorPlace stash_place(const TensorPlaces& places, const models::LayerSpec& layer, const models::StashSpec& s);

}  // namespace workloads
