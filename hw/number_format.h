#pragma once
// The number formats an MXU multiplies in: bf16 (every generation), and the
// 8-bit formats some generations run at a multiple of the bf16 rate
// (docs/reference/tpu-specs.md, peak_int8_ops_per_chip and
// peak_fp8_flops_per_chip of each generation; docs/calibration.md#number-formats).
#include <cstdint>

namespace sim {
template <class E>
class EnumNames;
}

namespace hw {

enum class NumberFormat { bf16, int8, fp8 };
const sim::EnumNames<NumberFormat>& number_format_names();  // bf16, int8, fp8
const char* to_string(NumberFormat f);

// Bytes of one element in HBM and VMEM: 2 for bf16, 1 for int8 and fp8.
std::uint64_t element_bytes(NumberFormat f);

}  // namespace hw
