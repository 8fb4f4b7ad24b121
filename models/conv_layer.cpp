#include "models/conv_layer.h"

#include <stdexcept>

namespace models {

namespace {

std::uint64_t out_size(std::uint64_t in, std::uint64_t filter, std::uint64_t stride) {
  if (in == 0 || filter == 0 || stride == 0) throw std::invalid_argument("convolution sizes must be positive");
  if (filter > in) throw std::invalid_argument("a filter is larger than its input");
  return (in - filter + stride - 1) / stride + 1;
}

}  // namespace

std::uint64_t ConvLayer::ofmap_h() const { return out_size(ifmap_h, filter_h, stride_h); }
std::uint64_t ConvLayer::ofmap_w() const { return out_size(ifmap_w, filter_w, stride_w); }

GemmShape im2col(const ConvLayer& layer, std::uint64_t batch) {
  if (batch == 0 || layer.channels == 0 || layer.filters == 0)
    throw std::invalid_argument("convolution sizes must be positive");
  return {batch * layer.ofmap_h() * layer.ofmap_w(), layer.filter_h * layer.filter_w * layer.channels, layer.filters};
}

ConvLayer gemm_as_conv(const std::string& name, std::uint64_t m, std::uint64_t n, std::uint64_t k) {
  ConvLayer l;
  l.name = name;
  l.ifmap_h = m;
  l.ifmap_w = k;
  l.filter_h = 1;
  l.filter_w = k;
  l.channels = 1;
  l.filters = n;
  return l;
}

}  // namespace models
