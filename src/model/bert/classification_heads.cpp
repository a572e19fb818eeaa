#include "mlm/model/bert/classification_heads.h"

#include "mlm/model/layers.h"

namespace mlm::model {

torch::Tensor find_hf_tensor(const TensorDict& state, const std::string& key) {
  for (const auto& [k, t] : state)
    if (k == key) return t;
  return {};
}

bool load_linear(const torch::nn::Linear& layer, const TensorDict& state, const std::string& prefix) {
  const auto weight = find_hf_tensor(state, prefix + "weight"), bias = find_hf_tensor(state, prefix + "bias");
  if (!weight.defined() || !bias.defined() || weight.sizes() != layer->weight.sizes()) return false;
  torch::NoGradGuard no_grad;
  layer->weight.copy_(weight);
  layer->bias.copy_(bias);
  return true;
}

void add_linear(TensorDict& out, const torch::nn::Linear& layer, const std::string& prefix) {
  out.emplace_back(prefix + "weight", layer->weight.detach());
  out.emplace_back(prefix + "bias", layer->bias.detach());
}

void normal_init(const torch::nn::Linear& layer, double std) {
  torch::NoGradGuard no_grad;
  layer->weight.normal_(0.0, std);
  layer->bias.zero_();
}

BertClassificationHeadImpl::BertClassificationHeadImpl(BertForPreTraining encoder, bool per_sequence,
                                                       int64_t num_labels)
    : encoder_(std::move(encoder)), per_sequence_(per_sequence) {
  const auto& c = encoder_->config();
  dropout_p_ = c.hidden_dropout_prob;
  if (per_sequence && !encoder_->bert->pooler_dense) {
    pooler = register_module("pooler", torch::nn::Linear(c.hidden_size, c.hidden_size));
    normal_init(pooler, c.initializer_range);
  }
  classifier = register_module("classifier", torch::nn::Linear(c.hidden_size, num_labels));
  normal_init(classifier, c.initializer_range);
}

torch::Tensor BertClassificationHeadImpl::forward(const torch::Tensor& hidden) {
  auto features = hidden;
  if (per_sequence_) {
    const auto& pool = pooler ? pooler : encoder_->bert->pooler_dense;
    features = torch::tanh(linear(pool, hidden.select(1, 0)));
  }
  return linear(classifier, dropout(features, dropout_p_)).to(torch::kFloat32);
}

TensorDict BertClassificationHeadImpl::hf_state_dict() {
  TensorDict out;
  if (pooler) add_linear(out, pooler, "bert.pooler.dense.");
  add_linear(out, classifier, "classifier.");
  return out;
}

bool BertClassificationHeadImpl::load_hf_state_dict(const TensorDict& state) {
  if (!load_linear(classifier, state, "classifier.")) return false;
  if (pooler) load_linear(pooler, state, "bert.pooler.dense.");
  return true;
}

DenseClassificationHeadImpl::DenseClassificationHeadImpl(const config::ModelConfig& c, bool per_sequence,
                                                         int64_t num_labels, Activation activation)
    : per_sequence_(per_sequence), dropout_p_(c.hidden_dropout_prob), activation_(std::move(activation)) {
  if (per_sequence) {
    dense = register_module("dense", torch::nn::Linear(c.hidden_size, c.hidden_size));
    normal_init(dense, c.initializer_range);
  }
  classifier = register_module("classifier", torch::nn::Linear(c.hidden_size, num_labels));
  normal_init(classifier, c.initializer_range);
}

torch::Tensor DenseClassificationHeadImpl::forward(const torch::Tensor& hidden) {
  auto features = dropout(per_sequence_ ? hidden.select(1, 0) : hidden, dropout_p_);
  if (dense) features = dropout(activation_(linear(dense, features)), dropout_p_);
  return linear(classifier, features).to(torch::kFloat32);
}

TensorDict DenseClassificationHeadImpl::hf_state_dict() {
  TensorDict out;
  if (dense) add_linear(out, dense, "classifier.dense.");
  add_linear(out, classifier, classifier_prefix());
  return out;
}

bool DenseClassificationHeadImpl::load_hf_state_dict(const TensorDict& state) {
  if (!load_linear(classifier, state, classifier_prefix())) return false;
  if (dense) load_linear(dense, state, "classifier.dense.");
  return true;
}

}  // namespace mlm::model
