#pragma once
// exp for float arrays, in plain arithmetic the compiler vectorises (std::exp stays scalar):
// Cephes' expf (range reduction by ln 2 in two parts, a degree-6 polynomial), within 2 ulp of
// std::exp; arguments below -87.3 give 0, as a softmax over masked keys wants. Rounding by the
// 1.5 * 2^23 trick and clamping by comparisons, so no libm call stays in the loop.
#include <cstdint>
#include <cstring>

namespace mlm::model::kernels {

inline float fast_exp(float input) {
  const float clamped = input < -87.3f ? -87.3f : (input > 88.3f ? 88.3f : input);
  const float n = (clamped * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // nearest integer
  const float x = clamped - n * 0.693359375f + n * 2.12194440e-4f;
  float y = 1.9875691500e-4f;
  y = y * x + 1.3981999507e-3f;
  y = y * x + 8.3334519073e-3f;
  y = y * x + 4.1665795894e-2f;
  y = y * x + 1.6666665459e-1f;
  y = y * x + 5.0000001201e-1f;
  y = y * x * x + x + 1.0f;
  const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;  // 2^n, n in [-126, 127]
  float power;
  std::memcpy(&power, &bits, sizeof(power));
  // exp(-87.3) is 1.3e-38: a fully masked key (bias -1e30) gets 0 exactly.
  return clamped <= -87.3f ? 0.0f : y * power;
}

}  // namespace mlm::model::kernels
