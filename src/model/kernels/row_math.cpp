#include "row_math.h"

#include "fast_exp.h"

namespace mlm::model::kernels {
namespace {

constexpr int kPartials = 16;  // one AVX-512 register of floats

float add_partials(const float* partial) {
  float total = 0;
  for (int i = 0; i < kPartials; ++i) total += partial[i];
  return total;
}

}  // namespace

__attribute__((target_clones("avx512f", "avx2", "default")))
float row_max(const float* x, int64_t n) {
  float partial[kPartials];
  for (int i = 0; i < kPartials; ++i) partial[i] = x[0];
  int64_t j = 0;
  for (; j + kPartials <= n; j += kPartials) {
    for (int i = 0; i < kPartials; ++i) partial[i] = partial[i] > x[j + i] ? partial[i] : x[j + i];
  }
  float top = x[0];
  for (int i = 0; i < kPartials; ++i) top = top > partial[i] ? top : partial[i];
  for (; j < n; ++j) top = top > x[j] ? top : x[j];
  return top;
}

__attribute__((target_clones("avx512f", "avx2", "default")))
float row_exp_sum(float* x, int64_t n, float shift) {
  float partial[kPartials] = {};
  int64_t j = 0;
  for (; j + kPartials <= n; j += kPartials) {
    for (int i = 0; i < kPartials; ++i) {
      x[j + i] = fast_exp(x[j + i] - shift);
      partial[i] += x[j + i];
    }
  }
  float total = add_partials(partial);
  for (; j < n; ++j) {
    x[j] = fast_exp(x[j] - shift);
    total += x[j];
  }
  return total;
}

__attribute__((target_clones("avx512f", "avx2", "default")))
void row_scaled_exp(float* x, int64_t n, float shift, float scale) {
  for (int64_t j = 0; j < n; ++j) x[j] = scale * fast_exp(x[j] - shift);
}

__attribute__((target_clones("avx512f", "avx2", "default")))
float row_dot(const float* x, const float* y, int64_t n) {
  float partial[kPartials] = {};
  int64_t j = 0;
  for (; j + kPartials <= n; j += kPartials) {
    for (int i = 0; i < kPartials; ++i) partial[i] += x[j + i] * y[j + i];
  }
  float total = add_partials(partial);
  for (; j < n; ++j) total += x[j] * y[j];
  return total;
}

__attribute__((target_clones("avx512f", "avx2", "default")))
float row_sum(const float* x, int64_t n) {
  float partial[kPartials] = {};
  int64_t j = 0;
  for (; j + kPartials <= n; j += kPartials) {
    for (int i = 0; i < kPartials; ++i) partial[i] += x[j + i];
  }
  float total = add_partials(partial);
  for (; j < n; ++j) total += x[j];
  return total;
}

}  // namespace mlm::model::kernels
