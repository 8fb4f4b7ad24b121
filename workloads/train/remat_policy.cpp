#include "workloads/train/remat_policy.h"
#include "sim/text.h"

#include <algorithm>

namespace workloads {

namespace {

using sim::ends_with;

// A policy that gives every name of `names` the place `place`.
TensorPlaces all_at(std::initializer_list<const char*> names, TensorPlace place) {
  TensorPlaces out;
  for (const char* n : names) out[n] = place;
  return out;
}

}  // namespace

const sim::EnumNames<Remat>& remat_names() {
  static const sim::EnumNames<Remat> names(
      "remat policy",
      {{Remat::none, "none", "keep every activation the backward pass reads"},
       {Remat::full, "full", "keep each repeated layer's input, recompute its forward in the backward"},
       {Remat::minimal, "minimal",
        "keep each repeated layer's input and its weight matmuls' outputs, recompute the rest of its forward"},
       {Remat::offload, "offload",
        "move each repeated layer's stash to host memory in the forward and back for its backward"},
       {Remat::save_dot_except_mlpwi, "save_dot_except_mlpwi",
        "MaxText: keep Q, K, V, the output projection and the MLP's down projection"},
       {Remat::save_dot_except_mlp, "save_dot_except_mlp", "MaxText: keep Q, K, V and the output projection"},
       {Remat::save_qkv_proj, "save_qkv_proj", "MaxText: keep Q, K and V"},
       {Remat::save_out_proj, "save_out_proj", "MaxText: keep the output projection"},
       {Remat::qkv_proj_offloaded, "qkv_proj_offloaded", "MaxText: offload Q, K and V to host memory"},
       {Remat::minimal_offloaded, "minimal_offloaded", "MaxText: offload every weight matmul's output"},
       {Remat::custom, "custom", "MaxText: each named tensor where remat_tensors puts it"}});
  return names;
}

const char* to_string(Remat r) { return remat_names().name(r); }

bool per_tensor(Remat r) { return r != Remat::none && r != Remat::full && r != Remat::minimal && r != Remat::offload; }

const sim::EnumNames<TensorPlace>& tensor_place_names() {
  static const sim::EnumNames<TensorPlace> names(
      "tensor place", {{TensorPlace::device, "device", "kept in HBM from the forward to the backward"},
                       {TensorPlace::remat, "remat", "recomputed inside the backward"},
                       {TensorPlace::offload, "offload", "sent to host memory and back"}});
  return names;
}

const std::vector<std::string>& checkpoint_names() {
  static const std::vector<std::string> names{"decoder_layer_input",
                                              "query_proj",
                                              "key_proj",
                                              "value_proj",
                                              "qkv_proj",
                                              "context",
                                              "out_proj",
                                              "mlpwi_0",
                                              "mlpwi_1",
                                              "mlpwi",
                                              "mlpwo"};
  return names;
}

TensorPlaces policy_places(Remat r, const TensorPlaces& custom) {
  const TensorPlace dev = TensorPlace::device, off = TensorPlace::offload;
  switch (r) {
    case Remat::save_dot_except_mlpwi:
      return all_at({"query_proj", "key_proj", "value_proj", "qkv_proj", "out_proj", "mlpwo"}, dev);
    case Remat::save_dot_except_mlp:
      return all_at({"query_proj", "key_proj", "value_proj", "qkv_proj", "out_proj"}, dev);
    case Remat::save_qkv_proj: return all_at({"query_proj", "key_proj", "value_proj", "qkv_proj"}, dev);
    case Remat::save_out_proj: return all_at({"out_proj"}, dev);
    case Remat::qkv_proj_offloaded: return all_at({"query_proj", "key_proj", "value_proj"}, off);
    case Remat::minimal_offloaded:
      return all_at(
          {"query_proj", "key_proj", "value_proj", "qkv_proj", "out_proj", "mlpwi_0", "mlpwi_1", "mlpwi", "mlpwo"},
          off);
    case Remat::custom: return custom;
    default: return {};
  }
}

bool offloads_to_host(Remat r, const TensorPlaces& custom) {
  if (r == Remat::offload) return true;
  for (const auto& [name, place] : policy_places(r, custom))
    if (place == TensorPlace::offload) return true;
  return false;
}

std::string checkpoint_name(const models::LayerSpec& layer, const models::StashSpec& s) {
  if (s.name == layer.name + ".in") return "decoder_layer_input";
  static const std::pair<const char*, const char*> kBySuffix[] = {
      {".attn.q", "query_proj"}, {".attn.k", "key_proj"},      {".attn.kv", "key_proj"},
      {".attn.v", "value_proj"}, {".attn.context", "context"}, {".attn.residual.out", "out_proj"},
      {".gate.out", "mlpwi_0"},  {".up.out", "mlpwi_1"},       {".down.out", "mlpwo"}};
  for (const auto& [suffix, name] : kBySuffix)
    if (ends_with(s.name, suffix)) return name;
  return "";
}

TensorPlace stash_place(const TensorPlaces& places, const models::LayerSpec& layer, const models::StashSpec& s) {
  const std::string name = checkpoint_name(layer, s);
  const auto place_of = [&](const std::string& n) {
    auto it = places.find(n);
    return it == places.end() ? TensorPlace::remat : it->second;
  };
  if (name == "decoder_layer_input")  // the scan's carry: kept unless offloaded
    return place_of(name) == TensorPlace::offload ? TensorPlace::offload : TensorPlace::device;
  if (name.empty()) return TensorPlace::remat;
  TensorPlace p = place_of(name);
  // qkv_proj names the fused projection, mlpwi the fused MLP input: either
  // name places the parts.
  const char* fused = name == "query_proj" || name == "key_proj" || name == "value_proj" ? "qkv_proj"
                      : name == "mlpwi_0" || name == "mlpwi_1"                           ? "mlpwi"
                                                                                         : nullptr;
  if (p == TensorPlace::remat && fused) p = place_of(fused);
  return p;
}

}  // namespace workloads
