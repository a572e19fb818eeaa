#pragma once
// Reductions and maps over one float row, the inner loops of the fused kernels: compiled for
// AVX-512, AVX2 and the baseline and picked at load time, with several partial sums so that
// the compiler may vectorise the reductions (a single running float sum it may not reorder).
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace mlm::model::kernels {

/// bf16 bits -> float (exact), and float -> bf16 bits rounded to nearest even (NaN stays a
/// quiet NaN): what c10::BFloat16's conversions compute, in loops the compiler vectorises.
void bf16_to_float(const uint16_t* in, float* out, int64_t n);
void float_to_bf16(const float* in, uint16_t* out, int64_t n);

/// A row of any floating dtype into floats, and back.
template <typename scalar_t>
inline void load_row(const scalar_t* in, float* out, int64_t n) {
  if constexpr (std::is_same_v<scalar_t, float>) {
    std::memcpy(out, in, static_cast<size_t>(n) * sizeof(float));
  } else if constexpr (std::is_same_v<scalar_t, c10::BFloat16>) {
    bf16_to_float(reinterpret_cast<const uint16_t*>(in), out, n);
  } else {
    for (int64_t j = 0; j < n; ++j) out[j] = static_cast<float>(in[j]);
  }
}

template <typename scalar_t>
inline void store_row(const float* in, scalar_t* out, int64_t n) {
  if constexpr (std::is_same_v<scalar_t, float>) {
    std::memcpy(out, in, static_cast<size_t>(n) * sizeof(float));
  } else if constexpr (std::is_same_v<scalar_t, c10::BFloat16>) {
    float_to_bf16(in, reinterpret_cast<uint16_t*>(out), n);
  } else {
    for (int64_t j = 0; j < n; ++j) out[j] = static_cast<scalar_t>(in[j]);
  }
}

/// The largest of x[0..n) (n >= 1).
float row_max(const float* x, int64_t n);

/// x[j] = exp(x[j] - shift) for every j; returns their sum.
float row_exp_sum(float* x, int64_t n, float shift);

/// x[j] = scale * exp(x[j] - shift) for every j.
void row_scaled_exp(float* x, int64_t n, float shift, float scale);

/// sum of x[j] * y[j].
float row_dot(const float* x, const float* y, int64_t n);

/// sum of x[j].
float row_sum(const float* x, int64_t n);

}  // namespace mlm::model::kernels
