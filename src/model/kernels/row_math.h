#pragma once
// Reductions and maps over one float row, the inner loops of the fused kernels: compiled for
// AVX-512, AVX2 and the baseline and picked at load time, with several partial sums so that
// the compiler may vectorise the reductions (a single running float sum it may not reorder).
// row_math.cpp is compiled with -fno-trapping-math (CMakeLists.txt): below AVX-512 GCC turns
// the selects inside exp and erf into vector blends only if no operation may trap; the values
// are the same.
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace mlm::model::kernels {

/// Rows per parallel task: about `elements` elements of work each, enough to outweigh a
/// task's start, and at least one row.
inline int64_t rows_per_task(int64_t row_length, int64_t elements) {
  return row_length >= elements ? 1 : elements / (row_length > 0 ? row_length : 1);
}

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

/// x[j] = x[j] * (keep[j] ? scale : 0) (a dropout mask applied, inverted).
void row_keep_scale(float* x, const uint8_t* keep, float scale, int64_t n);

/// x[j] = x[j] * scale, plus add[j] when add is not null.
void row_scale_add(float* x, float scale, const float* add, int64_t n);

/// centered[j] = x[j] - mean; returns the sum of centered[j]^2.
float row_center(const float* x, float mean, float* centered, int64_t n);

/// y[j] = centered[j] * inv * w[j] (+ b[j] when b is not null): a LayerNorm's output.
void row_affine(const float* centered, float inv, const float* w, const float* b, float* y, int64_t n);

/// A LayerNorm row's backward, first half: xhat = (s - mean) * inv, g = dy * w, and the
/// weight and bias gradients accumulated into tw += dy * xhat, tb += dy; returns sum(g) and
/// sets *sum_gx = sum(g * xhat).
float row_norm_backward_sums(const float* s, float mean, float inv, const float* dy, const float* w, float* xhat,
                             float* g, float* tw, float* tb, float* sum_gx, int64_t n);

/// Second half: ds[j] = inv * (g[j] - mean_g - xhat[j] * mean_gx).
void row_norm_backward_out(const float* g, const float* xhat, float inv, float mean_g, float mean_gx, float* ds,
                           int64_t n);

/// out[j] = gelu(input[j]) * gate[j] (tanh_form: GELU's tanh approximation, else erf's).
void row_gated_gelu(const float* input, const float* gate, float* out, int64_t n, bool tanh_form);

/// Its backward: d_input[j] = dy[j] * gate[j] * gelu'(input[j]), d_gate[j] = dy[j] * gelu(input[j]).
void row_gated_gelu_backward(const float* input, const float* gate, const float* dy, float* d_input, float* d_gate,
                             int64_t n, bool tanh_form);

/// One head of width 2·half rotated by its table row: y = x * cos + rotate_half(x) * sin,
/// rotate_half(x) = (-x[half:], x[:half]).
void row_rotary(const float* x, const float* cos, const float* sin, float* y, int64_t half);

/// Its transpose, the gradient: dx = g * cos + rotate_half^T(g * sin).
void row_rotary_backward(const float* g, const float* cos, const float* sin, float* dx, int64_t half);

/// The softmax backward of a row: d[j] = scale * p[j] * (d[j] - dot).
void row_softmax_backward(const float* p, float* d, float dot, float scale, int64_t n);

}  // namespace mlm::model::kernels
