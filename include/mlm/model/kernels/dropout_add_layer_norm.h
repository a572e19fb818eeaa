#pragma once
// BERT's post-LN residual step in one pass: LayerNorm(dropout(x) + residual). On the CPU one
// kernel draws the Philox mask, scales, adds, normalises (fp32) and keeps what the backward
// needs (the sum, its mean and inverse deviation per row, the mask); the backward is one
// kernel too. Elsewhere: the ATen composition it replaces.
#include <torch/torch.h>

namespace mlm::model::kernels {

/// x, residual [..., H] (any floating dtypes, x's dropped with probability p when `training`);
/// weight [H], bias [H] or undefined (fp32). Returns fp32 [..., H]:
/// layer_norm(dropout(x) + residual) with eps, as LayerNormImpl computes it.
torch::Tensor dropout_add_layer_norm(const torch::Tensor& x, const torch::Tensor& residual,
                                     const torch::Tensor& weight, const torch::Tensor& bias,
                                     double p, double eps, bool training);

}  // namespace mlm::model::kernels
