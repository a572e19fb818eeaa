#include "mlm/model/kernels/dropout_add_layer_norm.h"

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>

#include <cmath>
#include <vector>

#include "mlm/model/kernels/philox.h"
#include "row_math.h"

namespace mlm::model::kernels {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

/// Rows of H per parallel task.
int64_t norm_row_grain(int64_t hidden) { return rows_per_task(hidden, 16384); }

/// Two floating dtypes dispatched together: fn.template operator()<x_t, r_t>().
template <typename Fn>
void dispatch_pair(torch::ScalarType x, torch::ScalarType r, Fn&& fn) {
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, x, "dropout_add_layer_norm", [&] {
    using x_t = scalar_t;
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, r, "dropout_add_layer_norm",
                                    [&] { fn.template operator()<x_t, scalar_t>(); });
  });
}

struct DropoutAddLayerNorm : torch::autograd::Function<DropoutAddLayerNorm> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& residual,
                               const torch::Tensor& weight, const torch::Tensor& bias, double p, double eps,
                               bool training) {
    RECORD_FUNCTION("mlm::dropout_add_layer_norm", std::vector<c10::IValue>());
    const int64_t hidden = x.size(-1), rows = x.numel() / hidden;
    const auto input = x.contiguous();
    const auto skip = residual.contiguous();
    const bool drop = training && p > 0.0;
    // The mask is drawn row by row inside the loop below, element e of the whole tensor from
    // counter e as keep_mask numbers them: the same mask whatever the rows per task.
    const auto keep = torch::empty({drop ? input.numel() : 0}, x.options().dtype(torch::kUInt8));
    const uint64_t seed = drop ? next_mask_seed() : 0;
    const uint32_t threshold = drop ? drop_threshold(p) : 0;
    auto sum = torch::empty({rows, hidden}, x.options().dtype(torch::kFloat32));
    auto out = torch::empty_like(sum);
    auto mean = torch::empty({rows}, sum.options());
    auto rstd = torch::empty({rows}, sum.options());
    const float scale = drop ? static_cast<float>(1.0 / (1.0 - p)) : 1.0f;
    uint8_t* k = drop ? keep.data_ptr<uint8_t>() : nullptr;
    const float* w = weight.data_ptr<float>();
    const float* b = bias.numel() > 0 ? bias.data_ptr<float>() : nullptr;
    float* s = sum.data_ptr<float>();
    float* y = out.data_ptr<float>();
    float* mu = mean.data_ptr<float>();
    float* rs = rstd.data_ptr<float>();
    dispatch_pair(input.scalar_type(), skip.scalar_type(), [&]<typename x_t, typename r_t>() {
      const x_t* in = input.data_ptr<x_t>();
      const r_t* res = skip.data_ptr<r_t>();
      at::parallel_for(0, rows, norm_row_grain(hidden), [&](int64_t begin, int64_t end) {
        std::vector<float> centered(static_cast<size_t>(hidden)), skip_row(static_cast<size_t>(hidden));
        for (int64_t r = begin; r < end; ++r) {
          const int64_t o = r * hidden;
          float* sr = s + o;
          load_row(in + o, sr, hidden);
          load_row(res + o, skip_row.data(), hidden);
          if (k) {
            fill_keep_mask(k + o, hidden, static_cast<uint64_t>(o), seed, threshold);
            row_keep_scale(sr, k + o, scale, hidden);
          }
          row_scale_add(sr, 1.0f, skip_row.data(), hidden);
          const float m = row_sum(sr, hidden) / static_cast<float>(hidden);
          const float variance = row_center(sr, m, centered.data(), hidden) / static_cast<float>(hidden);
          const float inv = 1.0f / std::sqrt(variance + static_cast<float>(eps));
          mu[r] = m;
          rs[r] = inv;
          row_affine(centered.data(), inv, w, b, y + o, hidden);
        }
      });
    });
    ctx->save_for_backward({sum, mean, rstd, weight, keep});
    ctx->saved_data["p"] = drop ? p : 0.0;
    ctx->saved_data["x_dtype"] = static_cast<int64_t>(x.scalar_type());
    ctx->saved_data["residual_dtype"] = static_cast<int64_t>(residual.scalar_type());
    ctx->saved_data["has_bias"] = b != nullptr;
    return out.view(x.sizes());
  }

  /// One pass per row: the norm's backward, then the residual's gradient (the sum's) and x's
  /// (the sum's through the mask), each stored in its input's dtype.
  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    RECORD_FUNCTION("mlm::dropout_add_layer_norm_backward", std::vector<c10::IValue>());
    const auto saved = ctx->get_saved_variables();
    const auto &sum = saved[0], &mean = saved[1], &rstd = saved[2], &weight = saved[3], &keep = saved[4];
    const int64_t rows = sum.size(0), hidden = sum.size(1);
    const auto grad = grads[0].contiguous().to(torch::kFloat32).view({rows, hidden});
    const double p = ctx->saved_data["p"].toDouble();
    const float scale = static_cast<float>(1.0 / (1.0 - p));
    const auto x_dtype = static_cast<torch::ScalarType>(ctx->saved_data["x_dtype"].toInt());
    const auto residual_dtype = static_cast<torch::ScalarType>(ctx->saved_data["residual_dtype"].toInt());
    auto grad_x = torch::empty({rows, hidden}, sum.options().dtype(x_dtype));
    auto grad_residual = torch::empty({rows, hidden}, sum.options().dtype(residual_dtype));
    // Per-task partial sums of the weight and bias gradients, added up after the loop: fixed
    // tasks of `grain` rows, so the sums do not depend on the thread count.
    const int64_t grain = norm_row_grain(hidden);
    const int64_t tasks = (rows + grain - 1) / grain;
    auto partial_w = torch::zeros({tasks, hidden}, sum.options());
    auto partial_b = torch::zeros({tasks, hidden}, sum.options());
    const float* dy = grad.data_ptr<float>();
    const float* s = sum.data_ptr<float>();
    const float* mu = mean.data_ptr<float>();
    const float* rs = rstd.data_ptr<float>();
    const float* w = weight.data_ptr<float>();
    const uint8_t* k = keep.numel() > 0 ? keep.data_ptr<uint8_t>() : nullptr;
    float* pw = partial_w.data_ptr<float>();
    float* pb = partial_b.data_ptr<float>();
    dispatch_pair(x_dtype, residual_dtype, [&]<typename x_t, typename r_t>() {
      x_t* dx = grad_x.data_ptr<x_t>();
      r_t* dr = grad_residual.data_ptr<r_t>();
      at::parallel_for(0, tasks, 1, [&](int64_t first_task, int64_t last_task) {
        std::vector<float> xhat(static_cast<size_t>(hidden)), g(static_cast<size_t>(hidden)),
            ds(static_cast<size_t>(hidden));
        for (int64_t t = first_task; t < last_task; ++t) {
          float* tw = pw + t * hidden;
          float* tb = pb + t * hidden;
          for (int64_t r = t * grain; r < std::min(rows, (t + 1) * grain); ++r) {
            const int64_t o = r * hidden;
            float sum_gx = 0;
            const float sum_g = row_norm_backward_sums(s + o, mu[r], rs[r], dy + o, w, xhat.data(), g.data(), tw, tb,
                                                       &sum_gx, hidden);
            row_norm_backward_out(g.data(), xhat.data(), rs[r], sum_g / static_cast<float>(hidden),
                                  sum_gx / static_cast<float>(hidden), ds.data(), hidden);
            store_row(ds.data(), dr + o, hidden);
            if (k) row_keep_scale(ds.data(), k + o, scale, hidden);
            store_row(ds.data(), dx + o, hidden);
          }
        }
      });
    });
    const auto sizes = grads[0].sizes();
    auto grad_bias = ctx->saved_data["has_bias"].toBool() ? partial_b.sum(0) : torch::Tensor();
    return {grad_x.view(sizes), grad_residual.view(sizes), partial_w.sum(0), grad_bias,
            torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor dropout_add_layer_norm(const torch::Tensor& x, const torch::Tensor& residual,
                                     const torch::Tensor& weight, const torch::Tensor& bias,
                                     double p, double eps, bool training) {
  TORCH_CHECK(x.sizes() == residual.sizes(), "dropout_add_layer_norm: x ", x.sizes(), " and residual ",
              residual.sizes(), " differ");
  TORCH_CHECK(weight.scalar_type() == torch::kFloat32 && weight.numel() == x.size(-1),
              "dropout_add_layer_norm: an fp32 weight of the last dimension");
  if (!x.device().is_cpu()) {
    const auto summed = torch::dropout(x, p, training) + residual;
    return torch::layer_norm(summed.to(torch::kFloat32), {x.size(-1)}, weight, bias, eps);
  }
  // No bias travels as an empty tensor: autograd functions take no undefined inputs.
  const auto bias_or_empty = bias.defined() ? bias : torch::empty({0}, weight.options());
  return DropoutAddLayerNorm::apply(x, residual, weight, bias_or_empty, p, eps, training);
}

}  // namespace mlm::model::kernels
