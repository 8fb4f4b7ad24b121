#pragma once
// Puts the host FPU into the MXU's subnormal rule (hw/bf16.h: subnormal
// operands read as zero, results below FLT_MIN become zero of the same sign)
// for the lifetime of the object, so that plain float + and * compute exactly
// what mxu_add / mxu_mul compute, at full speed. The caller's mode is
// restored on destruction.
#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

namespace hw {

#if defined(__SSE2__)
// MXCSR flush-to-zero (bit 15) and denormals-are-zero (bit 6), Intel SDM
// vol. 1 section 10.2.3. Both are needed: DAZ alone would let a subnormal
// result sit in a register (the PE's psum) until its next use.
inline constexpr bool kFpuFlushesSubnormals = true;

class SubnormalFlush {
 public:
  SubnormalFlush() : saved_(_mm_getcsr()) { enable(); }
  ~SubnormalFlush() { disable(); }
  SubnormalFlush(const SubnormalFlush&) = delete;
  SubnormalFlush& operator=(const SubnormalFlush&) = delete;
  void enable() { _mm_setcsr(saved_ | kFlushToZero | kDenormalsAreZero); }
  void disable() { _mm_setcsr(saved_); }

 private:
  static constexpr unsigned kFlushToZero = 0x8000;
  static constexpr unsigned kDenormalsAreZero = 0x0040;
  unsigned saved_;
};
#else
// No such mode: callers apply the rule explicitly (mxu_add / mxu_mul).
inline constexpr bool kFpuFlushesSubnormals = false;

class SubnormalFlush {
 public:
  void enable() {}
  void disable() {}
};
#endif

}  // namespace hw
