#include "models/model_spec.h"

namespace models {

std::uint64_t ModelSpec::param_count() const {
  std::uint64_t n = 0;
  for (const auto& l : layers) n += l.param_count();
  return n;
}

std::uint64_t ModelSpec::param_bytes() const {
  std::uint64_t n = 0;
  for (const auto& l : layers) n += l.param_bytes();
  return n;
}

std::uint64_t ModelSpec::activation_bytes() const {
  std::uint64_t n = 0;
  for (const auto& l : layers) n += l.activation_bytes();
  return n;
}

double ModelSpec::forward_flops() const {
  double f = 0;
  for (const auto& l : layers) f += l.forward_flops();
  return f;
}

double ModelSpec::backward_flops() const {
  double f = 0;
  for (const auto& l : layers) f += l.backward_flops();
  return f;
}

double ModelSpec::matmul_flops_per_step() const {
  double f = 0;
  for (const auto& l : layers) f += l.forward_matmul_flops() + l.backward_matmul_flops();
  return f;
}

double ModelSpec::model_flops_per_token() const { return matmul_flops_per_step() / double(tokens()); }

const LayerSpec* ModelSpec::owner_of(const std::string& param_name) const {
  for (const auto& l : layers)
    for (const auto& p : l.params)
      if (p.name == param_name) return &l;
  return nullptr;
}

}  // namespace models
