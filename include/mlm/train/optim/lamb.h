#pragma once
// LAMB (You et al. 2019, "Large Batch Optimization for Deep Learning: Training BERT in 76
// Minutes") as NVIDIA's BERT recipe runs it (apex's FusedLAMB): per tensor,
//   m, v     Adam's moving averages, m^ = m / (1 - beta1^t), v^ = v / (1 - beta2^t)
//            (bias_correction off: m^ = m, v^ = v)
//   update   u = m^ / (sqrt(v^) + eps) + weight_decay * w
//   ratio    ||w|| / ||u||, 1 when either norm is 0
//   w       -= lr * ratio * u
// As in apex, the trust ratio applies to the groups with a weight decay (or to all of them
// with adapt_no_decay, apex's use_nvlamb): the no-decay group (biases, LayerNorm) gets
// neither decay nor ratio, and with weight_decay 0 everywhere LAMB is Adam. The recipe's
// global gradient pre-normalisation is the training step's clipping (optim.max_grad_norm).
#include "mlm/train/optim/training_optimizer.h"

namespace mlm::train {

struct LambSettings {
  bool bias_correction = true;
  bool adapt_no_decay = false;  // the trust ratio on the groups without decay too
};

class Lamb : public TrainingOptimizer {
 public:
  Lamb(std::vector<torch::optim::OptimizerParamGroup> param_groups,
       torch::optim::AdamWOptions defaults, LambSettings settings);
  void step_scaled(const torch::Tensor& grad_divisor, const torch::Tensor& found_inf = {}) override;

 private:
  LambSettings settings_;
};

}  // namespace mlm::train
