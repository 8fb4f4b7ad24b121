#include "hw/number_format.h"

#include "sim/params.h"

namespace hw {

const sim::EnumNames<NumberFormat>& number_format_names() {
  static const sim::EnumNames<NumberFormat> names(
      "number format", {{NumberFormat::bf16, "bf16", "bfloat16, FP32 accumulation"},
                        {NumberFormat::int8, "int8", "8-bit integers, int32 accumulation"},
                        {NumberFormat::fp8, "fp8", "8-bit floating point, FP32 accumulation"}});
  return names;
}

const char* to_string(NumberFormat f) { return number_format_names().name(f); }

std::uint64_t element_bytes(NumberFormat f) { return f == NumberFormat::bf16 ? 2 : 1; }

}  // namespace hw
