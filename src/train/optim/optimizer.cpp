#include "mlm/train/optim/optimizer.h"

namespace mlm::train {
namespace {

bool name_ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

torch::optim::AdamWOptions group_options(const config::OptimConfig& optim, double weight_decay) {
  return torch::optim::AdamWOptions(optim.learning_rate)
      .betas({optim.betas[0], optim.betas[1]})
      .eps(optim.eps)
      .weight_decay(weight_decay);
}

std::vector<torch::optim::OptimizerParamGroup> decay_groups(const torch::nn::Module& module,
                                                            const config::OptimConfig& optim,
                                                            const torch::nn::Module* extra = nullptr) {
  auto groups = split_parameters(module, extra);
  std::vector<torch::optim::OptimizerParamGroup> param_groups;
  param_groups.emplace_back(groups.decay, std::make_unique<torch::optim::AdamWOptions>(
                                              group_options(optim, optim.weight_decay)));
  param_groups.emplace_back(groups.no_decay,
                            std::make_unique<torch::optim::AdamWOptions>(group_options(optim, 0.0)));
  return param_groups;
}

}  // namespace

ParameterGroups split_parameters(const torch::nn::Module& module, const torch::nn::Module* extra) {
  ParameterGroups groups;
  auto named = module.named_parameters(/*recurse=*/true);
  if (extra) {
    for (const auto& item : extra->named_parameters(/*recurse=*/true)) named.insert("extra." + item.key(), item.value());
  }
  for (const auto& item : named) {
    const auto& param = item.value();
    if (!param.requires_grad()) continue;
    // 1-d covers biases and LayerNorm gamma/beta; the name check keeps a bias decay-free
    // even if a layer ever stores it with an extra dimension.
    const bool no_decay = param.dim() < 2 || name_ends_with(item.key(), "bias");
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

std::unique_ptr<TrainingOptimizer> make_optimizer(const torch::nn::Module& module,
                                                  const config::OptimConfig& optim,
                                                  const torch::nn::Module* extra) {
  auto groups = decay_groups(module, optim, extra);
  const auto defaults = group_options(optim, optim.weight_decay);
  switch (optim.type) {
    case config::OptimizerType::adamw:
      return std::make_unique<FusedAdamW>(std::move(groups), defaults);
    case config::OptimizerType::lamb:
      return std::make_unique<Lamb>(std::move(groups), defaults,
                                    LambSettings{optim.lamb_bias_correction, optim.lamb_adapt_no_decay});
    case config::OptimizerType::stable_adamw:
      return std::make_unique<StableAdamW>(
          std::move(groups), defaults,
          StableAdamWSettings{optim.stable_adamw_decouple_lr, optim.learning_rate});
  }
  throw std::logic_error("make_optimizer: unknown optim.type");
}

std::unique_ptr<FusedAdamW> make_adamw(const torch::nn::Module& module,
                                       const config::OptimConfig& optim) {
  return std::make_unique<FusedAdamW>(decay_groups(module, optim), group_options(optim, optim.weight_decay));
}

void set_learning_rate(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

}  // namespace mlm::train
