#pragma once
// The MLM loss over the scored positions in one pass per row, for the CPU: the logits are read
// in their own dtype (bf16 under autocast) with no fp32 copy, the padded vocabulary columns are
// skipped rather than sliced off, and the row's maximum, log-sum-exp, argmax (accuracy) and
// loss come out of two sweeps; the backward writes softmax - one-hot in the logits' dtype in
// one sweep. Elsewhere: the ATen composition (cast, cross_entropy, argmax).
#include <torch/torch.h>

namespace mlm::model::kernels {

struct MaskedLmLoss {
  torch::Tensor loss_sum;  // fp32 scalar: sum over rows of -log softmax(row)[label]
  torch::Tensor correct;   // int64 scalar: rows whose argmax (first maximum) is the label
};

/// logits [M, padded_vocab] (any floating dtype), of which the first `vocab` columns are real;
/// labels [M] in [0, vocab). loss_sum is differentiable with respect to logits.
MaskedLmLoss masked_lm_loss(const torch::Tensor& logits, int64_t vocab, const torch::Tensor& labels);

}  // namespace mlm::model::kernels
