#include "mlm/model/kernels/attention_dropout.h"

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>

#include <cmath>
#include <vector>

#include "row_math.h"
#include "mlm/model/kernels/philox.h"

namespace mlm::model::kernels {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

/// The bias of a score row: bias [Bb,1,Rb,S] fp32 contiguous (empty: none), read through zero
/// strides where it broadcasts.
struct BiasRows {
  const float* data = nullptr;
  int64_t batch_stride = 0, row_stride = 0;

  BiasRows(const torch::Tensor& bias, int64_t rows) {
    if (bias.numel() == 0) return;
    TORCH_CHECK(bias.dim() == 4 && bias.size(1) == 1 && (bias.size(2) == 1 || bias.size(2) == rows),
                "attention bias must be [B or 1, 1, R or 1, S], got ", bias.sizes());
    data = bias.data_ptr<float>();
    const int64_t keys = bias.size(3);
    row_stride = bias.size(2) == 1 ? 0 : keys;
    batch_stride = bias.size(0) == 1 ? 0 : bias.size(2) * keys;
  }
  const float* at(int64_t b, int64_t r) const { return data ? data + b * batch_stride + r * row_stride : nullptr; }
};

int64_t score_row_grain(int64_t keys) { return rows_per_task(keys, 8192); }

/// P = softmax(scores * scale + bias) and Pd = P * keep / (1 - p), row by row (p = 0: P alone,
/// an empty keep, and dropped is probs).
void softmax_dropout_rows(const torch::Tensor& scores, const BiasRows& bias, int64_t heads, float scale,
                          double p, uint64_t seed, torch::Tensor& probs, torch::Tensor& dropped,
                          torch::Tensor& keep) {
  RECORD_FUNCTION("mlm::softmax_dropout", std::vector<c10::IValue>());
  const int64_t keys = scores.size(-1), rows = scores.numel() / keys, queries = scores.size(-2);
  const uint32_t threshold = drop_threshold(p);
  const float inverse_keep = static_cast<float>(1.0 / (1.0 - p));
  uint8_t* kept = keep.numel() > 0 ? keep.data_ptr<uint8_t>() : nullptr;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, scores.scalar_type(), "softmax_dropout", [&] {
    const scalar_t* in = scores.data_ptr<scalar_t>();
    scalar_t* out = probs.data_ptr<scalar_t>();
    scalar_t* out_dropped = kept ? dropped.data_ptr<scalar_t>() : nullptr;
    at::parallel_for(0, rows, score_row_grain(keys), [&](int64_t begin, int64_t end) {
      std::vector<float> e(static_cast<size_t>(keys));
      for (int64_t row = begin; row < end; ++row) {
        const int64_t o = row * keys;
        const float* b = bias.at(row / (heads * queries), row % queries);
        load_row(in + o, e.data(), keys);
        row_scale_add(e.data(), scale, b, keys);
        const float norm = 1.0f / row_exp_sum(e.data(), keys, row_max(e.data(), keys));
        row_scale_add(e.data(), norm, nullptr, keys);
        store_row(e.data(), out + o, keys);
        if (!kept) continue;  // no dropout: the probabilities are what the values are weighted by
        fill_keep_mask(kept + o, keys, static_cast<uint64_t>(o), seed, threshold);
        row_keep_scale(e.data(), kept + o, inverse_keep, keys);
        store_row(e.data(), out_dropped + o, keys);
      }
    });
  });
}

/// d scores = scale * P * (dP - sum(P * dP)) with dP = dPd * keep / (1 - p), row by row.
torch::Tensor softmax_dropout_backward(const torch::Tensor& probs, const torch::Tensor& keep,
                                      const torch::Tensor& grad_dropped, float scale, double p) {
  RECORD_FUNCTION("mlm::softmax_dropout_backward", std::vector<c10::IValue>());
  const int64_t keys = probs.size(-1), rows = probs.numel() / keys;
  auto grad_scores = torch::empty_like(probs);
  const float inverse_keep = static_cast<float>(1.0 / (1.0 - p));
  const uint8_t* kept = keep.numel() > 0 ? keep.data_ptr<uint8_t>() : nullptr;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, probs.scalar_type(), "softmax_dropout_backward", [&] {
    const scalar_t* prob = probs.data_ptr<scalar_t>();
    const scalar_t* dpd = grad_dropped.data_ptr<scalar_t>();
    scalar_t* ds = grad_scores.data_ptr<scalar_t>();
    at::parallel_for(0, rows, score_row_grain(keys), [&](int64_t begin, int64_t end) {
      std::vector<float> dp(static_cast<size_t>(keys)), p32(static_cast<size_t>(keys));
      for (int64_t row = begin; row < end; ++row) {
        const int64_t o = row * keys;
        load_row(dpd + o, dp.data(), keys);
        load_row(prob + o, p32.data(), keys);
        if (kept) row_keep_scale(dp.data(), kept + o, inverse_keep, keys);
        row_softmax_backward(p32.data(), dp.data(), row_dot(p32.data(), dp.data(), keys), scale, keys);
        store_row(dp.data(), ds + o, keys);
      }
    });
  });
  return grad_scores;
}

struct DropoutAttention : torch::autograd::Function<DropoutAttention> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& q, const torch::Tensor& k,
                               const torch::Tensor& v, const torch::Tensor& bias, double p) {
    const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(q.size(-1))));
    const auto scores = at::matmul(q, k.transpose(-2, -1)).contiguous();  // [B,A,R,S]
    const bool drop = p > 0.0;
    auto probs = torch::empty_like(scores);
    auto dropped = drop ? torch::empty_like(scores) : probs;
    auto keep = torch::empty(drop ? scores.sizes() : at::IntArrayRef{0}, scores.options().dtype(torch::kUInt8));
    const auto bias32 = bias.to(torch::kFloat32).contiguous();
    softmax_dropout_rows(scores, BiasRows(bias32, q.size(2)), q.size(1), scale, p, drop ? next_mask_seed() : 0,
                         probs, dropped, keep);
    ctx->save_for_backward({q, k, v, probs, dropped, keep});
    ctx->saved_data["p"] = p;
    ctx->saved_data["scale"] = static_cast<double>(scale);
    return at::matmul(dropped, v);
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &q = saved[0], &k = saved[1], &v = saved[2], &probs = saved[3], &dropped = saved[4],
               &keep = saved[5];
    const auto grad_out = grads[0].to(q.scalar_type());
    const auto grad_dropped = at::matmul(grad_out, v.transpose(-2, -1)).contiguous();
    const auto grad_v = at::matmul(dropped.transpose(-2, -1), grad_out);
    const auto grad_scores = softmax_dropout_backward(probs, keep, grad_dropped,
                                                      static_cast<float>(ctx->saved_data["scale"].toDouble()),
                                                      ctx->saved_data["p"].toDouble());
    const auto grad_q = at::matmul(grad_scores, k);
    const auto grad_k = at::matmul(grad_scores.transpose(-2, -1), q);
    return {grad_q, grad_k, grad_v, torch::Tensor(), torch::Tensor()};
  }
};

/// Without dropout, whether to materialise the scores anyway: in bf16 and fp16 the CPU's
/// flash-attention backward runs its products at a small fraction of what oneDNN's batched
/// products reach (measured in docs/PERFORMANCE.md), so training takes the products and the
/// fused softmax while the [B,A,R,S] probabilities, kept for the backward, stay small (at 2^26
/// elements ModernBERT's global layers at 2 x 1024 took the path, and the forward lost more
/// than the backward won).
/// Inference (which saves nothing), long sequences and fp32 (whose products gain no matrix
/// units, and which stays exactly SDPA's) keep SDPA.
bool materialised_pays(const torch::Tensor& q, const torch::Tensor& k) {
  constexpr int64_t kMaxScores = int64_t{1} << 23;  // 16 MiB of bf16 probabilities per layer
  const bool reduced = q.scalar_type() == torch::kBFloat16 || q.scalar_type() == torch::kHalf;
  const bool training = torch::GradMode::is_enabled() && (q.requires_grad() || k.requires_grad());
  return reduced && training && q.size(0) * q.size(1) * q.size(2) * k.size(2) <= kMaxScores;
}

}  // namespace

torch::Tensor attention_with_dropout(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                     const torch::Tensor& bias, double p) {
  if (!q.device().is_cpu() || (p == 0.0 && !materialised_pays(q, k))) {
    std::optional<torch::Tensor> mask;
    if (bias.defined()) mask = bias.to(q.scalar_type());
    return at::scaled_dot_product_attention(q, k, v, mask, p, /*is_causal=*/false);
  }
  TORCH_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4, "attention_with_dropout: [B,A,R,D] heads, got ",
              q.sizes(), k.sizes(), v.sizes());
  // No bias travels as an empty tensor: autograd functions take no undefined inputs.
  return DropoutAttention::apply(q, k, v, bias.defined() ? bias : torch::empty({0}, q.options()), p);
}

}  // namespace mlm::model::kernels
