#pragma once
// The first half of a step that LAMB and StableAdamW share with Adam: the step counts, the
// gradients as the step sees them, the moving averages and their bias corrections, all on
// the device. A skipped step (found_inf 1) must change nothing, and its gradients hold
// inf/NaN that 0 * g would not silence, so they are replaced by zeros and every change is
// scaled by `keep` (0 then): the moments stay bit for bit, the corrections stay finite.
#include <torch/torch.h>

#include <vector>

namespace mlm::train {

struct AdamMoments {
  std::vector<torch::Tensor> grads;             // grad / divisor, zeros on a skipped step; may
                                                // be the .grad tensors themselves: read only
  std::vector<torch::Tensor> bias_correction1;  // per tensor, 0-d: 1 - beta1^t (or 1)
  std::vector<torch::Tensor> bias_correction2;  // 1 - beta2^t (or 1)
  torch::Tensor keep;                           // 0-d: 1, or 0 on a skipped step
};

/// Counts the step (steps += keep), then exp_avg = beta1 m + (1 - beta1) g and
/// exp_avg_sq = beta2 v + (1 - beta2) g^2 in place, on the gradients divided by
/// `grad_divisor` (undefined: 1); nothing moves where `found_inf` (undefined: 0) is 1.
/// The corrections use max(t, 1), so a skip before the first step divides by no zero.
AdamMoments advance_moments(const std::vector<torch::Tensor>& grads,
                            const std::vector<torch::Tensor>& exp_avgs,
                            const std::vector<torch::Tensor>& exp_avg_sqs,
                            const std::vector<torch::Tensor>& steps, double beta1, double beta2,
                            bool bias_correction, const torch::Tensor& grad_divisor,
                            const torch::Tensor& found_inf);

}  // namespace mlm::train
