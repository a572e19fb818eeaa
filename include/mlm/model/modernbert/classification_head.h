#pragma once
// ModernBertFor{Sequence,Token}Classification's head: [CLS] (sequence tasks) or every token,
// the MLM head's dense + activation + norm (the encoder's own, as transformers reuses them),
// dropout (classifier_dropout 0), classifier; the classifier ~ normal(0, 1/sqrt(H)) truncated
// at initializer_cutoff_factor, as transformers initialises it.
#include "mlm/model/architecture_spec.h"
#include "mlm/model/modernbert/modernbert.h"

namespace mlm::model {

class ModernBertClassificationHeadImpl : public ClassificationHeadImpl {
 public:
  ModernBertClassificationHeadImpl(ModernBertForMaskedLM encoder, bool per_sequence, int64_t num_labels);
  torch::Tensor forward(const torch::Tensor& hidden) override;
  TensorDict hf_state_dict() override;
  bool load_hf_state_dict(const TensorDict& state) override;

 private:
  ModernBertForMaskedLM encoder_;  // its head's dense and norm
  bool per_sequence_;
  torch::nn::Linear classifier{nullptr};
};

}  // namespace mlm::model
