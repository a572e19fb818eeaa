#pragma once
// AdamW whose step is ATen's fused AdamW kernel (_fused_adamw_: one pass over each tensor,
// vectorised, on CPU and CUDA) instead of six element-wise operations per parameter. The
// state is torch::optim::AdamW's and so is the archive, so checkpoints of either load into
// the other; the same update to float rounding. No amsgrad.
//
// The kernel reads the clip divisor and the skip flag on the device, and the step counts
// it needs live there too (a float32 per parameter, as PyTorch's fused path keeps them).
#include "mlm/train/optim/training_optimizer.h"

namespace mlm::train {

class FusedAdamW : public TrainingOptimizer {
 public:
  FusedAdamW(std::vector<torch::optim::OptimizerParamGroup> param_groups,
             torch::optim::AdamWOptions defaults = {})
      : TrainingOptimizer(std::move(param_groups), std::move(defaults)) {}
  FusedAdamW(std::vector<torch::Tensor> params, torch::optim::AdamWOptions defaults = {})
      : FusedAdamW({torch::optim::OptimizerParamGroup(std::move(params))}, std::move(defaults)) {}

  void step_scaled(const torch::Tensor& grad_divisor, const torch::Tensor& found_inf = {}) override;
};

}  // namespace mlm::train
