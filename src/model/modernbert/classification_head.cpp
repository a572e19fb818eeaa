#include "mlm/model/modernbert/classification_head.h"

#include <cmath>

#include "mlm/model/bert/classification_heads.h"
#include "mlm/model/layers.h"

namespace mlm::model {

ModernBertClassificationHeadImpl::ModernBertClassificationHeadImpl(ModernBertForMaskedLM encoder, bool per_sequence,
                                                                   int64_t num_labels)
    : encoder_(std::move(encoder)), per_sequence_(per_sequence) {
  const auto& c = encoder_->config();
  classifier = register_module("classifier", torch::nn::Linear(c.hidden_size, num_labels));
  torch::NoGradGuard no_grad;
  truncated_normal_(classifier->weight, 1.0 / std::sqrt(static_cast<double>(c.hidden_size)),
                    c.initializer_cutoff_factor);
  classifier->bias.zero_();
}

torch::Tensor ModernBertClassificationHeadImpl::forward(const torch::Tensor& hidden) {
  auto& m = *encoder_;
  auto features = per_sequence_ ? hidden.select(1, 0) : hidden;
  features = m.head_norm(activation(linear(m.head_dense, features), m.config().classifier_activation));
  return linear(classifier, dropout(features, /*classifier_dropout=*/0.0)).to(torch::kFloat32);
}

TensorDict ModernBertClassificationHeadImpl::hf_state_dict() {
  TensorDict out;
  add_linear(out, classifier, "classifier.");
  return out;
}

bool ModernBertClassificationHeadImpl::load_hf_state_dict(const TensorDict& state) {
  return load_linear(classifier, state, "classifier.");
}

}  // namespace mlm::model
