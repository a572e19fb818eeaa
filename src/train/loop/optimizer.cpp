#include "mlm/train/loop/optimizer.h"

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

std::unique_ptr<torch::optim::AdamW> make_adamw(const torch::nn::Module& module,
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
  return std::make_unique<torch::optim::AdamW>(std::move(param_groups), options(optim.weight_decay));
}

void set_learning_rate(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

}  // namespace mlm::train
