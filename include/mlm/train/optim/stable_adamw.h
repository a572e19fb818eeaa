#pragma once
// StableAdamW (Wortsman et al. 2023, "Stable and low-precision training for large-scale
// vision-language models") as ModernBERT trains with it (optimi's StableAdamW with
// decouple_lr): AdamW whose learning rate is clipped per tensor by the RMS of the update
// ratio, Adafactor's update clipping,
//   rms      sqrt(mean(g^2 / max(v^, eps^2)))     (v^ bias-corrected, g this step's gradient)
//   lr_t     lr / max(1, rms)
//   decay    w *= 1 - lr_t / max_lr * weight_decay   (decouple_lr; else 1 - lr_t * weight_decay)
//   step     w -= lr_t * m^ / (sqrt(v^) + eps)
// With decouple_lr the decay follows the schedule's shape but not its scale: weight_decay is
// the decay per step at the peak learning rate max_lr. optimi keeps the moments already
// bias-corrected (its "debiased betas"); here they are Adam's raw averages, corrected when
// used, the same values to rounding, so the state is AdamW's.
#include "mlm/train/optim/training_optimizer.h"

namespace mlm::train {

struct StableAdamWSettings {
  bool decouple_lr = true;  // the decay scaled by lr / max_lr instead of by lr
  double max_lr = 0;        // the schedule's peak (optim.learning_rate); decouple_lr only
};

class StableAdamW : public TrainingOptimizer {
 public:
  StableAdamW(std::vector<torch::optim::OptimizerParamGroup> param_groups,
              torch::optim::AdamWOptions defaults, StableAdamWSettings settings);
  void step_scaled(const torch::Tensor& grad_divisor, const torch::Tensor& found_inf = {}) override;

 private:
  StableAdamWSettings settings_;
};

}  // namespace mlm::train
