#pragma once
// Reductions and maps over one float row, the inner loops of the fused kernels: compiled for
// AVX-512, AVX2 and the baseline and picked at load time, with several partial sums so that
// the compiler may vectorise the reductions (a single running float sum it may not reorder).
#include <cstdint>

namespace mlm::model::kernels {

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
