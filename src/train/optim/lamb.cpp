#include "mlm/train/optim/lamb.h"

#include "adam_moments.h"

namespace mlm::train {

Lamb::Lamb(std::vector<torch::optim::OptimizerParamGroup> param_groups,
           torch::optim::AdamWOptions defaults, LambSettings settings)
    : TrainingOptimizer(std::move(param_groups), std::move(defaults)), settings_(settings) {}

void Lamb::step_scaled(const torch::Tensor& grad_divisor, const torch::Tensor& found_inf) {
  torch::NoGradGuard no_grad;
  for (auto& group : param_groups()) {
    const auto& options = adamw_options(group);
    auto t = group_tensors(group);
    if (t.empty()) continue;
    const auto [beta1, beta2] = options.betas();
    const auto moments = advance_moments(t.grads, t.exp_avgs, t.exp_avg_sqs, t.steps, beta1, beta2,
                                         settings_.bias_correction, grad_divisor, found_inf);

    // u = m^ / (sqrt(v^) + eps) + wd * w
    auto denominator = torch::_foreach_div(t.exp_avg_sqs, moments.bias_correction2);
    torch::_foreach_sqrt_(denominator);
    torch::_foreach_add_(denominator, options.eps());
    auto update = torch::_foreach_div(t.exp_avgs, moments.bias_correction1);
    torch::_foreach_div_(update, denominator);
    if (options.weight_decay() != 0) torch::_foreach_add_(update, t.params, options.weight_decay());

    // lr * keep, times ||w|| / ||u|| where the ratio applies (the norms of w before the step).
    const auto step_size = moments.keep * options.lr();
    // apex's rule: the ratio where the group decays (or everywhere under use_nvlamb).
    if (options.weight_decay() != 0 || settings_.adapt_no_decay) {
      const auto weight_norms = torch::stack(torch::_foreach_norm(t.params));
      const auto update_norms = torch::stack(torch::_foreach_norm(update));
      const auto ratio = torch::where((weight_norms > 0) & (update_norms > 0),
                                      weight_norms / update_norms, torch::ones_like(weight_norms));
      torch::_foreach_mul_(update, (ratio * step_size).unbind(0));
    } else {
      torch::_foreach_mul_(update, step_size);
    }
    torch::_foreach_sub_(t.params, update);
  }
}

}  // namespace mlm::train
