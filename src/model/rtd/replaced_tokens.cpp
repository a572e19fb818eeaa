#include "mlm/model/rtd/replaced_tokens.h"

namespace mlm::model {

CorruptedInput corrupt(const torch::Tensor& input_ids, const torch::Tensor& positions,
                       const torch::Tensor& labels, const torch::Tensor& samples) {
  torch::NoGradGuard no_grad;
  CorruptedInput out;
  out.input_ids = input_ids.reshape(-1).index_copy(0, positions, samples).view(input_ids.sizes());
  out.replaced = torch::zeros(input_ids.sizes(), input_ids.options().dtype(torch::kBool));
  out.replaced.view(-1).index_copy_(0, positions, samples.ne(labels));
  return out;
}

void score_replaced(const torch::Tensor& logits, const CorruptedInput& corrupted,
                    const torch::Tensor& token_mask, const torch::Tensor& samples,
                    const torch::Tensor& labels, MlmOutput& out) {
  const auto x = logits.to(torch::kFloat32);
  const auto target = corrupted.replaced.to(torch::kFloat32);
  const auto tokens = token_mask.defined() ? token_mask.to(torch::kBool) : torch::ones_like(corrupted.replaced);
  // Padding is weighted 0, so it adds nothing to the loss nor to its gradient.
  out.rtd_loss_sum = torch::binary_cross_entropy_with_logits(x, target, tokens.to(torch::kFloat32),
                                                             /*pos_weight=*/{}, at::Reduction::Sum);
  torch::NoGradGuard no_grad;
  const auto called = x.detach().gt(0) & tokens;
  const auto replaced = corrupted.replaced & tokens;
  out.rtd_correct = (called.eq(replaced) & tokens).sum();
  out.rtd_true_positives = (called & replaced).sum();
  out.rtd_predicted = called.sum();
  out.rtd_replaced = replaced.sum();
  out.generator_hits = samples.eq(labels).sum();
}

}  // namespace mlm::model
