#pragma once
// Self-attention with dropout on the attention probabilities, for the CPU, where
// scaled_dot_product_attention leaves its fused kernel for the unfused math path as soon as
// dropout_p > 0 (and that path upcasts bf16 to fp32 and draws the mask on one thread):
//   scores = q k^T (one batched product in the inputs' dtype: bf16 stays bf16)
//   P = softmax(scores / sqrt(D) + bias), Pd = P * keep / (1 - p)   one fused kernel, fp32 inside,
//                                                                    a Philox mask per row
//   out = Pd v
// and a backward of two products, one fused kernel (dropout and softmax backward) and two
// products. Without dropout the same path trains while the [B,A,R,S] probabilities are small
// (the CPU's flash-attention backward is slower than these products); elsewhere, in
// inference and for long sequences: scaled_dot_product_attention.
#include <torch/torch.h>

namespace mlm::model::kernels {

/// q [B,A,R,D], k and v [B,A,S,D] (one floating dtype), bias additive and broadcastable to
/// [B,1,R,S] ([B or 1, 1, R or 1, S]) or undefined; dropout p on the probabilities.
/// Returns [B,A,R,D] in q's dtype.
torch::Tensor attention_with_dropout(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                     const torch::Tensor& bias, double p);

}  // namespace mlm::model::kernels
