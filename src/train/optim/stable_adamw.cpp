#include "mlm/train/optim/stable_adamw.h"

#include <cmath>

#include "adam_moments.h"

namespace mlm::train {

StableAdamW::StableAdamW(std::vector<torch::optim::OptimizerParamGroup> param_groups,
                         torch::optim::AdamWOptions defaults, StableAdamWSettings settings)
    : TrainingOptimizer(std::move(param_groups), std::move(defaults)), settings_(settings) {
  TORCH_CHECK(!settings_.decouple_lr || settings_.max_lr > 0,
              "StableAdamW: decouple_lr needs the peak learning rate, got max_lr ", settings_.max_lr);
}

void StableAdamW::step_scaled(const torch::Tensor& grad_divisor, const torch::Tensor& found_inf) {
  torch::NoGradGuard no_grad;
  for (auto& group : param_groups()) {
    const auto& options = adamw_options(group);
    auto t = group_tensors(group);
    if (t.empty()) continue;
    const auto [beta1, beta2] = options.betas();
    const auto moments = advance_moments(t.grads, t.exp_avgs, t.exp_avg_sqs, t.steps, beta1, beta2,
                                         /*bias_correction=*/true, grad_divisor, found_inf);
    const double eps = options.eps();
    auto corrected_v = torch::_foreach_div(t.exp_avg_sqs, moments.bias_correction2);

    // rms = ||g / sqrt(max(v^, eps^2))|| / sqrt(numel): one norm per tensor.
    auto scaled = torch::_foreach_maximum(corrected_v, eps * eps);
    torch::_foreach_sqrt_(scaled);
    scaled = torch::_foreach_div(moments.grads, scaled);
    std::vector<c10::Scalar> root_numels;  // host scalars: no copy to the device
    for (const auto& p : t.params) root_numels.emplace_back(std::sqrt(static_cast<double>(p.numel())));
    const auto rms = torch::stack(torch::_foreach_div(torch::_foreach_norm(scaled), root_numels));
    // lr_t * keep per tensor: a skipped step (g zeroed, keep 0) moves nothing.
    const auto step_size = torch::full_like(rms, options.lr()) / rms.clamp_min(1) * moments.keep;

    if (options.weight_decay() != 0) {
      const double per_lr = settings_.decouple_lr ? options.weight_decay() / settings_.max_lr
                                                  : options.weight_decay();
      torch::_foreach_mul_(t.params, (1 - step_size * per_lr).unbind(0));
    }
    auto& denominator = corrected_v;
    torch::_foreach_sqrt_(denominator);
    torch::_foreach_add_(denominator, eps);
    auto update = torch::_foreach_div(t.exp_avgs, moments.bias_correction1);
    torch::_foreach_div_(update, denominator);
    torch::_foreach_mul_(update, step_size.unbind(0));
    torch::_foreach_sub_(t.params, update);
  }
}

}  // namespace mlm::train
