#include "row_math.h"

#include "fast_exp.h"
#include "fast_gelu.h"

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

#define MLM_ROW_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

MLM_ROW_CLONES void row_keep_scale(float* x, const uint8_t* keep, float scale, int64_t n) {
  for (int64_t j = 0; j < n; ++j) x[j] *= keep[j] ? scale : 0.0f;
}

MLM_ROW_CLONES void row_scale_add(float* x, float scale, const float* add, int64_t n) {
  if (add) {
    for (int64_t j = 0; j < n; ++j) x[j] = x[j] * scale + add[j];
  } else {
    for (int64_t j = 0; j < n; ++j) x[j] *= scale;
  }
}

MLM_ROW_CLONES float row_center(const float* x, float mean, float* centered, int64_t n) {
  float partial[kPartials] = {};
  int64_t j = 0;
  for (; j + kPartials <= n; j += kPartials) {
    for (int i = 0; i < kPartials; ++i) {
      centered[j + i] = x[j + i] - mean;
      partial[i] += centered[j + i] * centered[j + i];
    }
  }
  float total = add_partials(partial);
  for (; j < n; ++j) {
    centered[j] = x[j] - mean;
    total += centered[j] * centered[j];
  }
  return total;
}

MLM_ROW_CLONES void row_affine(const float* centered, float inv, const float* w, const float* b, float* y, int64_t n) {
  if (b) {
    for (int64_t j = 0; j < n; ++j) y[j] = centered[j] * inv * w[j] + b[j];
  } else {
    for (int64_t j = 0; j < n; ++j) y[j] = centered[j] * inv * w[j];
  }
}

MLM_ROW_CLONES float row_norm_backward_sums(const float* s, float mean, float inv, const float* dy, const float* w,
                                            float* xhat, float* g, float* tw, float* tb, float* sum_gx, int64_t n) {
  float partial_g[kPartials] = {}, partial_gx[kPartials] = {};
  int64_t j = 0;
  for (; j + kPartials <= n; j += kPartials) {
    for (int i = 0; i < kPartials; ++i) {
      const int64_t k = j + i;
      xhat[k] = (s[k] - mean) * inv;
      g[k] = dy[k] * w[k];
      tw[k] += dy[k] * xhat[k];
      tb[k] += dy[k];
      partial_g[i] += g[k];
      partial_gx[i] += g[k] * xhat[k];
    }
  }
  float total_g = add_partials(partial_g), total_gx = add_partials(partial_gx);
  for (; j < n; ++j) {
    xhat[j] = (s[j] - mean) * inv;
    g[j] = dy[j] * w[j];
    tw[j] += dy[j] * xhat[j];
    tb[j] += dy[j];
    total_g += g[j];
    total_gx += g[j] * xhat[j];
  }
  *sum_gx = total_gx;
  return total_g;
}

MLM_ROW_CLONES void row_norm_backward_out(const float* g, const float* xhat, float inv, float mean_g, float mean_gx,
                                          float* ds, int64_t n) {
  for (int64_t j = 0; j < n; ++j) ds[j] = inv * (g[j] - mean_g - xhat[j] * mean_gx);
}

MLM_ROW_CLONES void row_gated_gelu(const float* input, const float* gate, float* out, int64_t n, bool tanh_form) {
  // One loop per form: a loop that picks the form per element does not vectorise.
  if (tanh_form) {
    for (int64_t j = 0; j < n; ++j) out[j] = fast_gelu_tanh(input[j]) * gate[j];
  } else {
    for (int64_t j = 0; j < n; ++j) out[j] = fast_gelu_erf(input[j]) * gate[j];
  }
}

MLM_ROW_CLONES void row_gated_gelu_backward(const float* input, const float* gate, const float* dy, float* d_input,
                                            float* d_gate, int64_t n, bool tanh_form) {
  float value;
  if (tanh_form) {
    for (int64_t j = 0; j < n; ++j) {
      d_input[j] = dy[j] * gate[j] * fast_gelu_tanh_slope(input[j], &value);
      d_gate[j] = dy[j] * value;
    }
  } else {
    for (int64_t j = 0; j < n; ++j) {
      d_input[j] = dy[j] * gate[j] * fast_gelu_erf_slope(input[j], &value);
      d_gate[j] = dy[j] * value;
    }
  }
}

MLM_ROW_CLONES void row_rotary(const float* x, const float* cos, const float* sin, float* y, int64_t half) {
  for (int64_t j = 0; j < half; ++j) y[j] = x[j] * cos[j] - x[j + half] * sin[j];
  for (int64_t j = 0; j < half; ++j) y[j + half] = x[j + half] * cos[j + half] + x[j] * sin[j + half];
}

MLM_ROW_CLONES void row_rotary_backward(const float* g, const float* cos, const float* sin, float* dx, int64_t half) {
  for (int64_t j = 0; j < half; ++j) dx[j] = g[j] * cos[j] + g[j + half] * sin[j + half];
  for (int64_t j = 0; j < half; ++j) dx[j + half] = g[j + half] * cos[j + half] - g[j] * sin[j];
}

MLM_ROW_CLONES void row_softmax_backward(const float* p, float* d, float dot, float scale, int64_t n) {
  for (int64_t j = 0; j < n; ++j) d[j] = scale * p[j] * (d[j] - dot);
}

}  // namespace mlm::model::kernels
