#pragma once
// AdamW with decoupled weight decay in two parameter groups: decay for the weight matrices of
// Linear and Embedding layers, none for biases and LayerNorm. The groups are built from
// named_parameters() in module order, which is what optimizer state is restored by.
#include <torch/torch.h>

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "mlm/config/run_config.h"

namespace mlm::train {

struct ParameterGroups {
  std::vector<std::string> decay_names;
  std::vector<torch::Tensor> decay;
  std::vector<std::string> no_decay_names;
  std::vector<torch::Tensor> no_decay;

  /// Every parameter in the optimizer's order: decay, then no decay.
  std::vector<torch::Tensor> all() const {
    auto params = decay;
    params.insert(params.end(), no_decay.begin(), no_decay.end());
    return params;
  }
};

/// Decay: trainable parameters of two or more dimensions. No decay: biases, LayerNorm
/// weights and biases (every 1-d parameter). Order: named_parameters() order.
ParameterGroups split_parameters(const torch::nn::Module& module);

/// torch::optim::AdamW whose step is ATen's fused AdamW kernel (_fused_adamw_: one pass over
/// each tensor, vectorised, on CPU and CUDA) instead of six element-wise operations per
/// parameter. Same state (AdamWParamState: step, exp_avg, exp_avg_sq), so checkpoints of either
/// load into the other; the same update to float rounding. No amsgrad.
///
/// A step needs no host read: the clip divisor and the skip flag are device tensors the kernel
/// reads, and the step counts live on the device too (a float32 per parameter, as PyTorch's
/// fused path keeps them). AdamWParamState::step() is written from them by
/// publish_step_counts(), which save() calls, and load() rebuilds them from it.
class FusedAdamW : public torch::optim::AdamW {
 public:
  using torch::optim::AdamW::AdamW;
  torch::Tensor step(LossClosure closure = nullptr) override;
  /// A step on the gradients divided by `grad_divisor` (clipping, grad_clip.h; undefined: 1),
  /// inside the kernel: the gradients themselves are not rewritten first. Where `found_inf`
  /// (a 0-d 0/1 tensor; undefined: 0) is 1 nothing moves: parameters, moments and step counts
  /// stay as they were.
  void step_scaled(const torch::Tensor& grad_divisor, const torch::Tensor& found_inf = {});

  /// Writes the device step counts into each AdamWParamState (one host read).
  void publish_step_counts() const;
  void save(torch::serialize::OutputArchive& archive) const override;
  void load(torch::serialize::InputArchive& archive) override;

 private:
  /// Each parameter's step count on its device (by TensorImpl, as state_ is keyed), made from
  /// AdamWParamState::step() when missing.
  torch::Tensor& step_count(const torch::Tensor& param, const torch::optim::AdamWParamState& state);

  std::unordered_map<void*, torch::Tensor> step_counts_;
};

/// Group 0 = decay (optim.weight_decay), group 1 = no decay (0).
std::unique_ptr<FusedAdamW> make_adamw(const torch::nn::Module& module,
                                                const config::OptimConfig& optim);

/// Sets the learning rate of every group (called before each step; the schedule is a pure
/// function of the step, so no scheduler state exists).
void set_learning_rate(torch::optim::Optimizer& optimizer, double lr);

}  // namespace mlm::train
