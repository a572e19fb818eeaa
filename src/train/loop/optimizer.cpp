#include "mlm/train/loop/optimizer.h"

#include <ATen/ops/_fused_adamw.h>

namespace mlm::train {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

ParameterGroups split_parameters(const torch::nn::Module& module) {
  ParameterGroups groups;
  for (const auto& item : module.named_parameters(/*recurse=*/true)) {
    const auto& param = item.value();
    if (!param.requires_grad()) continue;
    // 1-d covers biases and LayerNorm gamma/beta; the name check keeps a bias decay-free
    // even if a layer ever stores it with an extra dimension.
    const bool no_decay = param.dim() < 2 || ends_with(item.key(), "bias");
    if (no_decay) {
      groups.no_decay_names.push_back(item.key());
      groups.no_decay.push_back(param);
    } else {
      groups.decay_names.push_back(item.key());
      groups.decay.push_back(param);
    }
  }
  return groups;
}

std::unique_ptr<FusedAdamW> make_adamw(const torch::nn::Module& module,
                                                const config::OptimConfig& optim) {
  auto groups = split_parameters(module);
  auto options = [&](double weight_decay) {
    return torch::optim::AdamWOptions(optim.learning_rate)
        .betas({optim.betas[0], optim.betas[1]})
        .eps(optim.eps)
        .weight_decay(weight_decay);
  };
  std::vector<torch::optim::OptimizerParamGroup> param_groups;
  param_groups.emplace_back(groups.decay,
                            std::make_unique<torch::optim::AdamWOptions>(options(optim.weight_decay)));
  param_groups.emplace_back(groups.no_decay,
                            std::make_unique<torch::optim::AdamWOptions>(options(0.0)));
  return std::make_unique<FusedAdamW>(std::move(param_groups), options(optim.weight_decay));
}

torch::Tensor FusedAdamW::step(LossClosure closure) {
  torch::Tensor loss;
  if (closure) {
    torch::AutoGradMode enable_grad(true);
    loss = closure();
  }
  step_scaled(1.0);
  return loss;
}

void FusedAdamW::step_scaled(double grad_divisor) {
  torch::NoGradGuard no_grad;
  for (auto& group : param_groups()) {
    const auto& options = static_cast<const torch::optim::AdamWOptions&>(group.options());
    TORCH_CHECK(!options.amsgrad(), "FusedAdamW: amsgrad is not supported");
    std::vector<torch::Tensor> params, grads, exp_avgs, exp_avg_sqs, steps;
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto& slot = state_[p.unsafeGetTensorImpl()];
      if (!slot) {
        auto fresh = std::make_unique<torch::optim::AdamWParamState>();
        fresh->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        fresh->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        slot = std::move(fresh);
      }
      auto& state = static_cast<torch::optim::AdamWParamState&>(*slot);
      state.step(state.step() + 1);
      params.push_back(p);
      grads.push_back(p.grad());
      exp_avgs.push_back(state.exp_avg());
      exp_avg_sqs.push_back(state.exp_avg_sq());
      // The kernel reads the step count (bias correction) from a float tensor per parameter.
      steps.push_back(torch::full({}, static_cast<double>(state.step()), p.options().dtype(torch::kFloat32)));
    }
    if (params.empty()) continue;
    std::optional<torch::Tensor> grad_scale;
    if (grad_divisor != 1.0) grad_scale = torch::full({}, grad_divisor, params[0].options().dtype(torch::kFloat32));
    at::_fused_adamw_(params, grads, exp_avgs, exp_avg_sqs, /*max_exp_avg_sqs=*/{}, steps, options.lr(),
                      std::get<0>(options.betas()), std::get<1>(options.betas()), options.weight_decay(),
                      options.eps(), /*amsgrad=*/false, /*maximize=*/false, grad_scale);
  }
}

void set_learning_rate(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

}  // namespace mlm::train
