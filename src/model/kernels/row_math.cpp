#include "row_math.h"

#include "fast_exp.h"

#include <cstring>

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
void bf16_to_float(const uint16_t* in, float* out, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    const uint32_t bits = static_cast<uint32_t>(in[j]) << 16;
    std::memcpy(out + j, &bits, sizeof(float));
  }
}

__attribute__((target_clones("avx512f", "avx2", "default")))
void float_to_bf16(const float* in, uint16_t* out, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    uint32_t bits;
    std::memcpy(&bits, in + j, sizeof(float));
    const uint32_t rounded = (bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16;
    const bool nan = (bits & 0x7FFFFFFFu) > 0x7F800000u;
    out[j] = static_cast<uint16_t>(nan ? 0x7FC0u : rounded);
  }
}

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
