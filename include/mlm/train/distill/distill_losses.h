#pragma once
// The distillation losses as sums, in fp32 whatever the autocast: the trainer divides each by
// the step's global count (distiller.h) so that accumulation and data parallelism equal one
// big batch. Formulas as the papers give them (DistilBERT, Sanh et al. 2019; MiniLMv2, Wang et
// al. 2021), checked against a PyTorch transcription in tests/train/distill_losses_test.cpp.
#include <torch/torch.h>

#include <cstdint>

namespace mlm::train::distill {

/// Sum over rows of T^2 * KL(softmax(teacher/T) || softmax(student/T)): logits [N, V].
torch::Tensor kl_loss_sum(const torch::Tensor& student_logits, const torch::Tensor& teacher_logits,
                          double temperature);

/// Sum over the real tokens (`real` [B,S] bool) of 1 - cos(student, teacher): hidden states
/// [B,S,H] of one width.
torch::Tensor cosine_loss_sum(const torch::Tensor& student_hidden, const torch::Tensor& teacher_hidden,
                              const torch::Tensor& real);

/// MiniLMv2's self-attention relations: q|k|v [B,S,3H] of each model (its own H) split into
/// `heads` relation heads of H/heads; for each of q-q, k-k, v-v, R = softmax(X X^T / sqrt(d_r))
/// over the row's real keys; the sum over relations, heads and real query tokens of
/// KL(R_teacher row || R_student row). Divided by heads * tokens it is the paper's loss.
torch::Tensor relation_loss_sum(const torch::Tensor& student_qkv, const torch::Tensor& teacher_qkv,
                                const torch::Tensor& real, int64_t heads);

}  // namespace mlm::train::distill
