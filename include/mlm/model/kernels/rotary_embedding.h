#pragma once
// Rotary position embeddings applied in one pass each way. The composition it replaces (cast
// to fp32, rotate_half by narrow / neg / cat, two products, a sum, the cast back) makes seven
// passes forward and as many backward and saves its fp32 operands; the CPU kernel reads the
// strided query or key view of the QKV product directly, keeps only the table for the
// backward, and computes in fp32 as the composition does.
#include <torch/torch.h>

namespace mlm::model::kernels {

/// x [B,A,S,D] (any strides with a unit last stride, any floating dtype; D even) rotated by
/// the fp32 table cos, sin ([S,D], or [B,S,D] per sequence): x * cos + rotate_half(x) * sin,
/// rotate_half(x) = cat(-x[D/2:], x[:D/2]); in x's dtype, laid out [B,S,A,D] in memory (the
/// QKV product's order; a [B,A,S,D] view), differentiable in x.
/// Elsewhere than the CPU: the ATen composition.
torch::Tensor rotate_by_table(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin);

}  // namespace mlm::model::kernels
