#pragma once
// log for float arrays, in plain arithmetic the compiler vectorises (std::log stays scalar):
// Cephes' logf (the exponent and a mantissa in [sqrt(1/2), sqrt(2)) by bit manipulation, a
// degree-9 polynomial), within a few ulp of std::log for positive normal floats, the only
// arguments its callers give it.
#include <cstdint>
#include <cstring>

namespace mlm::model::kernels {

inline float fast_log(float input) {
  int32_t bits;
  std::memcpy(&bits, &input, sizeof(bits));
  const float exponent = static_cast<float>(((bits >> 23) & 0xff) - 126);  // input = m * 2^e, m in [1/2, 1)
  bits = (bits & 0x007fffff) | 0x3f000000;
  float m;
  std::memcpy(&m, &bits, sizeof(m));
  const bool low = m < 0.707106781186547524f;  // m in [sqrt(1/2), sqrt(2)) after the shift
  const float e = low ? exponent - 1.0f : exponent;
  const float x = low ? m + m - 1.0f : m - 1.0f;
  const float z = x * x;
  float y = 7.0376836292e-2f;
  y = y * x - 1.1514610310e-1f;
  y = y * x + 1.1676998740e-1f;
  y = y * x - 1.2420140846e-1f;
  y = y * x + 1.4249322787e-1f;
  y = y * x - 1.6668057665e-1f;
  y = y * x + 2.0000714765e-1f;
  y = y * x - 2.4999993993e-1f;
  y = y * x + 3.3333331174e-1f;
  y = y * x * z;
  y += -2.12194440e-4f * e;
  y += -0.5f * z;
  return x + y + 0.693359375f * e;
}

}  // namespace mlm::model::kernels
