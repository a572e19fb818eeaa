#pragma once
// GELU and its derivative for float arrays, in plain arithmetic the compiler vectorises (std::erf
// and std::tanh stay scalar). The exact form uses erf by Abramowitz & Stegun 7.1.26 (absolute
// error below 1.5e-7, the approximation ATen's vectorised CPU GELU uses too); the tanh form
// writes tanh(u) = 1 - 2 / (exp(2u) + 1). Both go through fast_exp.
#include "fast_exp.h"

namespace mlm::model::kernels {

inline float fast_erf(float x) {
  const float a = x < 0 ? -x : x;
  const float t = 1.0f / (1.0f + 0.3275911f * a);
  const float poly =
      t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
  const float magnitude = 1.0f - poly * fast_exp(-a * a);
  return x < 0 ? -magnitude : magnitude;
}

inline float fast_tanh(float x) { return 1.0f - 2.0f / (fast_exp(2.0f * x) + 1.0f); }

constexpr float kSqrtHalf = 0.70710678118654752f;        // 1 / sqrt(2)
constexpr float kInvSqrt2Pi = 0.39894228040143268f;      // 1 / sqrt(2 pi)
constexpr float kSqrt2OverPi = 0.79788456080286536f;     // sqrt(2 / pi)
constexpr float kTanhCubic = 0.044715f;

// Each form apart, branch-free: a loop over one form vectorises, a loop that picks per element
// does not.

/// gelu(x), exact (erf) form.
inline float fast_gelu_erf(float x) { return 0.5f * x * (1.0f + fast_erf(x * kSqrtHalf)); }

/// gelu(x), tanh approximation.
inline float fast_gelu_tanh(float x) {
  return 0.5f * x * (1.0f + fast_tanh(kSqrt2OverPi * (x + kTanhCubic * x * x * x)));
}

/// gelu'(x) of the erf form, with gelu(x) in *value.
inline float fast_gelu_erf_slope(float x, float* value) {
  const float cdf = 0.5f * (1.0f + fast_erf(x * kSqrtHalf));
  *value = x * cdf;
  return cdf + x * kInvSqrt2Pi * fast_exp(-0.5f * x * x);
}

/// gelu'(x) of the tanh form, with gelu(x) in *value.
inline float fast_gelu_tanh_slope(float x, float* value) {
  const float th = fast_tanh(kSqrt2OverPi * (x + kTanhCubic * x * x * x));
  *value = 0.5f * x * (1.0f + th);
  return 0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * kSqrt2OverPi * (1.0f + 3.0f * kTanhCubic * x * x);
}

}  // namespace mlm::model::kernels
