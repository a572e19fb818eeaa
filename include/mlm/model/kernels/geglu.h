#pragma once
// A gated feed-forward's middle in one pass each way: act(input) * gate, where the input and
// the gate are the two halves of one projection's output (ModernBERT's Wi). The composition
// it replaces makes five passes forward and backward (activation, product, the product's two
// gradients, the activation's) and a sixth to concatenate the halves' gradients; the CPU
// kernel reads the projection once and writes its gradient once, fp32 inside.
#include <torch/torch.h>

#include "mlm/config/sections/model.h"

namespace mlm::model::kernels {

/// projected [..., 2I] (input = the first I columns, gate = the last I) -> [..., I] in its
/// dtype: act(input) * gate, differentiable. Elsewhere than the CPU: the ATen composition.
torch::Tensor gated_activation(const torch::Tensor& projected, config::Activation act);

}  // namespace mlm::model::kernels
