#pragma once
// The optimizer of a run (optim.type): AdamW, LAMB or StableAdamW over two parameter groups,
// decay for the weight matrices of Linear and Embedding layers, none for biases and
// LayerNorm. The groups are built from named_parameters() in module order, which is what
// optimizer state is restored by.
#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "mlm/config/sections/optim.h"
#include "mlm/train/optim/fused_adamw.h"
#include "mlm/train/optim/lamb.h"
#include "mlm/train/optim/stable_adamw.h"
#include "mlm/train/optim/training_optimizer.h"

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
/// weights and biases (every 1-d parameter). Order: named_parameters() order, then `extra`'s
/// (a trained part outside the model, e.g. distillation's projection) in each group.
ParameterGroups split_parameters(const torch::nn::Module& module, const torch::nn::Module* extra = nullptr);

/// optim.type over the module's groups (and `extra`'s, see split_parameters): group 0 = decay
/// (optim.weight_decay), group 1 = no decay (0); lr, betas and eps from optim.
std::unique_ptr<TrainingOptimizer> make_optimizer(const torch::nn::Module& module,
                                                  const config::OptimConfig& optim,
                                                  const torch::nn::Module* extra = nullptr);

/// AdamW whatever optim.type says (fine-tuning), with make_optimizer's groups.
std::unique_ptr<FusedAdamW> make_adamw(const torch::nn::Module& module,
                                       const config::OptimConfig& optim);

/// Sets the learning rate of every group (called before each step; the schedule is a pure
/// function of the step, so no scheduler state exists).
void set_learning_rate(torch::optim::Optimizer& optimizer, double lr);

}  // namespace mlm::train
