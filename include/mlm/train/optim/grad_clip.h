#pragma once
// Global-norm gradient clipping, as torch.nn.utils.clip_grad_norm_: the norm of all gradients
// together; when it exceeds max_norm every gradient is scaled by max_norm / (norm + 1e-6).
// The training step folds that scale into the optimizer's kernel (TrainingOptimizer::step_scaled)
// instead of a pass over every gradient, the norm never leaving the device; clip_grad_norm
// does it in place.
#include <torch/torch.h>

#include <vector>

namespace mlm::train {

/// The global L2 norm of the defined gradients: a 0-d fp32 tensor on their device (no host
/// read), 0 when there are none.
torch::Tensor global_grad_norm(const std::vector<torch::Tensor>& params);

/// What clipping divides the gradients by: (norm + 1e-6) / max_norm when norm exceeds max_norm,
/// else 1; also 1 when max_norm <= 0 (measure only) or the norm is not finite.
double clip_divisor(double norm, double max_norm);

/// clip_divisor() on the device, without a host read: the same formula in float64, so the same
/// value bit for bit. `norm`: a 0-d tensor (global_grad_norm); returns a 0-d float64 tensor.
torch::Tensor clip_divisor(const torch::Tensor& norm, double max_norm);

/// Returns the global L2 norm before clipping (NaN/inf when a gradient is non-finite, in which
/// case nothing is scaled) and scales the gradients in place. max_norm <= 0 only measures.
double clip_grad_norm(const std::vector<torch::Tensor>& params, double max_norm);

}  // namespace mlm::train
