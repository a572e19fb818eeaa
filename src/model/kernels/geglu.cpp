#include "mlm/model/kernels/geglu.h"

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>

#include <vector>

#include "mlm/model/layers.h"
#include "row_math.h"

namespace mlm::model::kernels {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

int64_t gated_rows_per_task(int64_t width) { return rows_per_task(width, 16384); }

struct GatedActivation : torch::autograd::Function<GatedActivation> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& projected, bool tanh_form) {
    RECORD_FUNCTION("mlm::gated_activation", std::vector<c10::IValue>());
    const auto in = projected.contiguous();
    const int64_t width = in.size(-1) / 2, rows = in.numel() / in.size(-1);
    auto sizes = in.sizes().vec();
    sizes.back() = width;
    auto out = torch::empty(sizes, in.options());
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, in.scalar_type(), "gated_activation", [&] {
      const scalar_t* src = in.data_ptr<scalar_t>();
      scalar_t* dst = out.data_ptr<scalar_t>();
      at::parallel_for(0, rows, gated_rows_per_task(width), [&](int64_t begin, int64_t end) {
        std::vector<float> both(static_cast<size_t>(2 * width)), result(static_cast<size_t>(width));
        for (int64_t r = begin; r < end; ++r) {
          load_row(src + r * 2 * width, both.data(), 2 * width);
          row_gated_gelu(both.data(), both.data() + width, result.data(), width, tanh_form);
          store_row(result.data(), dst + r * width, width);
        }
      });
    });
    ctx->save_for_backward({in});
    ctx->saved_data["tanh_form"] = tanh_form;
    return out;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    RECORD_FUNCTION("mlm::gated_activation_backward", std::vector<c10::IValue>());
    const auto in = ctx->get_saved_variables()[0];
    const bool tanh_form = ctx->saved_data["tanh_form"].toBool();
    const int64_t width = in.size(-1) / 2, rows = in.numel() / in.size(-1);
    const auto grad = grads[0].contiguous();
    auto grad_in = torch::empty_like(in);
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, in.scalar_type(), "gated_activation_backward", [&] {
      using in_t = scalar_t;
      const in_t* src = in.data_ptr<in_t>();
      in_t* dst = grad_in.data_ptr<in_t>();
      AT_DISPATCH_FLOATING_TYPES_AND2(at::kBFloat16, at::kHalf, grad.scalar_type(), "gated_activation_backward", [&] {
        const scalar_t* dy = grad.data_ptr<scalar_t>();
        at::parallel_for(0, rows, gated_rows_per_task(width), [&](int64_t begin, int64_t end) {
          std::vector<float> both(static_cast<size_t>(2 * width)), grad_both(static_cast<size_t>(2 * width)),
              dy_row(static_cast<size_t>(width));
          for (int64_t r = begin; r < end; ++r) {
            load_row(src + r * 2 * width, both.data(), 2 * width);
            load_row(dy + r * width, dy_row.data(), width);
            row_gated_gelu_backward(both.data(), both.data() + width, dy_row.data(), grad_both.data(),
                                    grad_both.data() + width, width, tanh_form);
            store_row(grad_both.data(), dst + r * 2 * width, 2 * width);
          }
        });
      });
    });
    return {grad_in, torch::Tensor()};
  }
};

}  // namespace

torch::Tensor gated_activation(const torch::Tensor& projected, config::Activation act) {
  TORCH_CHECK(projected.dim() >= 1 && projected.size(-1) % 2 == 0,
              "gated_activation: the last dimension holds input and gate, an even width; got ", projected.sizes());
  const bool gelu_family = act == config::Activation::gelu || act == config::Activation::gelu_tanh;
  if (!projected.device().is_cpu() || !gelu_family) {
    const auto parts = projected.chunk(2, -1);
    return activation(parts[0], act) * parts[1];
  }
  return GatedActivation::apply(projected, act == config::Activation::gelu_tanh);
}

}  // namespace mlm::model::kernels
