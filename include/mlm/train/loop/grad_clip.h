#pragma once
// Global-norm gradient clipping, as torch.nn.utils.clip_grad_norm_: the norm of all gradients
// together; when it exceeds max_norm every gradient is scaled by max_norm / (norm + 1e-6).
#include <torch/torch.h>

#include <vector>

namespace mlm::train {

/// Returns the global L2 norm before clipping (NaN/inf when a gradient is non-finite, in which
/// case nothing is scaled). max_norm <= 0 only measures.
double clip_grad_norm(const std::vector<torch::Tensor>& params, double max_norm);

}  // namespace mlm::train
