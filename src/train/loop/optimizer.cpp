#include "mlm/train/loop/optimizer.h"

#include <ATen/ops/_foreach_add.h>
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
  step_scaled({});
  return loss;
}

torch::Tensor& FusedAdamW::step_count(const torch::Tensor& param,
                                      const torch::optim::AdamWParamState& state) {
  auto& count = step_counts_[param.unsafeGetTensorImpl()];
  if (!count.defined()) {
    count = torch::full({}, static_cast<double>(state.step()), param.options().dtype(torch::kFloat32));
  }
  return count;
}

void FusedAdamW::step_scaled(const torch::Tensor& grad_divisor, const torch::Tensor& found_inf) {
  torch::NoGradGuard no_grad;
  // The kernel reads both as float32 on the parameters' device.
  auto as_kernel_scalar = [&](const torch::Tensor& t, const torch::Tensor& like) -> std::optional<torch::Tensor> {
    if (!t.defined()) return std::nullopt;
    return t.to(like.options().dtype(torch::kFloat32));
  };
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
      params.push_back(p);
      grads.push_back(p.grad());
      exp_avgs.push_back(state.exp_avg());
      exp_avg_sqs.push_back(state.exp_avg_sq());
      steps.push_back(step_count(p, state));
    }
    if (params.empty()) continue;
    const auto grad_scale = as_kernel_scalar(grad_divisor, params[0]);
    const auto skip = as_kernel_scalar(found_inf, params[0]);
    // The count the kernel's bias correction reads; a skipped step adds 0 (the kernel returns
    // before reading it).
    if (skip) {
      at::_foreach_add_(steps, 1 - *skip);
    } else {
      at::_foreach_add_(steps, 1);
    }
    at::_fused_adamw_(params, grads, exp_avgs, exp_avg_sqs, /*max_exp_avg_sqs=*/{}, steps, options.lr(),
                      std::get<0>(options.betas()), std::get<1>(options.betas()), options.weight_decay(),
                      options.eps(), /*amsgrad=*/false, /*maximize=*/false, grad_scale, skip);
  }
}

void FusedAdamW::publish_step_counts() const {
  if (step_counts_.empty()) return;
  std::vector<void*> keys;
  std::vector<torch::Tensor> counts;
  for (const auto& [key, count] : step_counts_) {
    keys.push_back(key);
    counts.push_back(count.view({1}));
  }
  const auto read = torch::cat(counts).to(torch::kCPU, torch::kFloat64);
  const auto* values = read.data_ptr<double>();
  for (size_t i = 0; i < keys.size(); ++i) {
    // state_ owns the states; only their step field changes (a mirror of the device count).
    auto& state = static_cast<torch::optim::AdamWParamState&>(*state_.at(keys[i]));
    state.step(static_cast<int64_t>(values[i]));
  }
}

void FusedAdamW::save(torch::serialize::OutputArchive& archive) const {
  publish_step_counts();
  torch::optim::AdamW::save(archive);
}

void FusedAdamW::load(torch::serialize::InputArchive& archive) {
  torch::optim::AdamW::load(archive);
  step_counts_.clear();  // made again from the loaded states at the next step
}

void set_learning_rate(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

}  // namespace mlm::train
