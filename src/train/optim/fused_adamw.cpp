#include "mlm/train/optim/fused_adamw.h"

#include <ATen/ops/_foreach_add.h>
#include <ATen/ops/_fused_adamw.h>

namespace mlm::train {

void FusedAdamW::step_scaled(const torch::Tensor& grad_divisor, const torch::Tensor& found_inf) {
  torch::NoGradGuard no_grad;
  // The kernel reads both as float32 on the parameters' device.
  auto as_kernel_scalar = [&](const torch::Tensor& t, const torch::Tensor& like) -> std::optional<torch::Tensor> {
    if (!t.defined()) return std::nullopt;
    return t.to(like.options().dtype(torch::kFloat32));
  };
  for (auto& group : param_groups()) {
    const auto& options = adamw_options(group);
    TORCH_CHECK(!options.amsgrad(), "FusedAdamW: amsgrad is not supported");
    auto t = group_tensors(group);
    if (t.empty()) continue;
    const auto grad_scale = as_kernel_scalar(grad_divisor, t.params[0]);
    const auto skip = as_kernel_scalar(found_inf, t.params[0]);
    // The count the kernel's bias correction reads; a skipped step adds 0 (the kernel returns
    // before reading it).
    if (skip) {
      at::_foreach_add_(t.steps, 1 - *skip);
    } else {
      at::_foreach_add_(t.steps, 1);
    }
    at::_fused_adamw_(t.params, t.grads, t.exp_avgs, t.exp_avg_sqs, /*max_exp_avg_sqs=*/{}, t.steps,
                      options.lr(), std::get<0>(options.betas()), std::get<1>(options.betas()),
                      options.weight_decay(), options.eps(), /*amsgrad=*/false, /*maximize=*/false,
                      grad_scale, skip);
  }
}

}  // namespace mlm::train
